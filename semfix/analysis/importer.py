"""The import edits a migration needs: where a new import goes, and which imports it may drop.

A migration (the rename to `pl.` today) renames references as text, then asks `edit_imports` for the import
edits the renames need, as ruff's `get_or_import_symbol` or libcst's `AddImportsVisitor` would
make them. It imports no rule: its inputs are the tree, the text, the accesses the scope
builder recorded, the reads the renames took away, and the module to import (`Symbol`); its
output is text edits, each declared in `ImportChanges` as the tree the proof
(semfix/engine/proof.py) holds the new text to.

Placement (where the new import goes) is import_placement.py's; pruning (which imported names
may go) is import_pruning.py's; what a request and its declared changes are, import_changes.py's.

What it cannot make sure of raises `Unsure`, whose words say why: the caller reports without
a fix.
"""

from __future__ import annotations

import ast
import copy
import re

from semfix.analysis.import_changes import (
    Edit,
    ImportChanges,
    ModuleView,
    Request,
    Symbol,
    Unsure,
    own_lines,
)
from semfix.analysis.import_placement import (
    bound_name,
    insert_sorted,
    module_sorted_in_place,
    runs_first,
    sorted_in_place,
    sorts_first,
)
from semfix.analysis.import_pruning import OPAQUE_CODE, Site, resolved_sites, without_unused
from semfix.analysis.nodes import Text, end_of, walk
from semfix.analysis.scopes import Access, Scope

__all__ = [
    "OPAQUE_CODE",
    "Edit",
    "ImportChanges",
    "Request",
    "Symbol",
    "Unsure",
    "bound_name",
    "edit_imports",
    "runs_first",
    "without_unused",
]


def edit_imports(
    tree: ast.Module,
    text: Text,
    accesses: dict[str, list[Access]],
    request: Request,
    declared: ImportChanges,
    nodes: list[ast.AST] | None = None,
) -> list[Edit]:
    """The import edits `request` needs, as text edits declared in `declared`. `accesses` is
    every access to every name (a `Tracking` scope builder's); `nodes`, every node of the tree
    if the caller has them. Unsure for the rare placements it does not handle."""
    module = ModuleView(tree, text, walk(tree) if nodes is None else nodes, accesses)
    source, alias, add = text.text, request.alias, request.add
    unbound = [a.name for a in accesses.get(alias, ()) if not a.scope.lookup(alias)[1]] if add else []
    if unbound:  # the import added could bind it
        raise Unsure(f"`{alias}` is read where nothing binds it, at line {unbound[0].lineno}")
    first_break = re.search(r"\r\n|\r|\n", source + "\n")
    assert first_break is not None  # the `\n` added at the latest
    new_import = request.symbol.text(alias, first_break.group())
    edits: list[Edit] = []
    emptied: dict[int, int] = {}
    kept_at_module: list[ast.stmt] = []
    placed = False
    at_module_reads: list[tuple[ast.Name, Scope]] = []
    sites = resolved_sites(module, request, at_module_reads)
    dropped = {id(site.statement) for site in sites if not any(site.keep) and not any(site.move)}
    for site in sites:  # a name moves where its new import stands sorted, else stays and is reported
        if not any(site.move):
            continue
        assert isinstance(site.statement, ast.ImportFrom)  # `resolved_sites` moves only from-imports
        moving = [alias for alias, moved in zip(site.statement.names, site.move) if moved]
        if module_sorted_in_place(module, site.statement, request.symbol.module, dropped, not any(site.keep)):
            request.moved_from.append((site.statement, moving))
        else:
            request.unmoved.append((site.statement, moving))
            site.keep = [kept or moved for kept, moved in zip(site.keep, site.move)]
            site.move = [False] * len(site.move)
    unswapped: list[ast.stmt] = []  # dropped at module level, where the new import would not stand sorted
    at: int | None = None  # where the new import goes at module level: above tree.body[at]
    for site in sites:
        statement = site.statement
        lines = own_lines(text, statement)
        if lines is None:
            raise Unsure(f"an import that shares its line, at line {statement.lineno}")
        start, end = lines
        indent = source[start : start + statement.col_offset]
        new_text = source[start:end]
        if not all(site.keep):
            cut = copy.copy(statement)
            cut.names = [a for a, kept in zip(statement.names, site.keep) if kept]
            if cut.names:
                new_text = indent + without_unused(source[start + statement.col_offset : end], site.keep)
            else:
                new_text = ""
            declared.replace(statement, [cut] if cut.names else [], site.holder)
        if any(site.move):  # names kept for importers, imported from where they stay
            new_text = _moved(statement, site, source[start:end], new_text, request, declared, first_break.group())
        at_module = site.body is tree.body  # not under an `if` or a `try`, nor in a function
        local = add and site.local
        swap = (
            add
            and at_module
            and not new_text
            and not placed
            and sorted_in_place(module, statement, request.symbol, dropped)
        )
        if at_module and not new_text and not swap:
            unswapped.append(statement)
        if not new_text and not (local or swap):
            emptied[id(site.body)] = emptied.get(id(site.body), 0) + 1
            index = next(i for i, s in enumerate(site.body) if s is statement)
            # libcst drops the lines (blank or comments) above the last statement of a block with
            # it, which a text edit of the statement's lines keeps
            gap = index == 0 or end_of(site.body[index - 1])[0] + 1 != statement.lineno
            if emptied[id(site.body)] == len(site.body) or (index == len(site.body) - 1 and gap):
                raise Unsure(f"an import dropped at the end of a block, at line {statement.lineno}")
        if local or swap:
            first = bool(new_text) and sorts_first(statement, request.symbol)  # a kept import may sort first
            new_text = new_text + indent + new_import if first else indent + new_import + new_text
            declared.add(statement, request.symbol.statement(alias), site.holder, before=not first)
            if swap:
                placed, at = True, tree.body.index(statement)
        elif new_text and at_module:
            kept_at_module.append(statement)
        if new_text != source[start:end]:
            edits.append((start, end, new_text))
    if add and not placed and not all(site.local for site in sites):
        if not kept_at_module and not unswapped:
            raise Unsure(f"no import block to put the {request.symbol.name} import in")
        at, edit = insert_sorted(module, (kept_at_module or unswapped)[0], new_import, request, declared)
        edits.append(edit)
    if at is not None and any(runs_first(tree, name, scope, at) for name, scope in at_module_reads):
        raise Unsure(f"the `{alias}` import added would go below code that may run a renamed reference on import")
    return edits


def _moved(
    statement: ast.stmt,
    site: Site,
    old_text: str,
    new_text: str,
    request: Request,
    declared: ImportChanges,
    newline: str,
) -> str:
    """The statement's new text with the names `site.move` marks imported from `request.symbol`'s
    module: the statement itself with its module renamed (its comments kept) when nothing else of
    it stays, else a new `from` line above what stays (the module sorts first)."""
    assert isinstance(statement, ast.ImportFrom)  # `resolved_sites` moves only from-imports
    names = [ast.alias(a.name, a.asname) for a, moved in zip(statement.names, site.move) if moved]
    line = ast.ImportFrom(request.symbol.module, names, 0)
    indent = old_text[: statement.col_offset]
    if new_text:
        declared.add(statement, line, site.holder, before=True)
        return indent + ast.unparse(line) + newline + new_text
    declared.replace(statement, [line], site.holder)
    kept = without_unused(old_text[statement.col_offset :], site.move)
    head = re.match(rf"from[ \t]+{re.escape(request.loads)}(?=[ \t])", kept)
    return indent + (f"from {request.symbol.module}{kept[head.end() :]}" if head else ast.unparse(line) + newline)
