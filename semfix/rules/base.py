"""What a rule is: its code, its docs and the examples that test it, in the rule's own module.

Each `semfix/rules/semNNN.py` opens with its docs (what it does, why it matters, an example,
its fix safety), defines `RULE`, then its logic: functions over the engine's `Context`
(semfix/engine/context.py) that decide the rule's findings and declare its rewrites. The
engine's loop (semfix/engine/analysis.py) calls them; a rule reuses another's logic by calling
it with its own `code` and words (as SEM003's `check` takes `words` and `arguments`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Fix = Literal["safe", "safe with proof, else unsafe", "none"]


@dataclass(frozen=True)
class Invalid:
    """Code the rule must flag; `fixed` is the exact output of `semfix fix`, None if report-only."""

    source: str
    fixed: str | None
    select: tuple[str, ...] = ()  # extra rules to turn on (the off-by-default migrations)
    unsafe_fixes: bool = False


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    fix: Fix  # the best the rule can do; a finding may still be report-only
    # The fix in one line, after `fix` in the README's rule table (`semfix rules --markdown`):
    # what it gives and where it holds back. The full story is the docs' `## Fix safety`.
    fix_note: str
    default: bool  # on without --select
    docs: str  # the rule module's docstring: what, why, example, fix safety
    valid: tuple[str, ...] = field(default=(), repr=False)  # code the rule must leave alone
    invalid: tuple[Invalid, ...] = field(default=(), repr=False)
