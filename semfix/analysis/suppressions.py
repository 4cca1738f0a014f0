"""The comments that silence rules on a line or in a whole file, as ruff reads them.

Only comments count, not strings that look like them, so the tokenizer decides; but real trees
are full of `# noqa` (a bare one, silencing every rule of every linter, sits beside many real
kernels' reads), and tokenizing each such file was a tenth of a check. A regex finds the lines
that may hold one; the tokenizer runs only once a finding lands on such a line.
"""

from __future__ import annotations

import re
import tokenize
from bisect import bisect_right
from collections.abc import Iterable

from semfix.analysis.nodes import tokens
from semfix.patterns import compiled
from semfix.rewrite.text import line_starts

_IGNORE = compiled(r"#\s*semfix:\s*ignore(?:\[(?P<codes>[A-Za-z0-9,\s]*)\])?")
# ruff's spellings (written here without their hash, which ruff would read): "noqa" alone (every
# rule on its line) or "noqa: CODE, CODE" on a line; "ruff: noqa" or "semfix: noqa" (with ": CODE,
# ...", only those) for the whole file. As in ruff, "noqa:" with no code silences nothing.
_CODES = r"(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)|(?!\s*:))"
_NOQA = compiled(r"#\s*noqa\b" + _CODES, re.IGNORECASE)
_FILE_NOQA = compiled(r"#\s*(?:ruff|semfix)\s*:\s*noqa\b" + _CODES, re.IGNORECASE)
_KINDS = (_IGNORE, _NOQA, _FILE_NOQA)


class Suppressions:
    """What one file's comments silence; built from its text, tokenized at most once."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._lines: set[int] = set()  # where a comment may silence one of semfix's rules (0: the file)
        starts: list[int] = []
        # Each pattern searched (and compiled) only where its words are: no other letter matches
        # n, o, q or a when case is ignored, so a text without "noqa" holds neither of the others.
        kinds = (_IGNORE,) * ("semfix:" in text) + (_NOQA, _FILE_NOQA) * ("noqa" in text.lower())
        for kind in kinds:
            for match in kind.finditer(text):
                if _ours(match):
                    starts = starts or line_starts(text)
                    self._lines.add(0 if kind is _FILE_NOQA else bisect_right(starts, match.start()))
        self._silenced: dict[int, frozenset[str] | None] | None = None

    def silence(self, code: str, lines: Iterable[int]) -> bool:
        """Is `code` silenced by a comment on one of `lines`, or for the whole file?"""
        asked = [line for line in (0, *lines) if line in self._lines]
        if not asked:
            return False
        if self._silenced is None:
            self._silenced = _silenced(self._text)
        return any(
            codes is None or code in codes for codes in (self._silenced.get(line, frozenset()) for line in asked)
        )


def _silenced(text: str) -> dict[int, frozenset[str] | None]:
    """The silencing comments, by line (0: those for the whole file); None silences every rule."""
    found: dict[int, frozenset[str] | None] = {}
    for token in tokens(text):
        for kind in _KINDS if token.type == tokenize.COMMENT else ():
            for match in kind.finditer(token.string):
                line = 0 if kind is _FILE_NOQA else token.start[0]
                codes = match.group("codes")
                known = found.get(line, frozenset())
                if codes is None or known is None:
                    found[line] = None
                else:
                    found[line] = known | {c.upper() for c in re.split(r"[\s,]+", codes) if c}
    return found


def _ours(match: re.Match[str]) -> bool:
    """Could this comment silence a rule of semfix's: all of them, or a SEM code?"""
    codes = match.group("codes")
    return codes is None or "SEM" in codes.upper()
