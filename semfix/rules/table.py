"""The rule table: each rule's code, the module that holds it, and what a run must know of the
rule before it parses a file: whether it is on by default, whether it reads the JAX floor, the
spelling a file needs for it to fire (its text gate) and whether its fix may drop an import.

It is data, apart from the rules' modules, as ruff keeps its codes apart from its rules: the
byte scan, the selection and the run's questions read it alone, so a run whose files the byte
scan clears (most files of a repository, a pre-commit batch) never imports a rule, nor the
analysis below them (`semfix.rules.RULES` imports a rule's module when it is first asked).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache
from typing import Any, NamedTuple

from semfix.catalog import MIGRATION_GATE


class Gate(NamedTuple):
    """One row: what a run knows of a rule before loading it."""

    module: str  # semfix/rules/<module>.py, which defines the rule's `RULE`
    default: bool  # on without --select
    # the patterns a file must all match for the rule to fire; () when the skim of semaphore
    # and DMA arguments (semfix/engine/skim.py) decides, as for every rule on those arguments
    text_gate: tuple[str, ...] = ()
    # whether it reads the project's JAX floor (`Settings.target_jax`): the floor is read from
    # the project's files only where such a rule runs
    reads_floor: bool = False
    # whether its fix may drop an import left unused, which another module of the run may
    # import by name (the CLI then tells it those names: `Settings.imported_by_run`)
    drops_imports: bool = False

    def spelled_in(self, text: str | bytes) -> bool:
        """Does `text` match every pattern of the rule's text gate (False for a rule without one)?"""
        kind = str if isinstance(text, str) else bytes
        return bool(self.text_gate) and all(_search(p, kind)(text) for p in self.text_gate)


#: Each code's row, in the order `semfix rules` lists them.
GATES: dict[str, Gate] = {
    "SEM001": Gate("sem001", default=True),
    "SEM002": Gate("sem002", default=True),
    "SEM003": Gate("sem003", default=True),
    "SEM004": Gate("sem004", default=True),
    "SEM005": Gate("sem005", default=True),
    "SEM006": Gate("sem006", default=True),
    # a reference renamed resolves to a name JAX 0.10 deprecated on `jax.experimental.pallas.tpu`
    # (`catalog.TPU_MOVED_TO_PALLAS`): see `catalog.MIGRATION_GATE` for what it must spell; it
    # looks at every reference, not only catalog calls' arguments, and drops what it leaves unused
    "SEM101": Gate("sem101", default=False, text_gate=MIGRATION_GATE, reads_floor=True, drops_imports=True),
    # a `dec` keyword of a call that resolves to semaphore_wait
    "SEM102": Gate("sem102", default=False, text_gate=("dec", "semaphore_wait"), reads_floor=True),
    # it reports every `DeviceIdType`, not only catalog calls' keywords
    "SEM103": Gate(
        "sem103", default=False, text_gate=("device_id_type|DeviceIdType",), reads_floor=True, drops_imports=True
    ),
}


def opens_a_gate(data: bytes, enabled: Iterable[str]) -> bool:
    """Does the source spell what an enabled rule's text gate asks for? Such a rule (a
    migration) may fire wherever that spelling is, with no catalog call in the file."""
    return any(GATES[code].spelled_in(data) for code in enabled)


@cache
def _search(pattern: str, kind: type[str] | type[bytes]) -> Callable[[Any], bool]:
    """The search for a gate in text or bytes (the gates are ASCII), one alternative of the
    pattern at a time, each only where a word it must spell is spelled (`in`): words alone
    (`device_id_type|DeviceIdType`) are that find, which every file of a run with every rule on
    asks. Python's `re` tries an alternation of words, or a pattern that starts with a class or a
    look-around, at every offset: the migration's gate so was a tenth of a run with every rule,
    and the whole pattern over the engine's text 15 ms of tpu-inference's."""
    spell: Callable[[str], Any] = (lambda word: word) if kind is str else (lambda word: word.encode("ascii"))
    if re.fullmatch(r"\w+(?:\|\w+)*", pattern):
        words = tuple(spell(word) for word in pattern.split("|"))
        return lambda data: any(word in data for word in words)
    searches = [_spelled_search(alternative, spell) for alternative in _alternatives(pattern)]
    if kind is str:  # the engine's text: asked once a rule
        return lambda data: any(alternative(data) for alternative in searches)

    @lru_cache(maxsize=256)
    def search(data: bytes) -> bool:  # kept per file: the skim, the run's questions ask it again
        return any(alternative(data) for alternative in searches)

    return search


def _spelled_search(pattern: str, spell: Callable[[str], Any]) -> Callable[[Any], bool]:
    """The search for one alternative (no `|` outside its groups): where it starts with a word,
    or ends with a word or a group of words alone before `(?!\\w)`, that word must be spelled."""
    compiled = re.compile(spell(pattern))
    spelled = re.match(r"\w+(?![\w*+?{|])", pattern) or re.search(
        r"(?<![\\\w])(?:\w+|\(\?:\w+(?:\|\w+)+\))(?=\(\?!\\w\)$)", pattern
    )
    if spelled is None:
        return lambda data: compiled.search(data) is not None
    words = tuple(spell(word) for word in spelled.group().strip("(?:)").split("|"))
    return lambda data: any(word in data for word in words) and compiled.search(data) is not None


def _alternatives(pattern: str) -> list[str]:
    """`pattern` split at each `|` outside a group or a class (each escape read as one)."""
    parts, depth, start, in_class, escaped = [], 0, 0, False, False
    for i, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]" or pattern[i - 1] == "["
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
    return [*parts, pattern[start:]]
