"""What a rule is: its code, its docs and the examples that test it, in the rule's own module.

Each `semfix/rules/semNNN.py` opens with its docs (what it does, why it matters, an example,
its fix safety), defines `RULE`, then its logic: functions over the analysis's `Context`
(semfix/analysis/context.py) that decide the rule's findings and declare each fix as one
`Decision` (semfix/analysis/fixes.py). The engine's loop (semfix/engine/loop.py) calls the
rules' entry points in dispatch.py, which sets their order; a rule reuses another's logic by
calling it with its own `code` and words (as SEM003's `check` takes `words` and `arguments`).
What the engine must know of a rule it reads from `Rule` (tree, settling, tracking) and,
before it loads the rule, from the rule table (semfix/rules/table.py: default, text gate).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from semfix.rules.table import GATES, Gate

Fixability = Literal["safe", "safe with proof, else unsafe", "none"]


class Invalid(NamedTuple):
    """Code the rule must flag; `fixed` is the exact output of `semfix fix`, None if report-only."""

    source: str
    fixed: str | None
    select: tuple[str, ...] = ()  # extra rules to turn on (the off-by-default migrations)
    unsafe_fixes: bool = False
    target_jax: str | None = None  # the project's JAX floor (a migration renames only what it allows)


class Rule(NamedTuple):
    code: str
    name: str
    summary: str
    fix: Fixability  # the best the rule can do; a finding may still be report-only
    # The fix in one line, after `fix` in the README's rule table (`semfix rules --markdown`):
    # what it gives and where it holds back. The full story is the docs' `## Fix safety`.
    fix_note: str
    docs: str  # the rule module's docstring: what, why, example, fix safety
    valid: tuple[str, ...] = ()  # code the rule must leave alone
    invalid: tuple[Invalid, ...] = ()
    # What the driver (semfix/engine/) must know of the rule once it has parsed a file, so that
    # no module outside rules/ names a rule code (what it must know before, `gate` says):
    # whether the rule reads every reference in the file (the loop then hands it the tree)
    needs_tree: bool = False
    # whether a finding it leaves unfixed stays so after the other fixes: False when new `.at`
    # views may prove a Ref and make an unsafe fix safe, so the proof must run a second pass
    settles: bool = True
    # a spelling that, in a file whose tree the rule gets, has it read every access to every
    # name (`Context.tracking`): there the scopes record them from the start, where a plain
    # first run would be thrown away at the rule's finish (a tenth of tpu-inference's check with
    # every rule on)
    tracks: str = ""

    @property
    def gate(self) -> Gate:
        """The rule's row of the rule table: what a run knows of it before loading this module."""
        return GATES[self.code]
