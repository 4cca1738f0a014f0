"""The rule table: what each code means, whether it fixes, and an example for `semfix rules`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    summary: str
    fix: Literal["safe", "unsafe", "none"]
    before: str
    after: str


SEM001 = Rule(
    code="SEM001",
    name="value-read-passed-as-semaphore",
    summary="A semaphore argument reads the Ref with [...] or [()]; pass the Ref itself.",
    fix="safe",
    before="pltpu.semaphore_wait(sem[...], 1)",
    after="pltpu.semaphore_wait(sem, 1)",
)

RULES: Mapping[str, Rule] = {rule.code: rule for rule in (SEM001,)}
