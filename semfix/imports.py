"""SEM101's import edits, made where a careful person (or isort) would make them, and declared.

After the rewrite, an import of a migrated name that nothing in its scope uses any more loses
that name, in any scope; the statement goes when nothing of it is left, its blank lines and
comments handed to the next statement. Where the rewritten code needs the pallas module bound:

- inside a function, the pallas import takes the place of the `pltpu` import the rewritten
  names came from (before it, if it is still used): a lazy import stays lazy;
- at module level, it takes the place of that JAX import when it is dropped, or else joins
  that import's block at its sorted place (`import x` lines first, then `from` lines by module,
  as isort and ruff's I001 sort them). That block holds a JAX import, so in a sorted file it is
  the third-party section: the new import never lands after first-party or relative imports,
  and semfix never has to guess which of the other modules are first-party.

Every edit is recorded in ImportChanges, and equivalence.py accepts exactly those.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import GlobalScope, ImportAssignment, MetadataWrapper, ScopeProvider

from semfix.equivalence import PALLAS_PARENT  # `from jax.experimental import pallas as <alias>`
from semfix.engine.migrations import ImportChanges

__all__ = ["ImportChanges", "apply_import_changes", "place_in_block", "sorts_before_pallas", "without_unused"]

_Import = cst.Import | cst.ImportFrom


def pallas_import(alias: str) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"from {PALLAS_PARENT} import pallas as {alias}\n")  # type: ignore[return-value]


def apply_import_changes(module: cst.Module, changes: ImportChanges) -> cst.Module:
    """Only the imports the rewritten names came from lose names: an import that was unused
    before is the user's business."""
    if changes.add_pallas_as is None and not changes.maybe_unused:
        return module
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    editor = _Editor(changes, wrapper.resolve(ScopeProvider))
    module = wrapper.module.visit(editor)
    if editor.module_pending:  # the JAX import sits inside an `if` or `try`: libcst places it
        context = CodemodContext()
        AddImportsVisitor.add_needed_import(context, PALLAS_PARENT, "pallas", changes.add_pallas_as)
        module = AddImportsVisitor(context).transform_module(module)
        changes.added += 1
    return module


def _bound_name(alias: cst.ImportAlias, is_from: bool) -> str:
    if alias.asname is not None:
        return alias.evaluated_alias  # type: ignore[return-value]
    return alias.evaluated_name if is_from else alias.evaluated_name.split(".")[0]


def _import_of(statement: cst.BaseStatement) -> _Import | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
            return small
    return None


def _blank(line: cst.EmptyLine) -> bool:
    return line.comment is None


def _sorts_before_pallas(statement: cst.BaseStatement) -> bool:
    small = _import_of(statement)
    if not isinstance(small, cst.ImportFrom):
        return isinstance(small, cst.Import)
    module = None if small.relative or small.module is None else cst.Module([]).code_for_node(small.module)
    return sorts_before_pallas(False, module)


def sorts_before_pallas(plain_import: bool, module: str | None) -> bool:
    """Would isort put this import (`import x`, or `from <module> import`, module None when
    relative) ahead of `from jax.experimental import pallas`?"""
    if plain_import:
        return True  # `import x` lines come before `from` lines within a section
    return module is not None and (module == "__future__" or module.lower() <= PALLAS_PARENT)


def place_in_block(
    anchor: int, imports: Sequence[bool], blank_before: Sequence[bool], before: Callable[[int], bool]
) -> tuple[int, int]:
    """The block of imports around body[anchor] (no blank line inside it) starts at `start`;
    the pallas import goes at `at`, its sorted place in that block. Shared by both engines."""
    start = anchor
    while start > 0 and imports[start - 1] and not blank_before[start]:
        start -= 1
    end = anchor + 1
    while end < len(imports) and imports[end] and not blank_before[end]:
        end += 1
    return start, max((i + 1 for i in range(start, end) if before(i)), default=start)


def without_unused(statement: cst.SimpleStatementLine, unused: set[str]) -> cst.SimpleStatementLine | None:
    """The one-import statement minus the names it binds in `unused` (None when nothing of it
    is left). Shared by both engines: the quick one parses just that statement."""
    if not unused:
        return statement
    small = statement.body[0]
    is_from = isinstance(small, cst.ImportFrom)
    bound = [_bound_name(a, is_from) for a in small.names]  # type: ignore[union-attr]
    names = [a for a, name in zip(small.names, bound) if name not in unused]  # type: ignore[arg-type]
    if not names:
        return None
    if names[-1] is not small.names[-1] and not (is_from and small.lpar):  # type: ignore[union-attr,index]
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=[small.with_changes(names=names)])


class _Editor(cst.CSTTransformer):
    def __init__(self, changes: ImportChanges, scopes: object) -> None:
        super().__init__()
        self.changes, self.scopes = changes, scopes
        alias = changes.add_pallas_as
        at_module = [b for b in changes.bound_by if isinstance(scopes.get(b), GlobalScope)]  # type: ignore[attr-defined]
        self.module_pending = alias is not None and bool(at_module)
        self.local_sites = set() if alias is None else set(changes.bound_by) - set(at_module)
        self.placed: set[_Import] = set()

    def visit_Import(self, node: cst.Import) -> bool:
        return False  # keeps each import the same object, as the scopes and `bound_by` know it

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated.with_changes(body=self._edit_body(updated.body, top=False))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        if self.local_sites - self.placed:  # e.g. `def f(): import x` on one line: not lazy, but bound
            self.module_pending = True
        return updated.with_changes(body=self._edit_body(updated.body, top=True))

    def _edit_body(self, body: Sequence[cst.BaseStatement], *, top: bool) -> Sequence[cst.BaseStatement]:
        """The body with its unused migrated names dropped and the pallas import put in; the
        body unchanged if that would leave an indented block empty."""
        out: list[cst.BaseStatement] = []
        dropped: list[tuple[int, set[str]]] = []
        placed: list[_Import] = []
        carried: list[cst.EmptyLine] | None = None  # the leading lines of a dropped statement
        anchor: int | None = None  # where a kept module-level JAX import the rewrites used ended up
        swap = top and self.module_pending
        for statement in body:
            if carried is not None:  # as ruff's F401 fix: only the import's own lines go
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                carried = None
            small = _import_of(statement)
            if small is None:
                out.append(statement)
                continue
            kept, unused = self._without_unused(statement, small)
            if unused:
                dropped.append((self.changes.bound_by[small], unused))
            if small in self.local_sites or (swap and kept is None and small in self.changes.bound_by):
                out.append(pallas_import(self.changes.add_pallas_as).with_changes(leading_lines=statement.leading_lines))  # type: ignore[arg-type]
                placed.append(small)
                swap = False
                if kept is not None:
                    out.append(kept.with_changes(leading_lines=[]))
            elif kept is None:
                carried = list(statement.leading_lines)
            else:
                if top and anchor is None and small in self.changes.bound_by:
                    anchor = len(out)
                out.append(kept)
        if not out:
            return body
        for line, names in dropped:
            self.changes.dropped.setdefault(line, set()).update(names)
        self.placed.update(placed)
        self.changes.added += len(placed)
        if top and self.module_pending:
            if placed:
                self.module_pending = False
            elif anchor is not None:
                self._insert_sorted(out, anchor)
        return out

    def _insert_sorted(self, body: list[cst.BaseStatement], anchor: int) -> None:
        """Put the pallas import in the anchor's block of imports, at its sorted place."""
        imports = [_import_of(s) is not None for s in body]
        blank = [any(map(_blank, s.leading_lines)) for s in body]
        start, at = place_in_block(anchor, imports, blank, lambda i: _sorts_before_pallas(body[i]))
        new = pallas_import(self.changes.add_pallas_as)  # type: ignore[arg-type]
        if at == start:  # first in the block: it takes the block's leading lines
            new = new.with_changes(leading_lines=body[start].leading_lines)
            body[start] = body[start].with_changes(leading_lines=[])
        body.insert(at, new)
        self.changes.added += 1
        self.module_pending = False

    def _without_unused(self, statement: cst.SimpleStatementLine, small: _Import) -> tuple[cst.SimpleStatementLine | None, set[str]]:
        """The statement minus unused migrated names (None when nothing of it is left), and those names."""
        bound = [_bound_name(a, isinstance(small, cst.ImportFrom)) for a in small.names]  # type: ignore[union-attr]
        candidates = self.changes.maybe_unused if small in self.changes.bound_by else set()
        unused = {name for name in bound if name in candidates and self._unused(small, name)}
        return without_unused(statement, unused), unused

    def _unused(self, small: _Import, name: str) -> bool:
        """Every binding of `name` in the import's scope is an import nothing references."""
        scope = self.scopes.get(small)  # type: ignore[attr-defined]
        if scope is None:
            return False
        bindings = scope.assignments[name]
        return bool(bindings) and all(isinstance(b, ImportAssignment) and not b.references for b in bindings)
