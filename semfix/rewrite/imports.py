"""The import edits of a rename to another module, made where a careful person (or isort) would make them, and declared.

Where the pallas import goes is the README's entry for the rule that renames (semfix/rules/): inside a function, in place of the
`pltpu` import (a lazy import stays lazy); at module level, in place of a dropped JAX import or
at its sorted place in that import's block (`import x` lines first, then `from` lines by
module, as isort and ruff's I001 sort them). That block holds a JAX import, so in a sorted
file it is the third-party section: semfix never has to guess which modules are first-party.
An import statement left with no name goes, its blank lines and comments handed to the next.

The rule (semfix/rules/) finds the statements and places; `without_unused` here
edits one import statement with libcst. Every edit is declared in ImportChanges, as the
tree the proof (semfix/engine/proof.py) holds the new text to.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field


@dataclass
class ImportChanges:
    """Import edits as the proof sees them: each node whose id is a key becomes the nodes given (a
    reference its `pl.` spelling; an import statement none, itself cut down, or the pallas
    import beside it). `declare` turns the old tree into the declared one."""

    replaced: dict[int, tuple[ast.AST, list[ast.AST]]] = field(default_factory=dict)  # the old node too: its id stays its
    holders: dict[int, ast.AST] = field(default_factory=dict)  # the nodes holding them, by id

    def replace(self, node: ast.AST, new: list[ast.AST], holder: ast.AST) -> None:
        self.replaced[id(node)] = node, new
        self.holders[id(holder)] = holder

    def add(self, statement: ast.stmt, new: ast.stmt, holder: ast.AST, *, before: bool) -> None:
        now = self._now(statement)
        self.replace(statement, [new, *now] if before else [*now, new], holder)

    def _now(self, node: ast.AST) -> list[ast.AST]:
        return self.replaced.get(id(node), (node, [node]))[1]

    def declare(self) -> None:
        """Make the declared tree, in place: each replaced node swapped in its holder."""
        for node in self.holders.values():
            for name, value in ast.iter_fields(node):
                if isinstance(value, list):
                    value[:] = [new for item in value for new in self._now(item)]
                elif id(value) in self.replaced:
                    setattr(node, name, self.replaced[id(value)][1][0])


def without_unused(snippet: str, keep: list[bool]) -> str:
    """One import statement's text, from its first token through its line break, keeping the
    names `keep` marks (at least one): libcst fixes the commas and keeps the comments."""
    import libcst as cst  # only files whose imports are edited pay for it

    statement = snippet.rstrip("\r\n")
    module = cst.parse_module(statement + "\n")  # libcst loses a lone `\r` at the end of a module
    line: cst.SimpleStatementLine = module.body[0]  # type: ignore[assignment]
    small: cst.Import | cst.ImportFrom = line.body[0]  # type: ignore[assignment]
    names = [alias for alias, kept in zip(small.names, keep) if kept]  # type: ignore[arg-type]
    if names[-1] is not small.names[-1] and not (isinstance(small, cst.ImportFrom) and small.lpar):  # type: ignore[index]
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    kept = line.with_changes(body=[small.with_changes(names=names)])
    return module.with_changes(body=[kept]).code[:-1] + snippet[len(statement) :]
