"""A decision to fix: every edit it makes, the findings it fixes, and the tree change it declares.

A rule that decides to fix something declares one `Decision` in the Context (`Context.make`):
its text edits, as (start, end, new text) offsets into the source, the findings it fixes
(each carries its `Fix`, with the decision's edits, in what a run returns), and the changes the
new tree must show, each of which makes its part of the declared tree in place (`declare`).
A carried read's plan is one decision (every use rewritten and the assignment removed, or
nothing); so are a file's renames into another module with their import edits. The driver
(semfix/engine/run.py) makes them all and proves the result through one `apply_and_prove`.
"""

from __future__ import annotations

import ast
from typing import Protocol

from semfix.analysis.nodes import Rewrite
from semfix.findings import Edit


class Change(Protocol):
    """A part of the declared tree: `declare` turns the old tree into it, in place."""

    def declare(self) -> None: ...


class Removal:
    """A statement removed with its lines."""

    __slots__ = ("body", "statement")

    def __init__(self, body: list[ast.stmt], statement: ast.stmt) -> None:
        self.body = body  # the statement list that holds it
        self.statement = statement

    def declare(self) -> None:
        self.body.remove(self.statement)


class Decision:
    __slots__ = ("rule", "edits", "changes", "settles", "findings")

    def __init__(
        self,
        rule: str,
        edits: tuple[Edit, ...],
        changes: tuple[Change, ...],
        settles: bool = True,
        findings: tuple[int, ...] = (),
    ) -> None:
        self.rule, self.edits, self.changes = rule, edits, changes
        # False when a second pass may find more to fix whatever the edits (a removed binding, a
        # rename into another module): the proof then runs it instead of settling by construction
        self.settles = settles
        self.findings = findings  # the findings it fixes, by index in the Context's list

    @classmethod
    def of(cls, rule: str, rewrite: Rewrite) -> Decision:
        """The decision to rewrite one argument (or keyword): the rewrite's edits and its node."""
        return cls(rule, tuple(rewrite.edits), (rewrite,))

    @property
    def rewrites(self) -> list[Rewrite]:
        """The arguments (and keywords) it rewrites."""
        return [change for change in self.changes if isinstance(change, Rewrite)]

    def joined(self, rewrite: Rewrite, finding: int) -> Decision:
        """This decision with one more argument rewritten, for one more finding."""
        edits, changes = (*self.edits, *rewrite.edits), (*self.changes, rewrite)
        return Decision(self.rule, edits, changes, self.settles, (*self.findings, finding))
