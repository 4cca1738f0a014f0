"""Cut a failing case down to a small kernel that fails the same way: a fixture candidate.

The shrinker edits the case's plan, not its text (grammar.simpler: a block dropped, a wrap,
helper or form made plain, a spelling feature turned off), renders it again and judges the
mutants planted at sites of the same role with the same mutation. A plainer plan is kept
while the same class of failure (Failure.key) stays.
"""

from __future__ import annotations

from .grammar import Case, Plan, build, plan_for, simpler
from .judge import Failure, Judge


def _reproduces(plan: Plan, failure: Failure, judge: Judge, tries: int) -> Failure | None:
    case = build(plan)
    if failure.site < 0:
        only: list[tuple[int, str, str]] = []
    else:
        only = [
            (n, m, t)
            for n, site in enumerate(case.sites)
            if site.role == failure.role
            for m, t in site.mutants
            if m == failure.mutation
        ][:tries]
    verdict = judge.judge(case, only=only)
    return next((f for f in verdict.failures + verdict.notes if f.key() == failure.key()), None)


def shrink(failure: Failure, judge: Judge, budget: int = 30, tries: int = 3) -> tuple[Case, Failure]:
    """The plainest plan found within `budget` judgements that still fails as `failure` did."""
    plan, found = plan_for(failure.seed), failure
    progress = True
    while progress and budget > 0:
        progress = False
        for candidate in simpler(plan):
            budget -= 1
            if again := _reproduces(candidate, failure, judge, tries):
                plan, found, progress = candidate, again, True
                break
            if budget <= 0:
                break
    return build(plan), found


def fixture_text(failure: Failure) -> str:
    """The failing kernel with a header saying what it shows: a fixture candidate."""
    head = f"# oracle: {failure.kind} (seed {failure.seed}, {failure.role or 'correct kernel'} {failure.mutation})\n"
    detail = "".join(f"# {line}\n" for line in failure.detail.splitlines()[:6])
    return head + detail + failure.source
