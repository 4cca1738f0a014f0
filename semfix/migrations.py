"""SEM101 on the stdlib `ast`: `pltpu.semaphore_*` references renamed `pl.semaphore_*` as text.

The quick engine takes the renames that need no import edit: the file already binds
`jax.experimental.pallas` at module level, and the name each rewritten reference starts from
stays in use, by the same module-level import, after the rewrite. Any other file (an import to
add, drop or cut down, a reference outside a call, a name bound by more than its imports) it
defers to the libcst engine, whose import editor (semfix/imports.py) places those edits.
The decisions mirror transform.py's `_migrate`, `_alias_usable` and `_schedule_import_removal`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:
    from semfix.quick import _Scope, _ScopeBuilder

DEPRECATED_TPU = {f"jax.experimental.pallas.tpu.semaphore_{op}": f"semaphore_{op}" for op in ("signal", "wait", "read")}
DEFAULT_PALLAS_ALIAS = "pl"
_FUNCTIONS = frozenset(DEPRECATED_TPU.values())


class NeedsLibcst(Exception):
    """The migration needs what only the libcst engine does (import edits); the reason says which."""


@dataclass
class ImportChanges:
    """SEM101's import edits, declared for equivalence.check_rewrite. The libcst engine's
    transformer fills the first three and imports.apply_import_changes the rest; the quick
    engine fills the rest from its `ast` analysis. Kept here so the quick path needs no libcst."""

    add_pallas_as: str | None = None  # bind jax.experimental.pallas to this name where needed
    maybe_unused: set[str] = field(default_factory=set)  # names whose import may now be unused
    bound_by: dict[object, int] = field(default_factory=dict)  # the imports (libcst nodes) the rewritten names came from, and their lines
    dropped: dict[int, set[str]] = field(default_factory=dict)  # line of an old import: names it lost
    added: int = 0  # pallas imports added
    migrated_to: str | None = None  # the name the rewritten references use for the pallas module


@dataclass
class Reference:
    node: ast.Name | ast.Attribute
    scope: _Scope
    function: str  # semaphore_signal, semaphore_wait or semaphore_read


def pallas_alias(tree: ast.Module) -> str | None:
    """The first module-level name bound to `jax.experimental.pallas` (as evidence.py finds it)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "jax.experimental.pallas" and alias.asname:
                    return alias.asname
        elif isinstance(statement, ast.ImportFrom) and statement.module == "jax.experimental" and not statement.level:
            for alias in statement.names:
                if alias.name == "pallas":
                    return alias.asname or "pallas"
    return None


def references(tree: ast.Module, scopes: _ScopeBuilder, qualified) -> Iterator[Reference]:  # type: ignore[no-untyped-def]
    """Every reference to a deprecated TPU semaphore function; each must be a call's callee,
    whose scope the scope builder knows."""
    callees = {id(call.func): call for call in scopes.calls}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Name):
            name = node.id
        else:
            continue
        if name not in _FUNCTIONS:
            continue
        call = callees.get(id(node))
        if call is None:
            if isinstance(node, ast.Attribute) and not isinstance(_root(node), ast.Name):
                continue  # `f().semaphore_wait`: resolves to no import
            raise NeedsLibcst("SEM101: a reference outside a call")
        scope = scopes.scope_of[id(call)]
        names = qualified(node, scope)
        if names and len(names) == 1 and next(iter(names)) in DEPRECATED_TPU:
            yield Reference(node, scope, DEPRECATED_TPU[next(iter(names))])


def alias_usable(scope: _Scope, alias: str, *, added: bool) -> bool:
    """`alias` at this spot is the module's pallas import, or free when that import is to be
    `added` (`_alias_usable`)."""
    _, bindings = scope.lookup(alias)
    return not bindings if added else len(bindings) == 1 and bindings[0].kind == "import"


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def check_imports_unchanged(tree: ast.Module, rewritten: list[ast.Name | ast.Attribute]) -> None:
    """Raise NeedsLibcst unless the import each rewritten reference starts from stays used:
    its name is bound only by module-level imports and is still loaded after the rewrite."""
    roots = {id(_root(node)) for node in rewritten}
    names = {_root(node).id for node in rewritten}  # type: ignore[attr-defined]
    loads = {name: 0 for name in names}
    module_imports = {id(s) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in loads:
            if not isinstance(node.ctx, ast.Load):
                raise NeedsLibcst("SEM101: the imported name is rebound")
            if id(node) not in roots:
                loads[node.id] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = {_bound(alias, node) for alias in node.names} & names
            if bound and id(node) not in module_imports:
                raise NeedsLibcst("SEM101: a local import")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            raise NeedsLibcst("SEM101: the imported name is rebound")
        elif isinstance(node, ast.arg) and node.arg in names:
            raise NeedsLibcst("SEM101: the imported name is rebound")
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names):
            raise NeedsLibcst("SEM101: the imported name is rebound")
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and getattr(node, "name", None) in names:
            raise NeedsLibcst("SEM101: the imported name is rebound")
    if not all(loads.values()):
        raise NeedsLibcst("SEM101: an import may become unused")


def _bound(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]
