"""The rule table: what each code means, whether it fixes, and an example for `semfix rules`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

Fix = Literal["safe", "safe with proof, else unsafe", "none"]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    fix: Fix  # the best the rule can do; a finding may still be report-only
    default: bool  # on without --select
    before: str
    after: str


_ALL = (
    Rule(
        "SEM001",
        "value-read-passed-as-semaphore",
        "A semaphore argument reads the Ref with [...] or [()]; pass the Ref itself.",
        "safe",
        True,
        "pltpu.semaphore_wait(sem[...], 1)",
        "pltpu.semaphore_wait(sem, 1)",
    ),
    Rule(
        "SEM002",
        "element-read-passed-as-semaphore",
        "`sems[i]` reads one semaphore of an array Ref; pass the view `sems.at[i]`. Safe where the "
        "code shows `sems` is a Ref, unsafe where it cannot tell, never for a tuple of Refs.",
        "safe with proof, else unsafe",
        True,
        "pl.semaphore_signal(sems[i], 1)",
        "pl.semaphore_signal(sems.at[i], 1)",
    ),
    Rule(
        "SEM003",
        "value-carried-through-variable",
        "A variable holds a value read from a semaphore Ref and is passed as the semaphore; pass "
        "the Ref and drop the variable when that is its only use.",
        "safe",
        True,
        "v = sem[...]\npl.semaphore_wait(v, 1)",
        "pl.semaphore_wait(sem, 1)",
    ),
    Rule(
        "SEM004",
        "non-scalar-semaphore",
        "A slice or a whole semaphore array is passed where one semaphore is needed "
        "(JAX: non-()-shaped semaphore); reported, never rewritten.",
        "none",
        True,
        "pl.semaphore_signal(sems.at[0:2], 1)",
        "pl.semaphore_signal(sems.at[0:2], 1)  # reported only",
    ),
    Rule(
        "SEM101",
        "deprecated-tpu-semaphore-op",
        "pltpu.semaphore_signal/wait/read were deprecated in JAX 0.10 and removed in 0.11; use "
        "the pl.semaphore_* functions.",
        "safe",
        False,
        "pltpu.semaphore_wait(sem, 1)",
        "pl.semaphore_wait(sem, 1)",
    ),
    Rule(
        "SEM102",
        "semaphore-wait-dec-keyword",
        "semaphore_wait's `dec=` keyword (JAX <= 0.7.1) is now `value=`.",
        "safe",
        False,
        "pl.semaphore_wait(sem, dec=2)",
        "pl.semaphore_wait(sem, value=2)",
    ),
)

RULES: Mapping[str, Rule] = {rule.code: rule for rule in _ALL}
SEM001, SEM002, SEM003, SEM004, SEM101, SEM102 = _ALL
#: Rules that rewrite correct code: no scan for bug shapes can rule them out.
MIGRATIONS = frozenset({SEM101.code, SEM102.code})
