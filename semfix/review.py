"""Review mode: only what a branch changed, and only findings on the lines it touched."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from semfix.files import SOURCE_SUFFIXES
from semfix.git import changed_lines, default_base, resolve_base
from semfix.runner import RunOutcome, run
from semfix.settings import Settings


class ReviewError(Exception):
    """Review mode cannot work here (not a git work tree, or an unknown base revision)."""


@dataclass(frozen=True)
class Review:
    base: str
    outcome: RunOutcome  # findings already narrowed to changed lines


def review(
    paths: Sequence[Path], *, base: str | None, settings: Settings, excludes: Sequence[str] = (), jobs: int = 1
) -> Review:
    """Check the files changed since `base` and keep the findings that touch a changed line.

    A finding on an untouched line of a changed file is not the author's doing. A notebook's
    lines are cell-relative, so a changed notebook keeps all its findings.
    """
    here = Path.cwd()
    named = base or default_base(here)
    base = resolve_base(here, named)
    changed = changed_lines(here, base) if base is not None else None
    if base is None or changed is None:
        raise ReviewError(f"cannot compare with {named!r}: not a git work tree, or no such revision")
    roots = [Path(os.path.abspath(p)) for p in paths] or [here]
    selected = [
        Path(os.path.relpath(path, here))
        for path in sorted(changed)
        if path.suffix in SOURCE_SUFFIXES
        and path.exists()
        and any(path == root or root in path.parents for root in roots)
    ]
    outcome = (
        run(selected, settings=settings, apply_fixes=False, write=False, excludes=excludes, force_exclude=True, jobs=jobs)
        if selected
        else RunOutcome()
    )
    for result in outcome.files:
        lines = changed.get(Path(os.path.abspath(result.path)), set())
        if result.path.suffix != ".ipynb":
            result.findings = tuple(
                f for f in result.findings if any(line in lines for line in range(f.line, f.end_line + 1))
            )
    return Review(base, outcome)
