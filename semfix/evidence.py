"""What the file itself shows about semaphore Refs, gathered in one pass before rewriting.

The transformer asks three questions it cannot answer locally: is `sems` in `sems[i]` a Ref
(SEM002), does a variable only carry a value read from a Ref to semaphore arguments (SEM003),
and is a finding silenced by a `# semfix: ignore` comment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    Assignment,
    BaseAssignment,
    ComprehensionScope,
    ExpressionContext,
    ExpressionContextProvider,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

from semfix.catalog import PALLAS_CALL, PARTIAL, RUN_SCOPED
from semfix.resolve import (
    Resolver,
    is_at,
    read_target,
    semaphore_arguments,
)
from semfix.text import Suppressions, note_suppression, suppressed


class Kind(Enum):
    """What a name holds, as far as the file shows."""

    ARRAY = "an array of semaphores in one Ref"
    TUPLE = "a Python tuple or list of separate Refs"
    UNKNOWN = "unknown"


@dataclass
class CarriedRead:
    """`v = X[...]` whose `v` reaches semaphore arguments (SEM003)."""

    statement: cst.SimpleStatementLine
    variable: str
    ref: cst.BaseExpression  # X, the Ref the value was read from
    read_line: int
    uses: list[cst.Name]
    blocker: str | None  # why the rewrite is not safe; None when it is


@dataclass
class Evidence:
    semaphore_args: set[cst.CSTNode] = field(default_factory=set)
    param_kinds: dict[cst.Param, Kind] = field(default_factory=dict)
    proven_refs: set[object] = field(default_factory=set)
    carried: dict[cst.Name, CarriedRead] = field(default_factory=dict)
    suppressions: Suppressions = field(default_factory=dict)
    pallas_alias: str | None = None  # a module-level name bound to jax.experimental.pallas

    def suppressed(self, code: str, lines: Iterable[int]) -> bool:
        return suppressed(self.suppressions, code, lines)


def _function_scope(scope: Scope) -> Scope:
    while isinstance(scope, ComprehensionScope) and scope.parent is not scope:
        scope = scope.parent
    return scope


def _allocation_kind(resolver: Resolver, node: cst.BaseExpression) -> Kind:
    """The kind of Ref a scratch-shape or run_scoped entry allocates."""
    if isinstance(node, (cst.Tuple, cst.List)) or m.matches(node, m.BinaryOperation(left=m.List() | m.Tuple())):
        return Kind.TUPLE
    if isinstance(node, cst.Call) and resolver.is_semaphore_type(node.func):
        shape = node.args[0].value if node.args else None
        if shape is not None and not m.matches(shape, m.Tuple(elements=[])):
            return Kind.ARRAY
    return Kind.UNKNOWN


Steps = tuple[str | None, ...]  # the attribute names of `a.b[i].c` after `a`; None for a subscript


def _outward(parent: cst.CSTNode | None, node: cst.CSTNode) -> str | None | bool:
    """The step `parent` adds to the chain ending in `node`; False when it adds none."""
    if isinstance(parent, cst.Attribute) and parent.value is node:
        return parent.attr.value
    if isinstance(parent, cst.Subscript) and parent.value is node:
        return None
    return False


def _code(node: cst.CSTNode) -> str:
    return " ".join(cst.Module([]).code_for_node(node).split())


class Bindings(cst.MetadataDependent):
    """What a name is bound to; shared by the evidence pass and the transformer."""

    METADATA_DEPENDENCIES = (ScopeProvider, ParentNodeProvider, ExpressionContextProvider)
    param_kinds: dict[cst.Param, Kind]
    _changes: dict[int, list[tuple[str, Steps, cst.CSTNode]]]

    def unstable(self, node: cst.BaseExpression) -> str | None:
        """Why `node` may not name the same Ref everywhere in its scope; None when it must.

        Evidence about a Ref expression (SEM002's proof, SEM003's carried read) holds only
        while its base name, each attribute in its chain and each name in its indices keep
        their values. Flow is not followed: a name bound twice anywhere in the scope, or a
        chain written, deleted, called a method on or handed away anywhere its base name is
        seen (nested functions and later loop iterations included), voids the evidence.
        """
        for root in m.findall(node, m.Name()):
            parent = self.get_metadata(ParentNodeProvider, root, None)
            if isinstance(parent, cst.Attribute) and parent.attr is root:
                continue
            steps: list[str | None] = []
            current: cst.CSTNode = root
            while current is not node and (step := _outward(parent, current)) is not False:
                steps.append(step)  # type: ignore[arg-type]
                current, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)  # type: ignore[assignment]
            reason = self._root_unstable(root, current, tuple(steps))  # type: ignore[arg-type]
            if reason is not None:
                return reason
        return None

    def _root_unstable(self, root: cst.Name, top: cst.CSTNode, watched: Steps) -> str | None:
        scope = self.get_metadata(ScopeProvider, root, None)
        assignments = list(scope[root.value]) if scope is not None else []
        if len(assignments) > 1:
            return f"`{root.value}` is reassigned, so the Ref could differ at the use"
        if not watched:
            return None
        if not assignments:
            return f"`{_code(top)}` may be changed outside this file"
        for how, changed, where in self._changes_of(assignments[0]):
            through = watched[: len(changed)] == changed
            if how == "write" and through:
                return f"`{_code(top)}` may be rebound: `{_code(where)}` is assigned or deleted"
            if how == "handed" and through and len(changed) < len(watched):
                return f"`{_code(top)}` may be rebound by other code given `{_code(where)}`"
        return None

    def _changes_of(self, assignment: BaseAssignment) -> list[tuple[str, Steps, cst.CSTNode]]:
        """Every place the name's value, or a chain under it, may change: ("write", chain) for a
        store or `del` target, ("handed", object) for an object given to code that may change
        anything under it: a call's receiver, an argument, a container stored into, or any
        other use that is not an attribute or subscript of it. With each, the expression there."""
        if not hasattr(self, "_changes"):
            self._changes = {}
        if id(assignment) not in self._changes:
            found: list[tuple[str, Steps, cst.CSTNode]] = []
            for access in assignment.references:
                top: cst.CSTNode = access.node
                steps: list[str | None] = []
                parent = self.get_metadata(ParentNodeProvider, top, None)
                while (step := _outward(parent, top)) is not False:
                    steps.append(step)  # type: ignore[arg-type]
                    top, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)  # type: ignore[assignment]
                context = self.get_metadata(ExpressionContextProvider, top, None)
                if context in (ExpressionContext.STORE, ExpressionContext.DEL):
                    found.append(("write", tuple(steps), top))
                    if steps and steps[-1] is None:  # `X[i] = v` runs X's own code
                        found.append(("handed", tuple(steps[:-1]), top.value))  # type: ignore[attr-defined]
                elif isinstance(parent, cst.Call) and parent.func is top and steps:
                    found.append(("handed", tuple(steps[:-1]), top.value))  # type: ignore[attr-defined]
                else:
                    found.append(("handed", tuple(steps), top))
            self._changes[id(assignment)] = found
        return self._changes[id(assignment)]

    def key(self, node: cst.BaseExpression) -> object | None:
        """An identity for the Ref an expression names: its bindings for a name, else its text.

        None when the expression may name different things in its scope (`unstable`).
        """
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None or self.unstable(node) is not None:
            return None
        if isinstance(node, cst.Name):
            assignments = scope[node.value]
            return frozenset(id(a) for a in assignments) or ("free", node.value)
        if isinstance(node, cst.Attribute):
            text = cst.Module([]).code_for_node(node.with_changes(lpar=[], rpar=[]))
            return ("text", id(_function_scope(scope)), "".join(text.split()))
        return None

    def kind(self, node: cst.BaseExpression) -> Kind:
        if not isinstance(node, cst.Name):
            return Kind.UNKNOWN
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return Kind.UNKNOWN
        kinds = {self._binding_kind(a) for a in scope[node.value]}
        if Kind.TUPLE in kinds:
            return Kind.TUPLE
        return Kind.ARRAY if kinds == {Kind.ARRAY} else Kind.UNKNOWN

    def _binding_kind(self, assignment: BaseAssignment) -> Kind:
        if not isinstance(assignment, Assignment):
            return Kind.UNKNOWN
        node = assignment.node
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if isinstance(node, cst.Param):
            if isinstance(parent, cst.Parameters) and parent.star_arg is node:
                return Kind.TUPLE
            return self.param_kinds.get(node, Kind.UNKNOWN)
        if isinstance(parent, (cst.Element, cst.StarredElement)):  # a target in `(a, *b) = ...`
            return Kind.TUPLE
        if isinstance(parent, cst.AssignTarget):
            statement = self.get_metadata(ParentNodeProvider, parent, None)
            if isinstance(statement, cst.Assign) and isinstance(statement.value, (cst.Tuple, cst.List)):
                return Kind.TUPLE
        return Kind.UNKNOWN


class EvidenceCollector(Bindings, Resolver, cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, ScopeProvider, ParentNodeProvider, PositionProvider)

    def __init__(self) -> None:
        super().__init__()
        self.evidence = Evidence()
        self.param_kinds = self.evidence.param_kinds
        self._kernels: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        self._scoped: list[tuple[cst.CSTNode, list[cst.Arg]]] = []
        self._reads: list[tuple[cst.Assign, cst.Name, cst.BaseExpression]] = []

    # -- collection -----------------------------------------------------------------------
    def visit_Comment(self, node: cst.Comment) -> None:
        if "semfix" in node.value:
            line = self.get_metadata(PositionProvider, node).start.line
            note_suppression(self.evidence.suppressions, line, node.value)

    def visit_Import(self, node: cst.Import) -> None:
        if self._at_module_level(node):
            for alias in node.names:
                if alias.evaluated_name == "jax.experimental.pallas" and alias.evaluated_alias:
                    self.evidence.pallas_alias = self.evidence.pallas_alias or alias.evaluated_alias

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        if cst.Module([]).code_for_node(node.module) == "jax.experimental" and self._at_module_level(node):
            for alias in node.names:
                if alias.evaluated_name == "pallas":
                    self.evidence.pallas_alias = self.evidence.pallas_alias or alias.evaluated_alias or "pallas"

    def _at_module_level(self, node: cst.CSTNode) -> bool:
        line = self.get_metadata(ParentNodeProvider, node, None)
        return isinstance(self.get_metadata(ParentNodeProvider, line, None), cst.Module)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if is_at(node.value):
            proof = self.key(node.value.value)  # type: ignore[attr-defined]
        else:
            target = read_target(node)
            proof = self.key(target) if target is not None else None
        if proof is not None:
            self.evidence.proven_refs.add(proof)

    def visit_Call(self, node: cst.Call) -> None:
        operation = self.operation(node.func)
        if operation is not None:
            for index in semaphore_arguments(operation, node.args):
                self.evidence.semaphore_args.add(node.args[index].value)
        elif self.resolves_to(node.func, PALLAS_CALL):
            self._note_pallas_call(node)
        elif self.resolves_to(node.func, RUN_SCOPED) and node.args:
            self._scoped.append((node.args[0].value, list(node.args[1:])))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            call = decorator.decorator
            if (
                isinstance(call, cst.Call)
                and self.resolves_to(call.func, PARTIAL)
                and call.args
                and self.resolves_to(call.args[0].value, RUN_SCOPED)
            ):
                self._scoped.append((node, list(call.args[1:])))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            ref = read_target(node.value)
            if ref is not None:
                self._reads.append((node, node.targets[0].target, ref))

    def _note_pallas_call(self, node: cst.Call) -> None:
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        kernel = keywords.get("kernel", positional[0] if positional else None)
        scratch = keywords.get("scratch_shapes")
        grid_spec = keywords.get("grid_spec")
        if scratch is None and isinstance(grid_spec, cst.Call):
            scratch = next((a.value for a in grid_spec.args if a.keyword and a.keyword.value == "scratch_shapes"), None)
        if kernel is not None and scratch is not None:
            self._kernels.append((kernel, scratch))

    def leave_Module(self, original_node: cst.Module) -> None:
        for kernel, scratch in self._kernels:
            self._bind_scratch(kernel, scratch)
        for body, allocations in self._scoped:
            self._bind_scoped(body, allocations)
        for assign, name, ref in self._reads:
            self._plan_carried(assign, name, ref)

    # -- allocations ----------------------------------------------------------------------
    def _function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The function a kernel or body expression names in this file (through partial too)."""
        if isinstance(node, cst.FunctionDef):
            return node
        if isinstance(node, cst.Call) and self.resolves_to(node.func, PARTIAL) and node.args:
            return self._function(node.args[0].value)
        if isinstance(node, cst.Name):
            scope = self.get_metadata(ScopeProvider, node, None)
            if scope is not None:
                defs = [a.node for a in scope[node.value] if isinstance(a, Assignment)]
                if len(defs) == 1 and isinstance(defs[0], cst.FunctionDef):
                    return defs[0]
        return None

    def _set_kind(self, param: cst.Param, kind: Kind) -> None:
        previous = self.evidence.param_kinds.get(param)
        self.evidence.param_kinds[param] = kind if previous in (None, kind) else Kind.UNKNOWN

    def _literal_entries(self, node: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        if isinstance(node, cst.Name):  # scratch_shapes=shapes, with `shapes = [...]` assigned once
            scope = self.get_metadata(ScopeProvider, node, None)
            assigned = [a.node for a in scope[node.value]] if scope is not None else []
            parent = self.get_metadata(ParentNodeProvider, assigned[0], None) if len(assigned) == 1 else None
            statement = self.get_metadata(ParentNodeProvider, parent, None) if parent is not None else None
            if not (isinstance(parent, cst.AssignTarget) and isinstance(statement, cst.Assign)):
                return None
            node = statement.value
        if not isinstance(node, (cst.List, cst.Tuple)):
            return None
        if any(isinstance(e, cst.StarredElement) for e in node.elements):
            return None
        return [e.value for e in node.elements]

    def _bind_scratch(self, kernel: cst.BaseExpression, scratch: cst.BaseExpression) -> None:
        function, entries = self._function(kernel), self._literal_entries(scratch)
        if function is None or entries is None or not entries:
            return
        params = [*function.params.posonly_params, *function.params.params]
        if isinstance(function.params.star_arg, cst.Param) or len(entries) > len(params):
            return
        for param, entry in zip(params[len(params) - len(entries) :], entries):
            self._set_kind(param, _allocation_kind(self, entry))

    def _bind_scoped(self, body: cst.CSTNode, allocations: list[cst.Arg]) -> None:
        function = self._function(body)
        if function is None:
            return
        params = [*function.params.posonly_params, *function.params.params]
        by_name = {p.name.value: p for p in [*params, *function.params.kwonly_params]}
        position = 0
        for arg in allocations:
            if arg.star:
                return
            if arg.keyword is not None:
                param = by_name.get(arg.keyword.value)
            else:
                param = params[position] if position < len(params) else None
                position += 1
            if param is not None:
                self._set_kind(param, _allocation_kind(self, arg.value))

    # -- values carried through a variable (SEM003) ----------------------------------------
    def _plan_carried(self, assign: cst.Assign, name: cst.Name, ref: cst.BaseExpression) -> None:
        scope = self.get_metadata(ScopeProvider, name, None)
        if scope is None:
            return
        own = [a for a in scope.assignments[name.value] if isinstance(a, Assignment)]
        mine = next((a for a in own if a.node is name), None)
        if mine is None:
            return
        uses = [access.node for access in mine.references if access.node in self.evidence.semaphore_args]
        if not uses:
            return
        statement = self.get_metadata(ParentNodeProvider, assign)
        blocker = self._carried_blocker(assign, statement, scope, mine, own, ref, uses)
        line = self.get_metadata(PositionProvider, assign).start.line
        plan = CarriedRead(statement, name.value, ref, line, uses, blocker)  # one plan, shared by its uses
        self.evidence.carried.update((use, plan) for use in uses)

    def _carried_blocker(
        self,
        assign: cst.Assign,
        statement: cst.CSTNode,
        scope: Scope,
        mine: Assignment,
        own: list[Assignment],
        ref: cst.BaseExpression,
        uses: list[cst.Name],
    ) -> str | None:
        variable = mine.name
        if len(own) > 1 or len(scope[variable]) > 1:
            return f"`{variable}` is assigned more than once"
        if len(uses) != len(mine.references):
            return f"`{variable}` is also used for something else"
        if any(access.scope is not scope or len(access.referents) != 1 for access in mine.references):
            return f"`{variable}` is used in a nested scope"
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            return "the assignment shares its line with other statements"
        if m.findall(statement, m.Comment()) or any(line.comment for line in statement.leading_lines):
            return "a comment on the assignment would be lost"
        if m.findall(ref, m.Call()) or not isinstance(ref, (cst.Name, cst.Attribute, cst.Subscript)):
            return "the Ref expression is not a plain name or view"
        if isinstance(ref, cst.Subscript) and not is_at(ref.value):
            return "the Ref expression reads an element"
        rebound = self.unstable(ref)
        if rebound is not None:
            return rebound
        block = self.get_metadata(ParentNodeProvider, statement, None)
        for use in uses:
            if not self._inside(use, block):
                return f"`{variable}` is assigned conditionally"
        return None

    def _inside(self, node: cst.CSTNode, ancestor: cst.CSTNode | None) -> bool:
        current: cst.CSTNode | None = node
        while current is not None:
            if current is ancestor:
                return True
            current = self.get_metadata(ParentNodeProvider, current, None)
        return False
