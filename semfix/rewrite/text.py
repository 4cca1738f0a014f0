"""Source text: decoded as Python decodes it, and by offsets (where lines start, applying edits)."""

from __future__ import annotations

import codecs
import io
import tokenize
from collections.abc import Iterable
from itertools import accumulate

from semfix.errors import SourceError
from semfix.findings import Finding
from semfix.patterns import compiled

_LINE_END = compiled(r"\r\n|\r|\n")
_COOKIE = compiled(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")  # PEP 263
_BLANK_OR_COMMENT = compiled(rb"^[ \t\f]*(?:[#\r\n]|$)")


def decode(source: str | bytes) -> tuple[str, str]:
    """(text, encoding): bytes decoded as Python would (coding cookie, BOM); SourceError if they cannot be."""
    if isinstance(source, str):
        return source, "utf-8"
    try:
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        except SyntaxError:  # `tokenize` reads the cookie's line as UTF-8 first; Python does not
            if source.startswith(codecs.BOM_UTF8):
                raise
            encoding = _cookie(source)
        return source.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode as {error.encoding}: byte {error.object[error.start]:#04x} at offset {error.start}"
        ) from None
    except (SyntaxError, LookupError) as error:  # a bad or unknown coding cookie
        raise SourceError(f"bad encoding declaration: {error}") from None


def _cookie(source: bytes) -> str:
    """The coding cookie of the first line, or of the second after a comment or blank line,
    read as Python's own tokenizer reads it: bytes other than UTF-8 may stand beside it
    (`# caf\xe9 -*- coding: latin-1 -*-`). SyntaxError where there is none, or no codec."""
    lines = source.split(b"\n", 2)[:2]
    for index, line in enumerate(lines):
        found = _COOKIE.match(line)
        if found is not None:
            return codecs.lookup(found.group(1).decode("ascii")).name
        if index or not _BLANK_OR_COMMENT.match(line):
            break
    raise SyntaxError("invalid or missing encoding declaration")


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts, splitting lines where Python's tokenizer does."""
    if "\r" in text:
        return [0] + [match.end() for match in _LINE_END.finditer(text)]
    # The same, faster: each line's length with its "\n", summed up, all in C.
    return [0, *accumulate(map((1).__add__, map(len, text.split("\n")[:-1])))]


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
