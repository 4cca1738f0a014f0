"""What a rule reports about one place in the source."""

from __future__ import annotations

from dataclasses import dataclass


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
    replacement: str | None  # the suggested source text, None when there is no safe rewrite
    applied: bool  # whether the rewrite is in the returned source
    safety: str | None = None  # "safe" or "unsafe" when there is a replacement
    cell: int | None = None  # in a notebook: the 1-based cell number; lines count within it

    @property
    def fixable(self) -> bool:
        return self.replacement is not None

