"""SEM101's import edits, made where a careful person (or isort) would make them, and declared.

Where the pallas import goes is the README's SEM101 entry: inside a function, in place of the
`pltpu` import (a lazy import stays lazy); at module level, in place of a dropped JAX import or
at its sorted place in that import's block (`import x` lines first, then `from` lines by
module, as isort and ruff's I001 sort them). That block holds a JAX import, so in a sorted
file it is the third-party section: semfix never has to guess which modules are first-party.
An import statement left with no name goes, its blank lines and comments handed to the next.

SEM101 (semfix/rules/sem101.py) finds the statements and places; `without_unused` here
edits one import statement with libcst. Every edit is declared in ImportChanges, as the
tree the proof (semfix/rewrite/proof.py) holds the new text to.
"""

from __future__ import annotations

import libcst as cst

from semfix.rules.sem101 import ImportChanges

__all__ = ["ImportChanges", "without_unused"]


def _bound_name(alias: cst.ImportAlias, is_from: bool) -> str:
    if alias.asname is not None:
        return alias.evaluated_alias  # type: ignore[return-value]
    return alias.evaluated_name if is_from else alias.evaluated_name.split(".")[0]


def without_unused(statement: cst.SimpleStatementLine, unused: set[str]) -> cst.SimpleStatementLine | None:
    """The one-import statement minus the names it binds in `unused` (None when nothing of it
    is left). The engine parses just that statement."""
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
