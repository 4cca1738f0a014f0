"""A fix: every edit of one decision, with its applicability and the tree change it declares.

A rule that decides to fix something declares one `Fix` in the Context (`Context.make`): its
text edits, as (start, end, new text) offsets into the source, and the changes the new tree
must show, each of which makes its part of the declared tree in place (`declare`). A carried
read's plan is one Fix (every use rewritten and the assignment removed, or nothing); so are a
file's renames into another module with their import edits. The driver (semfix/engine/run.py)
applies the Fixes and proves the result through one `apply_and_prove`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal, Protocol

from semfix.analysis.nodes import Rewrite

Edit = tuple[int, int, str]


class Change(Protocol):
    """A part of the declared tree: `declare` turns the old tree into it, in place."""

    def declare(self) -> None: ...


@dataclass(frozen=True, eq=False)
class Removal:
    """A statement removed with its lines."""

    body: list[ast.stmt]  # the statement list that holds it
    statement: ast.stmt

    def declare(self) -> None:
        self.body.remove(self.statement)


@dataclass(frozen=True, eq=False)
class Fix:
    rule: str
    edits: tuple[Edit, ...]
    changes: tuple[Change, ...]
    applicability: Literal["safe", "unsafe"] = "safe"
    # False when a second pass may find more to fix whatever the edits (a removed binding, a
    # rename into another module): the proof then runs it instead of settling by construction
    settles: bool = True

    @classmethod
    def of(cls, rule: str, rewrite: Rewrite, applicability: Literal["safe", "unsafe"] = "safe") -> Fix:
        """The fix of one argument (or keyword): the rewrite's edits and its node."""
        return cls(rule, tuple(rewrite.edits), (rewrite,), applicability)

    @property
    def rewrites(self) -> list[Rewrite]:
        """The arguments (and keywords) it rewrites."""
        return [change for change in self.changes if isinstance(change, Rewrite)]

    def joined(self, rewrite: Rewrite) -> Fix:
        """This fix with one more argument rewritten as part of the same decision."""
        return Fix(self.rule, (*self.edits, *rewrite.edits), (*self.changes, rewrite), self.applicability, self.settles)
