"""What a name resolves to, and what the file shows it holds: the base of `Evidence`.

Imports resolved to qualified names and catalog operations (`qualified`, `operation`), the key
that names one Ref wherever it is written (`key`), what a name holds (`kind`: a tuple of Refs
or an array), and the Refs the file shows to be Refs (`proofs`). Allocations (allocations.py)
and whether a Ref expression keeps its value (evidence.py) build on it.
"""

from __future__ import annotations

import ast
import functools
import itertools
import operator
from bisect import bisect_left
from enum import Enum
from typing import TYPE_CHECKING, TypeGuard

from semfix.analysis.nodes import Within, branches, has_slice, is_at, names_within, read_target, unchain, unpacked
from semfix.analysis.paths import EVERY, Path, none_tests, path
from semfix.analysis.scopes import Binding, Scope, Tracking
from semfix.analysis.views import unread, unview
from semfix.catalog import (
    FUNCTION_NAMES,
    KINDS_NEEDED,
    PARTIAL,
    SLICES,
    TREE_MAP,
    Operation,
    SemParam,
    lookup,
)
from semfix.settings import Allocated, Launch

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
        self.aliases: dict[str, str] = {}  # names read through the run's other modules (`ReadThrough.aliases`)
        self.foreign: dict[str, Operation] = {}  # and helpers called through them (`ReadThrough.helpers`)
        self.param_kinds: dict[int, Kind] = {}
        # the semaphore kind JAX allocates for a parameter, with the allocation; None: not one kind
        self.param_semaphores: dict[int, tuple[str, ast.expr | Allocated] | None] = {}
        # how many indices pick one semaphore out of a parameter, with the allocation; None: not known
        self.param_ranks: dict[int, tuple[int, ast.expr | Allocated] | None] = {}
        self.launched: tuple[Launch, ...] = ()  # the run's other modules' launches of this one's kernels
        # and this one's of theirs, each with the module its import names: (level, module)
        self.launches: list[tuple[tuple[int, str | None], Launch]] = []
        self.proven: set[object] | None = None
        self.operations: dict[int, Operation | None] = {}
        self.proof_sites: dict[object, list[tuple[ast.expr, Scope]]] = {}  # attribute-chain proofs
        self.axes_seen: dict[object, tuple[int, ast.expr]] = {}  # by `member`: the most dimensions a view shows
        # by id() of a parameter: the dimensions its views show, each with the parameters its indices name
        self._param_axes: dict[int, set[tuple[int, frozenset[int]]]] = {}
        self._picked: dict[object, tuple[set[int], ast.expr]] | None = None  # by `member`: `rank_shown`
        # by id() of a def and the path a call takes in it: what it passes on (`_helper`)
        self._helpers: dict[tuple[int, Path], Operation | None] = {}
        self._none_tests: dict[int, list[tuple[ast.If, ast.Name, bool]]] = {}  # by id() of a def (`taken`)
        self._holders: set[int] | None = None  # id() of each def holding a catalog call (`_holds_catalog_calls`)
        self._helper_calls: set[int] | None = None  # id() of each call of a def that may be a helper
        self._runs_in: dict[int, ast.FunctionDef | ast.AsyncFunctionDef | None] = {}  # by id() of a def (`_runners`)
        self._names: dict[int, dict[str, list[ast.Name]]] = {}  # by id() of a def: its Names (`names_in`)
        self._called_names: dict[int, set[str]] = {}  # by id() of a def: `_spelled_in`
        self._within: Within = {}  # by id() of a def: its own Names and the defs nested in it (`names_within`)
        self._by_position: tuple[list[tuple[int, int]], list[ast.Call]] | None = None  # `_calls_in`

    def tracking(self) -> Tracking:
        """The accesses to every name: a plain scope builder records none; `analyse_tree` then
        builds a tracking one, and runs again."""
        if not isinstance(self.scopes, Tracking):
            raise NeedsAccesses
        return self.scopes

    # -- resolution ---------------------------------------------------------------------
    def qualified(self, node: ast.expr, scope: Scope, *, fallback: bool = False) -> set[str] | None:
        """The names `node` may be, through the imports (`pltpu.semaphore_wait`, or the builtin
        `getattr(pltpu, "semaphore_wait")` with a constant name); None where it is no import's.
        With `fallback`, a binding to None (`except ImportError: pl = pltpu = None`) is passed
        over: a call or an attribute of None fails, so where it runs the import is what it
        names. Not for a rename (the migration's), which would make the fallback work where it did not
        (`sem101_references._with_fallback`)."""
        if type(node) is ast.Call:
            return self._getattr(node, scope, fallback)
        root, steps, _ = unchain(node)
        if not isinstance(root, ast.Name) or None in steps:
            return None
        _, bindings = scope.lookup(root.id)
        if fallback:
            bindings = [b for b in bindings if not (b.kind == "assign" and _is_none(b.value))]
        if not bindings or any(b.kind != "import" for b in bindings):
            return None
        suffix = "".join(f".{p}" for p in steps)
        return {f"{b.qualname}{suffix}" for b in bindings}

    def _getattr(self, call: ast.Call, scope: Scope, fallback: bool = False) -> set[str] | None:
        """`getattr(module, "name")`; with `fallback`, `getattr(module, "name", None)` too (None
        fails where it is called: where the call runs, it is the module's)."""
        given = 3 if fallback and len(call.args) == 3 and _is_none(call.args[2]) else 2
        if not (type(call.func) is ast.Name and call.func.id == "getattr" and len(call.args) == given):
            return None
        module, name = call.args[:2]
        if call.keywords or not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return None
        if type(module) is ast.Call or scope.lookup("getattr")[1]:  # not the builtin
            return None
        modules = self.qualified(module, scope)
        return modules and {f"{qualname}.{name.value}" for qualname in modules}

    def jax_names(self, node: ast.expr, scope: Scope, *, fallback: bool = False) -> set[str] | None:
        """`qualified`, each name read through another module of the run as the JAX name it is
        there (`._compat.pltpu.SemaphoreType`: `jax.experimental.pallas.tpu.SemaphoreType`)."""
        names = self.qualified(node, scope, fallback=fallback)
        return {self.through_run(name) for name in names} if names and self.aliases else names

    def resolves_to(self, node: ast.expr, scope: Scope, targets: frozenset[str]) -> bool:
        if isinstance(node, ast.Attribute) and node.attr not in _last_parts(targets):
            return False  # a qualified name ends in the attribute itself: no need to resolve
        names = self.jax_names(node, scope, fallback=True)
        return names is not None and bool(names) and names <= targets

    def operation(self, call: ast.Call) -> Operation | None:
        """The catalog operation the call runs: called by its JAX name, by a name bound once to
        it (`wait = pl.semaphore_wait; wait(sem, 1)`), or through `functools.partial`, whose
        positional arguments come after the function (`partial(pl.semaphore_wait, sem)`)."""
        if isinstance(call.func, ast.Attribute) and call.func.attr not in FUNCTION_NAMES | _PARTIAL_NAMES:
            if not self.foreign or not any(key.endswith(f".{call.func.attr}") for key in self.foreign):
                return None
        if id(call) not in self.operations:
            scope = self.scopes.scope_of[id(call)]
            operation = self._catalog_function(call.func, scope)
            if operation is None and call.args and self.resolves_to(call.func, scope, PARTIAL):
                function = call.args[0]  # a catalog function, or a helper of the file (`partial(_fetch, x, buf, sem)`)
                operation = self._catalog_function(function, scope) or (
                    self._helper(function, scope)
                    if len(call.args) > 1 and self._holds_catalog_calls(function, scope)
                    else None
                )
                operation = operation and operation.through_partial()
            if operation is None and isinstance(call.func, ast.Name):
                operation = self._helper(call.func, scope, call)
            self.operations[id(call)] = operation
        return self.operations[id(call)]

    def catalog_calls(self) -> list[ast.Call]:
        """The calls that may run a catalog operation: by a JAX name or an alias of one
        (`ScopeBuilder.relevant_calls`), or through a helper of the file (`_helper`)."""
        relevant = self.scopes.relevant_calls()
        if self._helper_calls is None:  # the defs holding such calls, then those calling them, ...
            helpers: set[int] = set()
            self._helper_calls = helpers
            found = [c for c in relevant if self.operation(c) is not None]
            names: set[str] = set()
            while found:  # each round, the calls of the names it adds
                fresh = {d.name for c in found for d in self._runners(self._def_of(c))} - names
                names |= fresh
                found = [c for name in fresh for c in self.scopes.by_name.get(name, ())]
                helpers.update(id(c) for c in found)
            helpers.difference_update(id(c) for c in relevant)
        return relevant + [c for c in self.scopes.calls if id(c) in self._helper_calls]

    def _holds_catalog_calls(self, node: ast.expr, scope: Scope) -> TypeGuard[ast.Name]:
        """Does the def `node` names hold a call of a catalog function (itself, or in a nested def
        it runs)? Only such a def, given positional arguments, is worth reading as a helper where
        a partial names it: a kernel is one too, bound by keywords (`partial(kernel, n=n)`), and
        reading every kernel given to a partial cost a walk of each (1.2x calls on tpu-inference)."""
        if self._holders is None:
            self._holders = {
                id(d)
                for c in self.scopes.relevant_calls()
                if self._catalog_function(c.func, self.scopes.scope_of[id(c)]) is not None
                for d in self._runners(self._def_of(c))
            }
        _, bindings = scope.lookup(node.id) if isinstance(node, ast.Name) else (None, [])
        return len(bindings) == 1 and id(bindings[0].node) in self._holders

    def _def_of(self, call: ast.Call) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The def a call is in (through comprehensions and lambdas)."""
        scope: Scope | None = self.scopes.scope_of[id(call)]
        while scope is not None:
            if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return scope.node
            scope = scope.parent
        return None

    def _runners(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef | None
    ) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
        """`function`, and each def around it that runs it: where a nested def is called or
        handed on by its name, bound once there (`lax.fori_loop(0, n, step, 0)`), or decorated
        (`@pl.when(...)`), what it does with the outer def's parameters, that def does."""
        found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        while function is not None:
            found.append(function)
            if id(function) not in self._runs_in:
                self._runs_in[id(function)] = self._runner(function)
            function = self._runs_in[id(function)]
        return found

    def _runner(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef
    ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The def `function` is nested in, where that def runs it (`_runners`); else None."""
        outer = self.scopes.scope_of[id(function)]
        node = outer.node if outer.kind == "function" else None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if function.decorator_list:
            return node
        _, bindings = outer.lookup(function.name)
        return node if len(bindings) == 1 and self._spelled_in(function.name, node) else None

    def _spelled_in(self, name: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        """Is `name` a Name in `function` (`names_in`)? Most nested defs a def runs it calls,
        hands to a call, or assigns (`fetch = _fetch if c else _fetch_all`) by their name: the
        calls in its text and the bindings of the defs there say so without a walk of it."""
        key = id(function)
        if key not in self._called_names:
            span = ((function.lineno, function.col_offset), (function.end_lineno or 0, function.end_col_offset or 0))
            bodies = (
                self.scopes.bodies[id(f)]
                for f in self.scopes.functions
                if span[0] <= (f.lineno, f.col_offset) < span[1]
            )
            assigned = (b.value for body in bodies for bs in body.bindings.values() for b in bs if b.kind == "assign")
            calls = self._calls_in(function)
            self._called_names[key] = {
                n.id
                for n in itertools.chain(
                    (n for call in calls for n in (call.func, *call.args, *(k.value for k in call.keywords))),
                    (n for value in assigned for n in branches(value)),
                )
                if type(n) is ast.Name
            }
        return name in self._called_names[key] or name in self.names_in(function)

    def names_in(self, function: ast.AST) -> dict[str, list[ast.Name]]:
        """Every Name in a def (or lambda), nested defs included, by spelling: a walk of the def
        answers for every def in it, and passes over those a walk has answered for (a walk of
        the outermost def around each asked one walked whole kernels for a helper in them)."""
        key = id(function)
        if key not in self._names:
            if key not in self._within:
                self._within.update(names_within(function, self._within))
            own, nested = self._within[key]
            merged = own
            if nested:
                merged = {name: list(reads) for name, reads in own.items()}
                for inner in nested:
                    for name, reads in self.names_in(inner).items():
                        merged.setdefault(name, []).extend(reads)
            self._names[key] = merged
        return self._names[key]

    def _calls_in(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Call]:
        """The calls in a def's text (its decorators' aside), in order: the scope builder's
        calls by position, so that finding a def's calls costs no walk of it (a walk per
        helper a file calls was a tenth of a check of real kernels)."""
        if self._by_position is None:
            calls = sorted(self.scopes.calls, key=_position)
            self._by_position = (list(map(_position, calls)), calls)
        starts, calls = self._by_position
        first = bisect_left(starts, (function.lineno, function.col_offset))
        last = bisect_left(starts, (function.end_lineno or function.lineno, function.end_col_offset or 0))
        return calls[first:last]

    def helper(self, name: str) -> Operation | None:
        """What the def of that name at the module's top passes on (`_helper`): another module
        of the run that imports it reads its calls so (`ReadThrough.helpers`)."""
        return self._helper(ast.Name(name, ast.Load()), self.scopes.module)

    def _helper(self, name: ast.Name, scope: Scope, call: ast.Call | None = None) -> Operation | None:
        """A def of the file that passes its parameters, unchanged, to catalog parameters (or to
        another such helper's): at its calls, each is treated as the parameter it is passed to.
        Only a def bound once by that name, undecorated, without `*args` or `**kwargs`; a
        parameter counts only where the def never rebinds it and passes it to parameters of
        one catalog parameter alone (`KINDS_NEEDED`, the buffer's side), and does nothing else
        with it: a helper that stores its `src` as a value on another path (`dst[...] = src`),
        or picks a semaphore out of it itself (`sem.at[slot]`), is given a value or a row
        rightly there, and the call is not the catalog's to fix. What a `call` of it passes on is
        read on the path the call takes (`taken`): `if sem is None:` decided by its arguments."""
        _, bindings = scope.lookup(name.id)
        function = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "def" else None
        if not isinstance(function, ast.FunctionDef) or bindings[0].declared or function.decorator_list:
            return None
        arguments = function.args
        if arguments.vararg is not None or arguments.kwarg is not None:
            return None
        key = (id(function), EVERY if call is None else self.branch_taken(function, call))
        if key not in self._helpers:
            self._helpers[key] = None  # while it is worked out: a call of itself is none
            self._helpers[key] = self._passes_on(function, key[1])
        return self._helpers[key]

    def branch_taken(self, function: ast.FunctionDef, call: ast.Call) -> Path:
        """The branches of the def's None tests (`if sem is None:`) the call runs (paths.py)."""
        if id(function) not in self._none_tests:
            self._none_tests[id(function)] = list(none_tests(function))
        if not self._none_tests[id(function)]:
            return EVERY
        body, site = self.scopes.bodies[id(function)], self.scopes.scope_of[id(call)]

        def parameter(name: ast.Name) -> bool:
            _, bindings = body.lookup(name.id)
            return len(bindings) == 1 and bindings[0].kind == "param" and not bindings[0].declared

        return path(function, call, self._none_tests[id(function)], parameter, lambda v: self.not_none(v, site))

    def not_none(self, node: ast.expr, scope: Scope, seen: frozenset[int] = frozenset()) -> bool:
        """Can `node` not be None: a constant other than None, a view (`x.at[i]`), a read (`x[...]`,
        `x[()]`, an element of an allocated array or of a view, or of a container `_holds_no_none`),
        a conditional of such, a parameter allocated semaphores, or a name bound once to one of these?"""
        if isinstance(node, ast.Constant):
            return node.value is not None
        if isinstance(node, ast.IfExp):
            return self.not_none(node.body, scope, seen) and self.not_none(node.orelse, scope, seen)
        if isinstance(node, ast.Subscript):
            value = node.value
            return (
                _plainly_not_none(node)
                or self.kind(value, scope) is Kind.ARRAY
                or bool(unview(value, scope).levels)
                or self._holds_no_none(value, scope, seen)
            )
        if not isinstance(node, ast.Name):
            return False
        owner, bindings = scope.lookup(node.id)
        if owner is None or len(bindings) != 1 or bindings[0].declared:
            return False
        if bindings[0].kind == "param":
            return self.param_semaphores.get(id(bindings[0].node)) is not None
        return (
            bindings[0].kind in ("assign", "read")
            and id(bindings[0]) not in seen
            and (self.not_none(bindings[0].value, owner, seen | {id(bindings[0])}))
        )

    def _holds_no_none(self, node: ast.expr, scope: Scope, seen: frozenset[int]) -> bool:
        """Is `node` a function's local bound once to a container it builds of what cannot be
        None (`views = [sems.at[i] for i in range(2)]`, `tuple(...)`, `{i: sems.at[i] ...}`, a
        display of such), and read only by one subscript at a time (nothing stores into it, calls
        a method of it or hands it away, which could put a None in it)?"""
        if not isinstance(node, ast.Name):
            return False
        owner, bindings = scope.lookup(node.id)
        if owner is None or owner.kind != "function" or len(bindings) != 1 or bindings[0].declared:
            return False
        if bindings[0].kind not in ("assign", "tuple_literal") or id(bindings[0]) in seen:
            return False
        made, again = bindings[0].value, seen | {id(bindings[0])}
        if isinstance(made, ast.Call) and len(made.args) == 1 and not made.keywords and self.built(made, owner):
            made = made.args[0]  # `tuple(... for ...)`, `list(... for ...)`
        if isinstance(made, (ast.ListComp, ast.GeneratorExp, ast.DictComp)):  # its names are its own: none followed
            held = _plainly_not_none(made.value if isinstance(made, ast.DictComp) else made.elt)
        elif isinstance(made, (ast.Tuple, ast.List, ast.Dict)):
            values = made.values if isinstance(made, ast.Dict) else made.elts
            keys = made.keys if isinstance(made, ast.Dict) else []
            held = None not in keys and all(
                not isinstance(v, ast.Starred) and self.not_none(v, owner, again) for v in values
            )
        else:
            return False
        uses = self.tracking().references(node.id, owner) if held else []
        return held and all(u.context is ast.Load and u.steps == (None,) and not u.called for u in uses)

    def _passes_on(self, function: ast.FunctionDef, taken: Path) -> Operation | None:
        arguments = function.args
        ordered = [*arguments.posonlyargs, *arguments.args]
        positions: dict[int, int | None] = {id(p): i for i, p in enumerate(ordered)}
        positions.update((id(p), None) for p in arguments.kwonlyargs)
        uses: dict[int, list[tuple[bool, tuple[str, str]]]] = {}  # by parameter: each catalog use
        inner: list[ast.Call] = []
        for call in self._calls_in(function):
            operation = self.operation(call) if taken.runs(call) else None
            if operation is None or operation.partial or function not in self._runners(self._def_of(call)):
                continue  # a call in a nested def counts where the def runs it
            scope = self.scopes.scope_of[id(call)]
            for buffer, params in ((False, operation.sem_params), (True, operation.buffer_params)):
                for param, argument in bound_arguments(params, call):
                    if not isinstance(argument, ast.Name):
                        continue
                    _, bindings = scope.lookup(argument.id)
                    if len(bindings) == 1 and bindings[0].kind == "param" and id(bindings[0].node) in positions:
                        uses.setdefault(id(bindings[0].node), []).append(
                            (buffer, param.via or (operation.name, param.name))
                        )
                        inner.append(call)
        if not uses:  # no parameter passed on: `_one_need` of no use is false
            return None
        spelled = self.names_in(function)
        passed: tuple[list[SemParam], list[SemParam]] = ([], [])
        for parameter in [*ordered, *arguments.kwonlyargs]:
            found = uses.get(id(parameter), [])
            used = [n for n in spelled.get(parameter.arg, ()) if taken.uses(n)]
            if len(found) == len(used) and _one_need(set(found)):  # its every use on the path: passed on
                buffer, via = found[0]
                passed[buffer].append(SemParam(parameter.arg, positions[id(parameter)], via=via))
        if not passed[0] and not passed[1]:
            return None
        return Operation(function.name, tuple(passed[0]), tuple(passed[1]), inner=tuple(inner))

    def _catalog_function(self, node: ast.expr, scope: Scope, alias: bool = True) -> Operation | None:
        """The catalog function `node` names: through the imports, or (with `alias`) a local or
        module name never declared global whose every binding is `name = <such a function>`,
        all of one operation: a version check binds it in each branch, in a conditional
        (`pl.semaphore_wait if hasattr(pl, "semaphore_wait") else pltpu.semaphore_wait`), or in
        compatibility code (`getattr(pl, "semaphore_wait", None) or pltpu.semaphore_wait`)."""
        if alias and isinstance(node, ast.Name):
            owner, bindings = scope.lookup(node.id)
            if bindings and owner is not None and all(b.kind == "assign" and not b.declared for b in bindings):
                values = [operand for b in bindings for value in branches(b.value) for operand in _either(value)]
                return _one({self._catalog_function(value, owner, alias=False) for value in values})
        names = self.qualified(node, scope, fallback=True) or set()
        return _one(
            {lookup(self.through_run(name) if self.aliases else name) or self.foreign.get(name) for name in names}
        )

    def through_run(self, name: str) -> str:
        """The JAX name a name read through another module of the run is (`..compat.pltpu.x`:
        `jax.experimental.pallas.tpu.x`), else the name itself."""
        head, tail = name, ""
        while head:
            if head in self.aliases:
                return self.aliases[head] + tail
            head, dot, last = head.rpartition(".")
            tail = f"{dot}{last}{tail}"
        return name

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
        field = self.field(node, scope)
        if field is not None:
            return self.kind(*field, seen)
        if self.built(node, scope) or self._member_built(node, scope):
            return Kind.TUPLE
        if not isinstance(node, ast.Name):
            return Kind.UNKNOWN
        found, bindings = scope.lookup(node.id)
        kinds = set()
        for binding in bindings:
            if binding.kind == "element" and id(binding) in seen:  # `for a, sem in ((x, sem),)`: followed round
                kinds.add(Kind.UNKNOWN)
            elif binding.kind == "element" and (taken := self._taken(node.id, binding, found)) is not None:
                again = seen | {id(binding)}
                kinds.add(Kind.TUPLE if any(self.kind(e, t, again) is Kind.TUPLE for e, t in taken) else Kind.UNKNOWN)
            elif binding.kind in ("star_param", "star_unpack", "tuple_literal", "element"):
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

    def _taken(self, name: str, binding: Binding, scope: Scope | None) -> list[tuple[ast.expr, Scope]] | None:
        """What a loop target takes at each pass where the loop runs over a literal written there,
        or held by a name bound once to one (`for src, sem in ((x, sems.at[0]), (y, b))`): each
        value with its scope; None where the values are not all written so. A value that is a
        tuple of Refs makes the target one; any other leaves it unproven, never an array (each
        pass may differ), so a read out of it is reported, its fix unsafe."""
        loop = binding.node
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or scope is None:
            return None
        source, where = loop.iter, scope
        if isinstance(source, ast.Name):
            owner, held = scope.lookup(source.id)
            if owner is None or [b.kind for b in held] != ["tuple_literal"] or held[0].declared:
                return None
            source, where = held[0].value, owner
        values = unpacked(ast.For(target=loop.target, iter=source, body=[], orelse=[]), name)
        return None if values is None else [(value, where) for value in values]

    def field(self, node: ast.expr, scope: Scope) -> tuple[ast.expr, Scope] | None:
        """What a record's field holds (`held.pair`, `held = Held(sems, pair)`), and the scope it
        is written in: where `held` is bound once, to a call of a NamedTuple or dataclass of the
        file bound once (`_record`), that gives the field. A NamedTuple never changes its
        fields; a dataclass's field counts only where the file stores no attribute of its name."""
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return None
        owner, bindings = scope.lookup(node.value.id)
        if owner is None or len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].declared:
            return None
        call = bindings[0].value
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            return None
        _, classes = owner.lookup(call.func.id)
        named = classes[0].node if len(classes) == 1 and not classes[0].declared else None
        if not isinstance(named, ast.ClassDef) or not self._record(named, owner):
            return None
        if named.decorator_list and node.attr in self.scopes.attribute_stores:
            return None  # a dataclass's field stored anywhere (`held.sems = x`, `__post_init__`) may hold anything
        fields = [f.target.id for f in named.body if isinstance(f, ast.AnnAssign) and isinstance(f.target, ast.Name)]
        given = dict(zip(fields, itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)))
        given.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
        if len(call.args) > len(given) or any(k.arg is None for k in call.keywords) or node.attr not in given:
            return None  # a `*args` or `**kwargs` may give any field
        return given[node.attr], owner

    def _record(self, named: ast.ClassDef, scope: Scope) -> bool:
        """Is the class a record whose constructor's positional arguments are its annotated
        fields, in order: a NamedTuple, or a dataclass of no base class and plain fields?"""
        if not named.decorator_list:
            return any(self.resolves_to(base, scope, _NAMED_TUPLE) for base in named.bases)
        decorator = named.decorator_list[0]
        return (
            len(named.decorator_list) == 1
            and not named.bases
            and self.resolves_to(decorator.func if isinstance(decorator, ast.Call) else decorator, scope, _DATACLASS)
            and not any(
                isinstance(n, (ast.Name, ast.Attribute)) and getattr(n, "id", getattr(n, "attr", "")) in _NOT_FIELDS
                for f in named.body
                if isinstance(f, ast.AnnAssign)
                for n in ast.walk(f.annotation)
            )
        )

    def built(self, node: ast.expr, scope: Scope) -> bool:
        """Is `node` a Python container the file builds: a display (`[a, b]`, `(x,) * 2`,
        `{k: v}`), a list or dict comprehension, the builtins' `tuple(...)`, `list(...)`,
        `dict(...)` (`dict(zip(...))`), `jax.tree.map` over a container, a conditional of such
        containers (or None), or a call of a def of the file that returns only displays and
        comprehensions? Indexing it picks what it holds (a Ref, for a container of Refs):
        never a value out of a Ref, and `.at` on it fails."""
        if isinstance(node, (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)):
            return True
        if isinstance(node, ast.BinOp):  # `(x,) * 2`, `2 * [x]`, `[a] + [b]`
            sides = (node.left, node.right)
            if isinstance(node.op, ast.Mult):
                return any(isinstance(side, (ast.List, ast.Tuple)) for side in sides)
            return isinstance(node.op, ast.Add) and all(self.built(side, scope) for side in sides)
        if isinstance(node, ast.IfExp):
            given = [b for b in (node.body, node.orelse) if not _is_none(b)]
            return bool(given) and all(self.built(b, scope) for b in given)
        if not isinstance(node, ast.Call):
            return False
        if isinstance(node.func, ast.Name):
            _, bindings = scope.lookup(node.func.id)
            if not bindings:  # a builtin, where nothing of the file's shadows it
                return node.func.id in _BUILDERS
            function = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "def" else None
            if isinstance(function, ast.FunctionDef) and not function.decorator_list and not bindings[0].declared:
                returned = [r.value for r in _returns(function)]
                return bool(returned) and all(isinstance(r, _DISPLAYS) for r in returned)
            return False
        tree = node.args[1] if len(node.args) > 1 else None
        return (
            tree is not None
            and not isinstance(tree, ast.Starred)
            and self.resolves_to(node.func, scope, TREE_MAP)
            and self.kind(tree, scope) is Kind.TUPLE
        )

    def _member_built(self, node: ast.expr, scope: Scope) -> bool:
        """`self.sems` in a method, where every store of a `.sems` in the file is one of
        `self.sems = <a container the file builds>` in a method of the class (`__init__`'s
        `self.sems = (a, b)`), and no method views it (`self.sems.at[0]` shows a Ref given it
        elsewhere): it holds a container wherever it is read."""
        key = self.member(node, scope) if isinstance(node, ast.Attribute) else None
        if not (isinstance(key, tuple) and key[0] == "member" and len(key[2]) == 1):
            return False
        assert isinstance(node, ast.Attribute)  # a member's key is made for attributes alone
        stores = self.scopes.attribute_stores.get(node.attr, [])
        if not stores or self.axes_indexed(node, scope) is not None:  # `self.sems.at[0]`: a Ref too, from elsewhere
            return False
        return all(
            value is not None and self.member(target, where) == key and self.built(value, where)
            for target, value, where in stores
        )

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
                if is_at(subscript.value):
                    self._see_axes(subscript, scope)
            self._see_axes_through_helpers()
        return self.proven

    def member(self, node: ast.expr, scope: Scope) -> object | None:
        """The key the dimensions a Ref shows are pooled by: `key`, but `self.sems` in a method is
        one Ref in every method of its class (`key` tells each method's `self` apart)."""
        root, steps, subscripts = unchain(node)
        if isinstance(root, ast.Name) and steps and not subscripts:
            owner, bindings = scope.lookup(root.id)
            method = owner.node if owner is not None else None
            outer = owner.parent if owner is not None else None
            while outer is not None and outer.kind == "annotation":  # a generic method's type parameters
                outer = outer.parent
            if (
                isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef))
                and outer is not None
                and outer.kind == "class"
                and len(bindings) == 1
                and bindings[0].node in [*method.args.posonlyargs, *method.args.args][:1]
                and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
            ):
                return ("member", id(outer), steps)
        return self.key(node, scope)

    def _see_axes(self, subscript: ast.Subscript, scope: Scope) -> None:
        """Record how many dimensions the view shows the Ref it views (through locals and
        chains) to have at least: `flags.at[i].at[j]` and `row.at[j]` after `row = flags.at[i]`, two."""
        view = unview(subscript, scope)
        before = [sum(not self.keeps_dimension(i, view.scope) for i in level) for level in view.levels]
        least = max(len(level) + sum(before[:n]) for n, level in enumerate(view.levels))
        needs = self._parameters_in([i for level in view.levels for i in level], scope)
        self._seen(view.base, view.scope, least, subscript, view.counted, needs)

    def _seen(
        self, base: ast.expr, scope: Scope, least: int, shown: ast.expr, counted: bool, needs: frozenset[int]
    ) -> bool:
        """Record that `shown` indexes at least `least` dimensions of what `base` names, and for
        a parameter, of whatever a call gives it where it also gives the parameters (`needs`)
        the indices name: `sem.at[slot]` is on the path a call without `slot` does not take."""
        key = self.member(base, scope) if counted else None
        if key is None:
            return False
        _, bindings = scope.lookup(base.id) if isinstance(base, ast.Name) else (None, [])
        more = False
        if len(bindings) == 1 and bindings[0].kind == "param":
            seen = self._param_axes.setdefault(id(bindings[0].node), set())
            more = (least, needs) not in seen
            seen.add((least, needs))
        if least > self.axes_seen.get(key, (0, shown))[0]:
            self.axes_seen[key] = (least, shown)
            more = True
        return more

    def _parameters_in(self, nodes: list[ast.expr], scope: Scope) -> frozenset[int]:
        """The parameters (id() of each) the names in `nodes` are bound to."""
        found: set[int] = set()
        for node in nodes:  # most indices are a name or a constant: no walk of them
            for name in (node,) if type(node) in _LEAF_INDICES else ast.walk(node):
                if type(name) is ast.Name:
                    _, bindings = scope.lookup(name.id)
                    found.update(id(b.node) for b in bindings if b.kind == "param")
        return frozenset(found)

    def _see_axes_through_helpers(self) -> None:
        """A Ref given to a def of the file whose parameter is viewed there shows the dimensions
        those views index, after the indices it was given: `_wait_at(flags.at[0], 1, slot)`,
        where `_wait_at` views `sem.at[slot]`, indexes two dimensions of `flags`, on whichever
        path of the def the view is, unless the call leaves `slot` to its default (so a fix of
        `flags[i]` is never proven to pick one semaphore). Through helpers of helpers, until
        nothing more is seen."""
        for _ in range(len(self.scopes.functions) + 1):
            if not self._param_axes or not any([self._see_through(call) for call in self.scopes.calls]):
                return

    def _see_through(self, call: ast.Call) -> bool:
        if not isinstance(call.func, ast.Name):
            return False
        scope = self.scopes.scope_of[id(call)]
        _, bindings = scope.lookup(call.func.id)
        function = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "def" else None
        if not isinstance(function, ast.FunctionDef) or function.decorator_list or bindings[0].declared:
            return False
        arguments = function.args
        positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
        by_name = {p.arg: p for p in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
        given = {id(p): (p, a) for p, a in zip([*arguments.posonlyargs, *arguments.args], positional)}
        given.update((id(by_name[k.arg]), (by_name[k.arg], k.value)) for k in call.keywords if k.arg in by_name)
        more = False
        for parameter, argument in given.values():
            for least, named in list(self._param_axes.get(id(parameter), ())):
                needs = named & {id(p) for p in by_name.values()}  # the called def's own, not an outer one's
                if needs <= given.keys():
                    view = unview(argument, scope)
                    used = sum(not self.keeps_dimension(i, view.scope) for level in view.levels for i in level)
                    passed = self._parameters_in([given[n][1] for n in needs], scope)
                    more |= self._seen(view.base, view.scope, used + least, call, view.counted, passed)
        return more

    def axes_indexed(self, node: ast.expr, scope: Scope) -> tuple[int, ast.expr] | None:
        """How many dimensions the file's views of the Ref `node` names show it has at least
        (`x.at[i, j]`; `self.x` in any method of the class), with the view that shows the most, where the
        file has one."""
        self.proofs()  # which records the views' dimensions
        key = self.member(node, scope)
        return None if key is None else self.axes_seen.get(key)

    def rank_shown(self, node: ast.expr, scope: Scope) -> tuple[int, ast.expr] | None:
        """How many indices pick one semaphore of the Ref `node` names, where the file's semaphore
        arguments that view it (`sem=sems.at[i, j]`, through locals and chains; `self.sems` in any
        method of the class) all give one number: with one such argument. A view proves a Ref, not
        its rank; these do, as its allocation would."""
        if self._picked is None:
            self._picked = {}
            for call in self.catalog_calls():
                operation, scope_of_call = self.operation(call), self.scopes.scope_of[id(call)]
                for _, argument in bound_arguments(operation.sem_params if operation else (), call):
                    for branch in branches(argument):
                        view = unview(*unread(branch, scope_of_call))
                        key = self.member(view.base, view.scope) if view.levels and view.counted else None
                        picked = [i for level in view.levels for i in level]
                        if key is None or any(self.keeps_dimension(i, view.scope) for i in picked):
                            continue  # a slice passes more than one semaphore: it shows no rank
                        counts, first = self._picked.setdefault(key, (set(), branch))
                        counts.add(len(picked))
        found = self._picked.get(self.member(node, scope))
        return (min(found[0]), found[1]) if found is not None and len(found[0]) == 1 else None

    def keeps_dimension(self, index: ast.expr, scope: Scope) -> bool:
        """Does the index keep its dimension: `a:b`, or one of Pallas's slices (`pl.ds(0, 2)`)?"""
        return isinstance(index, ast.Slice) or (
            isinstance(index, ast.Call) and self.resolves_to(index.func, scope, SLICES)
        )


def bound_arguments(params: tuple[SemParam, ...], call: ast.Call) -> list[tuple[SemParam, ast.expr]]:
    """The call's arguments for `params`, each with its parameter: by position (up to a
    `*args`) and by keyword."""
    by_position = {p.position: p for p in params if p.position is not None}
    by_name = {p.name: p for p in params}
    found = []
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        if index in by_position:
            found.append((by_position[index], argument))
    return found + [(by_name[k.arg], k.value) for k in call.keywords if k.arg in by_name]


_NAMED_TUPLE = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})
_DATACLASS = frozenset({"dataclasses.dataclass"})
_NOT_FIELDS = frozenset({"ClassVar", "InitVar", "KW_ONLY"})  # annotations that make no positional field
_BUILDERS = frozenset({"tuple", "list", "dict"})  # builtins whose result is a Python container
_DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.ListComp, ast.DictComp)


def _one_need(uses: set[tuple[bool, tuple[str, str]]]) -> bool:
    """Do a helper's parameter's uses need one thing: one DMA buffer parameter, or semaphore
    parameters that all take the same kinds (`semaphore_signal(sem)` then `semaphore_wait(sem)`)?"""
    if len({buffer for buffer, _ in uses}) != 1:
        return False
    buffer = next(iter(uses))[0]
    return len(uses) == 1 or (not buffer and len({KINDS_NEEDED.get(via) for _, via in uses}) == 1)


def _either(value: ast.expr) -> list[ast.expr]:
    """What `a or b` gives: `a` where it is true (a function), else `b`; any other value itself."""
    return value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) else [value]


def _one(operations: set[Operation | None]) -> Operation | None:
    """The one operation all of these are (as the releases that added them may differ, the
    earliest: any one runs), else None."""
    found = [o for o in operations if o is not None]
    if len(found) != len(operations) or not found:
        return None
    if len(found) == 1:
        return found[0]
    if len({o._replace(since=None) for o in found}) != 1:
        return None
    return min(found, key=lambda o: o.since or ())


def _plainly_not_none(node: ast.expr) -> bool:
    """Is `node` what cannot be None, whatever its names hold: a constant other than None, a
    view (`x.at[i]`) or a read (`x[...]`, `x[()]`)?"""
    if isinstance(node, ast.Constant):
        return node.value is not None
    return isinstance(node, ast.Subscript) and (is_at(node.value) or read_target(node) is not None)


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _returns(function: ast.FunctionDef) -> list[ast.Return]:
    """The def's own `return` statements (not those of a def, lambda or class inside it); a
    `return` without a value, or falling off the end, returns None (which indexing rejects)."""
    found: list[ast.Return] = []
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            pending.extend(ast.iter_child_nodes(node))
    return found


_LEAF_INDICES = (ast.Name, ast.Constant)  # a walk of either finds the node itself alone
_position = operator.attrgetter("lineno", "col_offset")  # where a node starts, as (line, column)
_PARTIAL_NAMES = frozenset(name.rpartition(".")[2] for name in PARTIAL)


@functools.cache
def _last_parts(targets: frozenset[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in targets)


_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr)
