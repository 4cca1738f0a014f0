"""What a rule reports about one place in the source, and the fix it offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Edit = tuple[int, int, str]  # (start, end, new text): character offsets into the source


@dataclass(frozen=True)
class Fix:
    """A finding's fix, as ruff's `Fix`: the flagged text's new text, how safe it is, and
    every edit of the decision it belongs to (a carried read's uses with the removed
    assignment, a rename with its import edits), where the engine makes it."""

    replacement: str  # the flagged source's new text, as reports show it ("" where it is removed)
    applicability: Literal["safe", "unsafe"]
    edits: tuple[Edit, ...] = ()  # the decision's edits, sorted; () where the fix is not made
    #: Why an unsafe fix is unsafe, where it is a fact no log settles either: "rank", the file
    #: does not show how many indices pick one semaphore (JAX's "must be a Ref" says only that
    #: the argument is no Ref); "value", `X[i][j]` made `X[i].at[j]` where `X[i]` may itself be a
    #: value read out of a Ref (the same error either way); "kind", `X[i][()]` made `X.at[i]` where
    #: `X` may be a tuple of Refs (then `X[i]` is the fix). `semfix explain --fix` never makes it.
    doubt: Literal["rank", "value", "kind"] | None = None


@dataclass(frozen=True)
class Finding:
    """One semaphore argument a rule flagged; positions are 1-based, columns in characters."""

    rule: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    original: str  # the argument's source text, exactly as written
    fix: Fix | None  # None when there is no safe rewrite
    applied: bool  # whether the rewrite is in the returned source
    cell: int | None = None  # in a notebook: the 1-based cell number; lines count within it
    # The lines of the evidence it follows from (the assignment a carried read comes through,
    # the allocation a kind or a shape is read from), numbered as `line` is; a change there
    # can make or unmake it, so `semfix review` counts them as its lines.
    related: tuple[int, ...] = ()

    @property
    def replacement(self) -> str | None:
        """The suggested source text, None when there is no fix."""
        return None if self.fix is None else self.fix.replacement

    @property
    def safety(self) -> str | None:
        """ "safe" or "unsafe" when there is a fix."""
        return None if self.fix is None else self.fix.applicability

    @property
    def fixable(self) -> bool:
        return self.fix is not None
