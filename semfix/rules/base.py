"""What a rule is: its code, its docs and the examples that test it, in the rule's own module.

Each `semfix/rules/semNNN.py` opens with its docs (what it does, why it matters, an example,
its fix safety), defines `RULE`, then its logic: functions over the analysis's `Context`
(semfix/analysis/context.py) that decide the rule's findings and declare each fix as one
`Decision` (semfix/analysis/fixes.py). The engine's loop (semfix/engine/loop.py) calls the
rules' entry points in dispatch.py, which sets their order; a rule reuses another's logic by
calling it with its own `code` and words (as SEM003's `check` takes `words` and `arguments`).
What the engine must know of a rule it reads from `Rule` (text gate, tree, settling).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any, Literal, NamedTuple

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
    default: bool  # on without --select
    docs: str  # the rule module's docstring: what, why, example, fix safety
    valid: tuple[str, ...] = ()  # code the rule must leave alone
    invalid: tuple[Invalid, ...] = ()
    # What the driver (semfix/engine/) must know of the rule, so that no module outside rules/
    # names a rule code:
    # the patterns a file must all match for the rule to fire; () when the skim of semaphore
    # and DMA arguments (semfix/engine/skim.py) decides, as for every rule on those arguments.
    text_gate: tuple[str, ...] = ()
    # whether the rule reads every reference in the file (the loop then hands it the tree)
    needs_tree: bool = False
    # whether its fix may drop an import left unused, which another module of the run may
    # import by name (the CLI then tells it those names: `Settings.imported_by_run`)
    drops_imports: bool = False
    # whether a finding it leaves unfixed stays so after the other fixes: False when new `.at`
    # views may prove a Ref and make an unsafe fix safe, so the proof must run a second pass
    settles: bool = True
    # whether it reads the project's JAX floor (`Settings.target_jax`): the floor is read from
    # the project's files only where such a rule runs
    reads_floor: bool = False
    # a spelling that, in a file whose tree the rule gets, has it read every access to every
    # name (`Context.tracking`): there the scopes record them from the start, where a plain
    # first run would be thrown away at the rule's finish (a tenth of tpu-inference's check with
    # every rule on)
    tracks: str = ""

    def spelled_in(self, text: str | bytes) -> bool:
        """Does `text` match every pattern of the rule's text gate (False for a rule without one)?"""
        kind = str if isinstance(text, str) else bytes
        return bool(self.text_gate) and all(_search(p, kind)(text) for p in self.text_gate)


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
