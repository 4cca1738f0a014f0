"""What a name resolves to, and what the file shows it holds: the base of `Evidence`.

Imports resolved to qualified names and catalog operations (`qualified`, `operation`), the key
that names one Ref wherever it is written (`key`), what a name holds (`kind`: a tuple of Refs
or an array), and the Refs the file shows to be Refs (`proofs`). Allocations (allocations.py)
and whether a Ref expression keeps its value (evidence.py) build on it.
"""

from __future__ import annotations

import ast
import functools
from enum import Enum
from typing import TYPE_CHECKING

from semfix.analysis.nodes import (
    has_slice,
    is_at,
    read_target,
    unchain,
)
from semfix.analysis.scopes import Scope, Tracking
from semfix.catalog import (
    FUNCTION_NAMES,
    PARTIAL,
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


class Resolution:
    """Resolution for one file, each computed on first use and cached."""

    def __init__(self, text: Text, scopes: ScopeBuilder) -> None:
        self.text, self.scopes = text, scopes
        self.param_kinds: dict[int, Kind] = {}
        # the semaphore kind JAX allocates for a parameter, with the allocation; None: not one kind
        self.param_semaphores: dict[int, tuple[str, ast.expr] | None] = {}
        # how many indices pick one semaphore out of a parameter, with the allocation; None: not known
        self.param_ranks: dict[int, tuple[int, ast.expr] | None] = {}
        self.proven: set[object] | None = None
        self.operations: dict[int, Operation | None] = {}
        self.proof_sites: dict[object, list[tuple[ast.expr, Scope]]] = {}  # attribute-chain proofs

    def tracking(self) -> Tracking:
        """The accesses to every name: a plain scope builder records none; `analyse_tree` then
        builds a tracking one, and runs again."""
        if not isinstance(self.scopes, Tracking):
            raise NeedsAccesses
        return self.scopes

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
        return names is not None and bool(names) and names <= targets

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
                return self._catalog_function(bindings[0].value, owner, alias=False)
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
            return self._tuple(node.value, scope, seen)
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
                assert found is not None  # the scope `binding` was found in
                kinds.add(self._tuple(binding.value, found, seen | {id(binding)}))
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
                target = subscript.value.value if is_at(subscript.value) else read_target(subscript)
                proof = self.key(target, scope) if target is not None else None
                if proof is not None:
                    self.proven.add(proof)
                    if isinstance(target, ast.Attribute):
                        self.proof_sites.setdefault(proof, []).append((target, scope))
        return self.proven


_PARTIAL_NAMES = frozenset(name.rpartition(".")[2] for name in PARTIAL)


@functools.cache
def _last_parts(targets: frozenset[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in targets)


_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)
