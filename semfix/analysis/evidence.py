"""What the file shows about its Refs: resolution, allocations, proofs, and their stability.

`Evidence` is computed once per file and cached, and rules read it through their `Context`
(semfix/analysis/context.py): imports resolved to qualified names and catalog operations; kernels'
scratch shapes and `run_scoped` allocations giving parameters a kind (one semaphore, or a
tuple or array of them); `X.at[...]` and `X[...]` elsewhere proving X a Ref; and whether a
Ref expression keeps its value where that evidence is used.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections.abc import Iterator
from enum import Enum
from typing import TYPE_CHECKING

from semfix.analysis.nodes import (
    Steps,
    has_slice,
    is_at,
    read_target,
    source_order,
    unchain,
)
from semfix.analysis.scopes import Scope, Tracking
from semfix.catalog import (
    CORE_MAP,
    FUNCTION_NAMES,
    GRID_SPECS,
    PALLAS_CALL,
    PALLAS_CALL_POSITIONAL,
    PARTIAL,
    RUN_SCOPED,
    SEMAPHORE_KINDS,
    SEMAPHORE_TYPE_OWNERS,
    Operation,
    lookup,
)

if TYPE_CHECKING:
    from semfix.analysis.nodes import Text
    from semfix.analysis.scopes import ScopeBuilder


class Kind(Enum):
    ARRAY = "array"
    TUPLE = "tuple"
    UNKNOWN = "unknown"


class NeedsAccesses(Exception):
    """The engine needs the accesses `Tracking` records: build them and run again."""


class Evidence:
    """Resolution and evidence for one file, each computed on first use and cached."""

    def __init__(self, text: Text, scopes: ScopeBuilder) -> None:
        self.text, self.scopes = text, scopes
        self.param_kinds: dict[int, Kind] = {}
        # the semaphore kind JAX allocates for a parameter, with the allocation; None: not one kind
        self.param_semaphores: dict[int, tuple[str, ast.expr] | None] = {}
        self.proven: set[object] | None = None
        self.operations: dict[int, Operation | None] = {}
        self.proof_sites: dict[object, list[tuple[ast.expr, Scope]]] = {}  # attribute-chain proofs
        self._changes: dict[int, list[tuple[str, Steps, ast.expr]]] = {}

    # -- resolution ---------------------------------------------------------------------
    def qualified(self, node: ast.expr, scope: Scope) -> set[str] | None:
        root, steps, _ = unchain(node)
        if not isinstance(root, ast.Name) or None in steps:
            return None
        _, bindings = scope.lookup(root.id)
        if not bindings or any(b.kind != "import" for b in bindings):
            return None
        suffix = "".join(f".{p}" for p in steps)
        return {f"{b.qualname}{suffix}" for b in bindings}

    def resolves_to(self, node: ast.expr, scope: Scope, targets: frozenset[str]) -> bool:
        if isinstance(node, ast.Attribute) and node.attr not in _last_parts(targets):
            return False  # a qualified name ends in the attribute itself: no need to resolve
        names = self.qualified(node, scope)
        return bool(names) and names <= targets  # type: ignore[operator]

    def operation(self, call: ast.Call) -> Operation | None:
        """The catalog operation the call runs: called by its JAX name, by a name bound once to
        it (`wait = pl.semaphore_wait; wait(sem, 1)`), or through `functools.partial`, whose
        positional arguments come after the function (`partial(pl.semaphore_wait, sem)`)."""
        if isinstance(call.func, ast.Attribute) and call.func.attr not in FUNCTION_NAMES | _PARTIAL_NAMES:
            return None
        if id(call) not in self.operations:
            scope = self.scopes.scope_of[id(call)]
            operation = self._catalog_function(call.func, scope)
            if operation is None and call.args and self.resolves_to(call.func, scope, PARTIAL):
                operation = self._catalog_function(call.args[0], scope)
                operation = operation and operation.through_partial()
            self.operations[id(call)] = operation
        return self.operations[id(call)]

    def _catalog_function(self, node: ast.expr, scope: Scope, alias: bool = True) -> Operation | None:
        """The catalog function `node` names: through the imports, or (with `alias`) a local or
        module name bound once, by `name = <such a function>`, and never declared global."""
        if alias and isinstance(node, ast.Name):
            owner, bindings = scope.lookup(node.id)
            if len(bindings) == 1 and bindings[0].kind == "assign" and not bindings[0].declared and owner is not None:
                return self._catalog_function(bindings[0].node.value, owner, alias=False)  # type: ignore[union-attr]
        operations = {lookup(name) for name in self.qualified(node, scope) or ()}
        return operations.pop() if len(operations) == 1 and None not in operations else None

    def key(self, node: ast.expr, scope: Scope) -> object | None:
        """What names one Ref wherever it is written in this scope (proofs are kept by it); None
        for anything but a name bound at most once, or an attribute chain. A chain is compared
        as text, in its function, and with the scope each name in it resolves to: the same text
        in a comprehension, lambda or class body that binds its own `c` is about another object."""
        if isinstance(node, ast.Name):  # a name bound twice may name two things: no evidence
            found, bindings = scope.lookup(node.id)
            if len(bindings) > 1:
                return None
            return ("bound", id(found), node.id) if bindings else ("free", node.id)
        if not isinstance(node, ast.Attribute):
            return None
        resolved = []
        for part in ast.walk(node):
            if isinstance(part, _OWN_SCOPE):  # names inside resolve in a scope of their own
                return None
            if isinstance(part, ast.Name):
                found, bindings = scope.lookup(part.id)
                resolved.append(id(found) if bindings else None)
        return ("text", id(scope.function_scope()), tuple(resolved), "".join(self.text.of(node).split()))

    def kind(self, node: ast.expr, scope: Scope, seen: frozenset[int] = frozenset()) -> Kind:
        """What a name, or a slice of one, holds: a tuple of Refs if any binding makes it one, an
        array only if all do. `seen`: the assignments followed so far (`refs = refs[1:]`)."""
        if has_slice(node):  # a slice of a tuple is a tuple
            return self._tuple(node.value, scope, seen)  # type: ignore[attr-defined]
        if not isinstance(node, ast.Name):
            return Kind.UNKNOWN
        found, bindings = scope.lookup(node.id)
        kinds = set()
        for binding in bindings:
            if binding.kind in ("star_param", "star_unpack", "tuple_literal", "element"):
                kinds.add(Kind.TUPLE)  # a loop's element may differ at each pass: no proof holds for all
            elif binding.kind == "unpack":  # what `a, sems = refs` unpacked: a tuple too, unless shown a Ref
                kinds.add(Kind.UNKNOWN if self.key(node, scope) in self.proofs() else Kind.TUPLE)
            elif binding.kind == "param":
                kinds.add(self.param_kinds.get(id(binding.node), Kind.UNKNOWN))
            elif binding.kind in ("assign", "read") and id(binding) not in seen:  # `bufs = refs[0:2]`, `alias = refs`
                value = binding.node.value  # type: ignore[union-attr]
                kinds.add(self._tuple(value, found, seen | {id(binding)}))  # type: ignore[arg-type]
            else:
                kinds.add(Kind.UNKNOWN)
        return Kind.TUPLE if Kind.TUPLE in kinds else Kind.ARRAY if kinds == {Kind.ARRAY} else Kind.UNKNOWN

    def _tuple(self, node: ast.expr, scope: Scope, seen: frozenset[int]) -> Kind:
        """What a slice of `node`, or a name assigned it, holds: only a tuple carries over (an
        element of an array is not an array)."""
        return Kind.TUPLE if self.kind(node, scope, seen) is Kind.TUPLE else Kind.UNKNOWN

    # -- evidence -----------------------------------------------------------------------
    def proofs(self) -> set[object]:
        """The Refs the file shows to be Refs (`X.at[...]`, `X[...]`); only a rule on element reads asks, so lazily."""
        if self.proven is None:
            self.proven = set()
            for subscript in self.scopes.subscripts:
                scope = self.scopes.scope_of[id(subscript)]
                target = subscript.value.value if is_at(subscript.value) else read_target(subscript)  # type: ignore[attr-defined]
                proof = self.key(target, scope) if target is not None else None
                if proof is not None:
                    self.proven.add(proof)
                    if isinstance(target, ast.Attribute):
                        self.proof_sites.setdefault(proof, []).append((target, scope))
        return self.proven

    def gather(self) -> None:
        """Give kernel and body parameters the kind of what JAX allocates for them: through
        `pallas_call` and `run_scoped` calls, and through what is applied to a body, as a call
        (`pl.core_map(mesh, ...)(body)`) or as the decorator nearest a def."""
        for call in self.scopes.relevant_calls():
            scope = self.scopes.scope_of[id(call)]
            if self.operation(call) is not None:
                continue
            if self.resolves_to(call.func, scope, PALLAS_CALL):
                positional = [a for a in call.args if not isinstance(a, ast.Starred)]
                keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
                kernel = keywords.get("kernel", positional[0] if positional else None)
                if kernel is not None:
                    rest = call.args[1:] if "kernel" not in keywords else call.args
                    self._allocate(PALLAS_CALL, [*rest, *call.keywords], kernel, scope)
            elif self.resolves_to(call.func, scope, RUN_SCOPED) and call.args:
                self._allocate(RUN_SCOPED, source_order(call)[1:], call.args[0], scope)
        for call in self.scopes.calls:
            if isinstance(call.func, ast.Call) and len(call.args) == 1 and not call.keywords:
                scope = self.scopes.scope_of[id(call)]
                applied = self._applied(call.func, scope)
                if applied is not None and not isinstance(call.args[0], ast.Starred):
                    self._allocate(*applied, call.args[0], scope)
        for function in self.scopes.functions:
            if function.decorator_list:  # only the nearest one is given the def itself
                scope = self.scopes.scope_of[id(function)]
                applied = self._applied(function.decorator_list[-1], scope)
                if applied is not None:
                    self._allocate(*applied, function, scope)

    def _allocate(self, allocator: frozenset[str], arguments: list[ast.AST], body: ast.AST, scope: Scope) -> None:
        """Give `body`'s parameters the kinds of what `allocator`, given `arguments`, allocates
        for them. The order calls come in does not matter: a parameter given two kinds is a
        tuple if one is (`.at` would fail there), else has none."""
        keywords = {k.arg: k.value for k in arguments if isinstance(k, ast.keyword) and k.arg is not None}
        if allocator is PALLAS_CALL:
            scratch = self._kernel_allocations(arguments, scope)
            if scratch is None:  # what this call allocates is not known: no kind is proven
                self._unprove(body, scope)
            self._bind(body, scratch or [], scope, last=True)
        elif allocator is RUN_SCOPED:
            allocations = [a for a in arguments if not (isinstance(a, ast.keyword) and a.arg == "collective_axes")]
            self._bind(body, allocations, scope)
        elif "scratch_shapes" in keywords:  # core_map: `body(*scratch_shapes)`, or `body(**scratch_shapes)`
            entries = self._named_entries(keywords["scratch_shapes"]) or self._entries(keywords["scratch_shapes"], scope)
            if entries is not None:
                self._bind(body, entries, scope)
            else:
                self._unprove(body, scope)

    def _kernel_allocations(self, arguments: list[ast.AST], scope: Scope) -> list[ast.expr] | None:
        """What `pallas_call` given `arguments` passes its kernel's last parameters: its outputs
        (where known), then its scratch buffers; None where the scratch buffers are not known.

        JAX passes a kernel its inputs, its outputs as `out_shape`'s pytree gives them, then
        its scratch buffers. Scratch shapes count only as written in `pallas_call` itself or in
        one of JAX's own grid specs: a helper's call, or a variable, may hold more. An output
        that is a pytree node (`(pltpu.SemaphoreType.DMA(()),) * 2`) is a tuple of Refs; any
        other output is given no kind (the skim pairs only scratch shapes with parameters)."""
        given = _bound(arguments, PALLAS_CALL_POSITIONAL)
        keywords = given or {k.arg: k.value for k in arguments if isinstance(k, ast.keyword) and k.arg is not None}
        spec: dict[str, ast.expr] | None = {}
        if "grid_spec" in keywords:
            spec = self._grid_spec(keywords["grid_spec"], scope)
        scratch_shapes = keywords.get("scratch_shapes", (spec or {}).get("scratch_shapes"))
        if scratch_shapes is not None:
            scratch = self._entries(scratch_shapes, scope)
        else:  # none written: none given, unless a `**kwargs` or an unknown grid spec may give some
            scratch = [] if given is not None and spec is not None else None
        if scratch is None:
            return None
        outputs = None
        if given is not None and spec is not None:  # out_specs has out_shape's structure
            written = [keywords.get("out_shape"), keywords.get("out_specs", spec.get("out_specs"))]
            read = (self._entries(w, scope) for w in written if w is not None)
            outputs = next((entries for entries in read if entries is not None), None)
        if outputs is None:
            return scratch
        return [o if self._allocation(o, scope) is Kind.TUPLE else ast.Constant(None) for o in outputs] + scratch

    def _grid_spec(self, node: ast.expr, scope: Scope) -> dict[str, ast.expr] | None:
        """The arguments of a call to one of JAX's grid specs, by parameter name; None for
        anything else, or where a `*args` or `**kwargs` hides which are given."""
        names = self.qualified(node.func, scope) if isinstance(node, ast.Call) else None
        orders = {GRID_SPECS.get(name) for name in names or ()}
        if len(orders) != 1 or None in orders:
            return None
        return _bound(source_order(node), orders.pop())  # type: ignore[arg-type]

    def _applied(self, node: ast.expr, scope: Scope) -> tuple[frozenset[str], list[ast.AST]] | None:
        """What `node(body)` is, when it hands JAX `body` where JAX allocates for it: the JAX
        function and the other arguments it gets. `functools.partial(pl.pallas_call, ...)` and
        `functools.partial(pl.run_scoped, ...)` qualify only with keywords alone (a positional
        argument there would come before the body); `pl.core_map(mesh, ...)` returns a
        decorator. `pl.pallas_call` has no decorator-factory form, and `@pl.run_scoped` alone
        allocates nothing."""
        if not isinstance(node, ast.Call):
            return None
        if self.resolves_to(node.func, scope, PARTIAL) and len(node.args) == 1:
            allocator = next((a for a in (PALLAS_CALL, RUN_SCOPED) if self.resolves_to(node.args[0], scope, a)), None)
            return (allocator, list(node.keywords)) if allocator is not None else None
        return (CORE_MAP, list(node.keywords)) if self.resolves_to(node.func, scope, CORE_MAP) else None

    @staticmethod
    def _named_entries(node: ast.expr) -> list[ast.AST] | None:
        """A dict display of string keys as keyword arguments (core_map passes a dict by name)."""
        if not isinstance(node, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            return None
        return [ast.keyword(arg=k.value, value=v) for k, v in zip(node.keys, node.values)]  # type: ignore[union-attr]

    def _function(self, node: ast.AST, scope: Scope) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, int, set[str]] | None:
        """The def `node` calls, with how many leading parameters and which named ones a
        `functools.partial` around it already gives (None if a `*args` or `**kwargs` there hides that)."""
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node, 0, set()
        if isinstance(node, ast.Call) and node.args and self.resolves_to(node.func, scope, PARTIAL):
            inner = self._function(node.args[0], scope)
            if inner is None or any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                return None
            return inner[0], inner[1] + len(node.args) - 1, inner[2] | {k.arg for k in node.keywords}  # type: ignore[misc]
        if isinstance(node, ast.Name):  # a decorated def's name holds what its decorators returned
            _, bindings = scope.lookup(node.id)
            if len(bindings) == 1 and bindings[0].kind == "def" and not bindings[0].node.decorator_list:  # type: ignore[union-attr]
                return bindings[0].node, 0, set()  # type: ignore[return-value]
        return None

    def _entries(self, node: ast.expr, scope: Scope) -> list[ast.expr] | None:
        """The entries of a list or tuple display (`(x,) * 2` too), or of the one such display
        a name is bound to; None for anything else."""
        if isinstance(node, ast.Name):
            _, bindings = scope.lookup(node.id)
            if len(bindings) != 1 or bindings[0].kind not in ("assign", "tuple_literal", "read"):
                return None
            value = bindings[0].node.value  # type: ignore[union-attr]
            shared = len(getattr(bindings[0].node, "targets", ())) > 1 or self._used_elsewhere(node, scope)
            if isinstance(_display(value)[0], ast.List) and shared:
                return None  # a list with other names or uses may be changed (`SHAPES.append(...)`) before the call
            node = value
        display, times = _display(node)
        if display is None or any(isinstance(e, ast.Starred) for e in display.elts):
            return None
        return list(display.elts) * times

    def _used_elsewhere(self, node: ast.Name, scope: Scope) -> bool:
        """Is the name read anywhere but at `node`? Not when the text spells it only there and
        before `=` (its one binding, keywords): in ASCII text every access spells it, so most
        files need no access tracking."""
        spelled = rf"(?<![\w.]){re.escape(node.id)}(?!\w|\s*=(?!=))"
        if self.text.text.isascii() and len(re.findall(spelled, self.text.text)) <= 1:
            return False
        return any(a.top is not node for a in self.tracking().references(node.id, scope))

    def _allocation(self, node: ast.expr, scope: Scope) -> Kind:
        if isinstance(node.left if isinstance(node, ast.BinOp) else node, (ast.Tuple, ast.List)):  # `[sem] * n` too
            return Kind.TUPLE
        if isinstance(node, ast.Call):
            names = self.qualified(node.func, scope)
            if names and all(n.startswith(SEMAPHORE_TYPE_OWNERS) for n in names):
                items = source_order(node)
                if items:  # libcst's first Arg, whatever its kind: its value is the shape
                    first = items[0]
                    shape = first.value if isinstance(first, (ast.keyword, ast.Starred)) else first
                    if not (isinstance(shape, ast.Tuple) and not shape.elts):
                        return Kind.ARRAY
        return Kind.UNKNOWN

    def _semaphore_kind(self, node: ast.expr, scope: Scope) -> str | None:
        """The kind (`REGULAR`, `DMA`, `BARRIER`) of the semaphore or semaphore array `node`
        allocates: `SemaphoreType.X` or `SemaphoreType.X(shape)`, resolved through the imports."""
        names = self.qualified(node.func if isinstance(node, ast.Call) else node, scope) or set()
        kinds = {next((name[len(o) :] for o in SEMAPHORE_TYPE_OWNERS if name.startswith(o)), None) for name in names}
        return kinds.pop() if len(kinds) == 1 and kinds <= set(SEMAPHORE_KINDS) else None  # type: ignore[return-value]

    def semaphore(self, node: ast.expr, scope: Scope) -> tuple[str, ast.expr] | None:
        """The kind of semaphore `node` is, and the allocation that proves it: for a parameter
        (or an `.at[...]` view of one) that every allocation bound to it gives that one kind,
        and that nothing rebinds. None where the file does not prove it."""
        while isinstance(node, ast.Subscript) and is_at(node.value):
            node = node.value.value  # type: ignore[attr-defined]
        if not isinstance(node, ast.Name):
            return None
        _, bindings = scope.lookup(node.id)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].declared:
            return None
        return self.param_semaphores.get(id(bindings[0].node))

    def _bind(self, body: ast.AST, allocations: list[ast.AST], scope: Scope, *, last: bool = False) -> None:
        """Allocations to the body's parameters, as Python passes arguments; `last`: the
        kernel's last positional parameters, as pallas_call passes scratch buffers."""
        found = self._function(body, scope)
        if found is None:
            return
        function, given, named = found
        unknown = functools.partial(self._unprove, function, scope)  # where this call's allocations are not known
        parameters = [*function.args.posonlyargs, *function.args.args]
        by_name = {p.arg: p for p in [*parameters, *function.args.kwonlyargs] if p.arg not in named}
        required = len(parameters) - len(function.args.defaults)
        parameters = parameters[given:]  # a partial's positional arguments come first
        if last:  # they fill the parameters before the first one a partial names; with defaults, who knows how many
            parameters = list(itertools.takewhile(lambda p: p.arg not in named, parameters))
            if function.args.vararg is not None or len(allocations) > len(parameters) or given + len(parameters) > required:
                return unknown()
            parameters = parameters[len(parameters) - len(allocations) :]
        positional = iter(parameters)
        for item in allocations:
            if isinstance(item, ast.Starred) or (isinstance(item, ast.keyword) and item.arg is None):
                return unknown()
            if isinstance(item, ast.keyword):
                parameter, value = by_name.get(item.arg), item.value  # type: ignore[arg-type]
            else:
                parameter, value = next(positional, None), item  # type: ignore[assignment]
            if parameter is not None:
                kind, previous = self._allocation(value, scope), self.param_kinds.get(id(parameter))  # type: ignore[arg-type]
                if previous not in (None, kind):  # either may reach the kernel: a tuple if one is
                    kind = Kind.TUPLE if Kind.TUPLE in (kind, previous) else Kind.UNKNOWN
                self.param_kinds[id(parameter)] = kind
                semaphore = self._semaphore_kind(value, scope)  # type: ignore[arg-type]
                allocated = None if semaphore is None else (semaphore, value)
                if id(parameter) in self.param_semaphores:  # two allocations: one kind, or none
                    earlier = self.param_semaphores[id(parameter)]
                    allocated = earlier if earlier and allocated and earlier[0] == allocated[0] else None
                self.param_semaphores[id(parameter)] = allocated  # type: ignore[assignment]

    def _unprove(self, body: ast.AST, scope: Scope) -> None:
        """A call hands `body` allocations semfix cannot read: none of its parameters has a
        proven semaphore kind, whatever other calls allocate for them."""
        found = self._function(body, scope)
        if found is not None:
            arguments = found[0].args
            for parameter in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                self.param_semaphores[id(parameter)] = None

    # -- whether a Ref expression keeps its value (a view's evidence, a carried read)----------------
    def tracking(self) -> Tracking:
        """The accesses to every name: a plain scope builder records none; `analyse_tree` then
        builds a tracking one, and runs again."""
        if not isinstance(self.scopes, Tracking):
            raise NeedsAccesses
        return self.scopes

    def unstable(self, node: ast.expr, scope: Scope) -> str | None:
        """Why `node` may not name the same Ref everywhere in its scope; None when it must.

        Evidence about a Ref expression (a view's proof, a carried read) holds only
        while its base name, each attribute in its chain and each name in its indices keep
        their values. Flow is not followed: a name bound twice anywhere in the scope (or once, by
        a function through `global`, which binds it again at each call), or a
        chain written, deleted, called a method on or handed away anywhere its base name is
        seen (nested functions and later loop iterations included), voids the evidence.
        """
        for root, top, watched in _chains(node):
            _, bindings = scope.lookup(root.id)
            if len(bindings) > 1 or bindings and bindings[0].declared:
                return f"`{root.id}` is reassigned or deleted, so the Ref could differ at the use"
            if not watched:
                continue
            if not bindings:
                return f"`{self._code(top)}` may be changed outside this file"
            for how, changed, where in self._changes_of(root.id, scope):
                through = watched[: len(changed)] == changed
                if how == "write" and through:
                    return f"`{self._code(top)}` may be rebound: `{self._code(where)}` is assigned or deleted"
                if how == "handed" and through and len(changed) < len(watched):
                    return f"`{self._code(top)}` may be rebound by other code given `{self._code(where)}`"
        return None

    def _code(self, node: ast.AST) -> str:
        return " ".join(self.text.of(node).split())

    def _changes_of(self, name: str, scope: Scope) -> list[tuple[str, Steps, ast.expr]]:
        """Every place the name's value, or a chain under it, may change: ("write", chain) for a
        store or `del` target, ("handed", object) for an object given to code that may change
        anything under it: a call's receiver, an argument, a container stored into, or any
        other use that is not an attribute or subscript of it. A chain through a dunder attribute
        (`x.__dict__[k] = v`) hands away the object itself. With each, the expression there."""
        _, bindings = scope.lookup(name)
        if id(bindings) not in self._changes:
            found: list[tuple[str, Steps, ast.expr]] = []
            for access in self.tracking().references(name, scope):
                steps, top = access.steps, access.top
                own = next((i for i, s in enumerate(steps) if s is not None and s[:2] == s[-2:] == "__"), None)
                if own is not None:  # `x.__dict__`, `x.__class__`: the object's own state
                    found.append(("handed", steps[:own], top))
                    continue
                if access.context in (ast.Store, ast.Del):
                    found.append(("write", steps, top))
                    if steps and steps[-1] is None:  # `X[i] = v` runs X's own code
                        found.append(("handed", steps[:-1], top.value))  # type: ignore[attr-defined]
                elif access.called and steps:
                    found.append(("handed", steps[:-1], top.value))  # type: ignore[attr-defined]
                else:
                    found.append(("handed", steps, top))
            self._changes[id(bindings)] = found
        return self._changes[id(bindings)]


_PARTIAL_NAMES = frozenset(name.rpartition(".")[2] for name in PARTIAL)


def _display(node: ast.expr) -> tuple[ast.List | ast.Tuple | None, int]:
    """A list or tuple display and how many times it is repeated (`(x,) * 2`); (None, 0) otherwise."""
    times = 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        first = isinstance(node.left, (ast.List, ast.Tuple))  # `(x,) * 2`, or `2 * (x,)`
        node, count = (node.left, node.right) if first else (node.right, node.left)
        if not (isinstance(count, ast.Constant) and type(count.value) is int):
            return None, 0
        times = max(count.value, 0)
    return (node, times) if isinstance(node, (ast.List, ast.Tuple)) else (None, 0)


def _bound(arguments: list[ast.AST], order: tuple[str, ...]) -> dict[str, ast.expr] | None:
    """Arguments (positional, as `ast.expr`, and keywords) by the parameter each binds, the
    positional ones to `order`; None where a `*args` or `**kwargs` may give any parameter."""
    positional = [a for a in arguments if isinstance(a, ast.expr)]
    keywords = [a for a in arguments if isinstance(a, ast.keyword)]
    hidden = any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in keywords)
    if hidden or len(positional) > len(order):
        return None
    return {**dict(zip(order, positional)), **{k.arg: k.value for k in keywords if k.arg is not None}}


# Expressions that bind names or open a scope: in a chain, their names are not the chain's scope's.
_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)


@functools.cache
def _last_parts(targets: frozenset[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in targets)


def _chains(node: ast.AST) -> Iterator[tuple[ast.Name, ast.expr, Steps]]:
    """Each name in `node`, in source order, with the part of its attribute and subscript
    chain that lies inside `node`: (`self`, `self.sems.at[i]`, ("sems", "at", None)), then (`i`, `i`, ())."""
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        for child in ast.iter_child_nodes(node):
            yield from _chains(child)
        return
    root, steps, links = unchain(node)  # type: ignore[arg-type]
    if isinstance(root, ast.Name):
        yield root, node, steps  # type: ignore[misc]
    else:
        yield from _chains(root)
    for link in reversed(links):
        yield from _chains(link.slice)
