"""Where a new import goes.

Placement. The new import reuses a module-level name already bound to the module
(`bound_name`); else it goes inside a function beside the import whose reads went (a lazy
import stays lazy); at module level in place of a dropped import where it stands sorted there,
or at its sorted place in that import's block (`import x` lines first, then `from` lines by
module and by the name imported, as isort and ruff's I001 sort them). That block holds the
dropped module's import, so in a
sorted file it is that module's section: no guess about which modules are first-party.
"""

from __future__ import annotations

import ast

from semfix.analysis.import_changes import Edit, ImportChanges, ModuleView, Request, Symbol, own_lines
from semfix.analysis.nodes import Located, end_of
from semfix.analysis.scopes import Scope


def bound_name(tree: ast.Module, symbol: Symbol) -> str | None:
    """The first module-level name bound to `symbol`'s module (as evidence.py finds it)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == symbol.module and alias.asname:
                    return alias.asname
        elif isinstance(statement, ast.ImportFrom) and statement.module == symbol.parent and not statement.level:
            for alias in statement.names:
                if alias.name == symbol.name:
                    return alias.asname or symbol.name
    return None


def runs_first(tree: ast.Module, node: Located, scope: Scope, at: int) -> bool:
    """May `node` (read in `scope`) run on import before `tree.body[at]`, where an import binds
    its name? Yes if it is above it and runs on import itself (at module level, in a class
    body, a decorator, a default argument), or is in a function there that code above `at`
    may call (anything but imports and plain function definitions may)."""
    where = (node.lineno, node.col_offset)
    index = next(i for i, s in enumerate(tree.body) if (s.end_lineno, s.end_col_offset) >= where)
    if index >= at:
        return False
    while scope.kind != "function":
        if scope.parent is None:
            return True
        scope = scope.parent
    return not all(_quiet(statement) for statement in tree.body[index:at])


def _quiet(statement: ast.stmt) -> bool:
    """Does running this statement call nothing (an import, a def without decorators or calls
    in its defaults and annotations)?"""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        evaluated = [statement.args, *([statement.returns] if statement.returns else [])]
        calls = any(isinstance(n, ast.Call) for e in evaluated for n in ast.walk(e))
        return not statement.decorator_list and not calls
    return isinstance(statement, (ast.Import, ast.ImportFrom))


def insert_sorted(
    module: ModuleView, anchor: ast.stmt, new_import: str, request: Request, declared: ImportChanges
) -> tuple[int, Edit]:
    """Above which module-level statement, and as what edit, the new import goes at its sorted
    place in the module-level block of imports around `anchor` (imports alone on their lines,
    no blank line between), declared in `declared`."""
    body, text, starts = module.tree.body, module.text.text, module.text.starts

    def imported(i: int) -> bool:
        s = body[i]
        return (
            isinstance(s, (ast.Import, ast.ImportFrom))
            and s.names[0].name != "*"
            and own_lines(module.text, s) is not None
        )

    def gap(i: int) -> bool:  # a blank line between body[i - 1] and body[i]
        between = range(end_of(body[i - 1])[0] + 1, body[i].lineno)
        return any(not text[starts[n - 1] : starts[n]].strip() for n in between)

    start = end = body.index(anchor)
    while start > 0 and imported(start - 1) and not gap(start):
        start -= 1
    while end + 1 < len(body) and imported(end + 1) and not gap(end + 1):
        end += 1
    at = start  # above the block, unless an import in it sorts first: then below the last that does
    for i in range(start, end + 1):
        statement = body[i]
        assert isinstance(statement, (ast.Import, ast.ImportFrom))  # `imported`, and `anchor` an import site's
        if sorts_first(statement, request.symbol):
            at = i + 1
    before = at == start  # nothing in the block sorts first
    neighbour = body[start] if before else body[at - 1]
    if before:
        offset = starts[neighbour.lineno - 1]
    else:
        lines = own_lines(module.text, neighbour)
        assert lines is not None  # alone on their lines: `imported`, and `anchor` an import site's
        offset = lines[1]
    declared.add(neighbour, request.symbol.statement(request.alias), module.tree, before=before)
    return at, (offset, offset, new_import)


def sorts_first(statement: ast.Import | ast.ImportFrom, symbol: Symbol) -> bool:
    """Would ruff's I001 (isort's profile) put this import ahead of `from {symbol.parent}
    import {symbol.name}`? Within a section `import x` lines come first, then `from` lines by
    module, and `from` lines of one module by the name they import (`pallas` before
    `shard_map`); `__future__` comes first of all, relative imports last."""
    if isinstance(statement, ast.Import):
        return True
    module: str = statement.module or ""
    if statement.level:
        return False
    return module == "__future__" or (module.lower(), _member(statement.names[0].name)) < (
        symbol.parent.lower(),
        _member(symbol.name),
    )


def _member(name: str) -> tuple[int, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def sorted_in_place(module: ModuleView, statement: ast.stmt, symbol: Symbol, dropped: set[int]) -> bool:
    """Would the new import stand sorted where `statement` (dropped) is, between the imports
    kept above and below it in its block (no blank line between)?"""
    above, below = _neighbours(module, statement, dropped)
    return (above is None or sorts_first(above, symbol)) and (below is None or not sorts_first(below, symbol))


def module_sorted_in_place(module: ModuleView, statement: ast.stmt, name: str, dropped: set[int], below: bool) -> bool:
    """Would `from {name} import ...` stand sorted in `statement`'s place (`below`: with the
    imports below it too, else with `statement`, which sorts after, kept under it)? Only where
    its neighbours import other modules: ruff's I001 would merge one of the same module."""
    if statement not in module.tree.body:
        return False
    above, under = _neighbours(module, statement, dropped)

    def first(other: ast.Import | ast.ImportFrom) -> bool | None:  # None: the same module
        if isinstance(other, ast.Import):
            return True
        if other.level:
            return False
        return None if other.module == name else (other.module or "").lower() < name.lower()

    return (above is None or first(above) is True) and (not below or under is None or first(under) is False)


def _neighbours(
    module: ModuleView, statement: ast.stmt, dropped: set[int]
) -> tuple[ast.Import | ast.ImportFrom | None, ast.Import | ast.ImportFrom | None]:
    """The imports kept just above and below `statement` in its module-level block (no blank
    line between)."""
    body, text, starts = module.tree.body, module.text.text, module.text.starts

    def neighbour(index: int, step: int) -> ast.Import | ast.ImportFrom | None:
        while 0 <= index + step < len(body):
            before, after = (body[index + step], body[index]) if step < 0 else (body[index], body[index + step])
            between = range(end_of(before)[0] + 1, after.lineno)
            if any(not text[starts[n - 1] : starts[n]].strip() for n in between):
                return None  # a blank line ends the block
            index += step
            statement = body[index]
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                return None
            if id(statement) not in dropped:
                return statement
        return None

    index = body.index(statement)
    return neighbour(index, -1), neighbour(index, 1)
