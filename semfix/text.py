"""Source text by offsets: where lines start, and applying edits, shared by the engine and its proofs."""

from __future__ import annotations

import re
from typing import Iterable

from semfix.findings import Finding

_LINE_END = re.compile(r"\r\n|\r|\n")
_IGNORE = re.compile(r"#\s*semfix:\s*ignore(?:\[(?P<codes>[A-Za-z0-9,\s]*)\])?")

Suppressions = dict[int, "frozenset[str] | None"]  # line -> the codes silenced there (None: all)


def note_suppression(suppressions: Suppressions, line: int, comment: str) -> None:
    """Record what a comment on `line` silences, if it is a `# semfix: ignore[...]` comment."""
    found = _IGNORE.search(comment)
    if found is not None:
        codes = found.group("codes")
        suppressions[line] = None if codes is None else frozenset(
            c.strip().upper() for c in codes.split(",") if c.strip()
        )


def suppressed(suppressions: Suppressions, code: str, lines: Iterable[int]) -> bool:
    """Does an ignore comment on any of `lines` silence `code`?"""
    silenced = (suppressions.get(line, frozenset()) for line in lines)
    return any(codes is None or code in codes for codes in silenced)


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts, splitting lines where Python's tokenizer does."""
    return [0] + [match.end() for match in _LINE_END.finditer(text)]


def apply_edits(text: str, start: int, end: int, edits: Iterable[tuple[int, int, str]]) -> str:
    """text[start:end] with each (edit_start, edit_end, replacement) applied; edits never overlap."""
    out, cursor = [], start
    for edit_start, edit_end, replacement in sorted(edits):
        out += [text[cursor:edit_start], replacement]
        cursor = edit_end
    out.append(text[cursor:end])
    return "".join(out)


def splice(text: str, findings: Iterable[Finding]) -> str:
    """The text with each finding's replacement put where the finding points."""
    starts = line_starts(text)
    edits = [
        (starts[f.line - 1] + f.column - 1, starts[f.end_line - 1] + f.end_column - 1, f.replacement or "")
        for f in findings
    ]
    return apply_edits(text, 0, len(text), edits)
