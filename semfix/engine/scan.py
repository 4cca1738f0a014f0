"""A string- and bracket-aware scanner of Python bytes, for the skim (skim.py).

It cuts a call's arguments, a bracket's items and a parameter list out of source bytes without
parsing: strings are skipped whole, comments cut out, and anything it does not model (a
backslash outside a string, an f-string, an unclosed bracket, a non-ASCII name) raises
`GiveUp`, after which the file is parsed.
"""

from __future__ import annotations

import re

from semfix.patterns import compiled

IDENT = rb"[A-Za-z_][A-Za-z0-9_]*"
SPACE = b" \t\f\\\r\n"  # and backslashes, which continue a line
_SPECIAL = compiled(rb"[()\[\]{},#'\"\\]")
_LINE_END = compiled(rb"[\r\n]|\Z")
_STRING_END = {
    b"'": compiled(rb"(?:[^'\\\r\n]|\\.)*'", re.DOTALL),
    b'"': compiled(rb'(?:[^"\\\r\n]|\\.)*"', re.DOTALL),
    b"'''": compiled(rb"(?:[^\\]|\\.)*?'''", re.DOTALL),
    b'"""': compiled(rb'(?:[^\\]|\\.)*?"""', re.DOTALL),
}
_PLAIN_PREFIXES = frozenset({b"", b"r", b"u", b"b", b"br", b"rb"})
_PREFIX = compiled(rb"[A-Za-z]*\Z")
KEYWORD_ARG = compiled(rb"(" + IDENT + rb")\s*=(?!=)")
NAME = compiled(IDENT + rb"\Z")
_LEADING_NAME = compiled(IDENT)
_CALLEE = compiled(rb"[A-Za-z_][A-Za-z0-9_.\s]*\(")
# An argument list with no comments, backslashes or braces, strings only on one line, and
# brackets nested three deep at most: what nearly every call looks like.
# A one-line string, not part of a triple quote: `"""a", "b"""` must not split at its comma.
SHORT_STRING = rb"(?<!\")\"[^\"\\\r\n{}]*\"(?!\")|(?<!')'[^'\\\r\n{}]*'(?!')"
PLAIN = rb"(?:[^()\[\]{}'\"#\\]|" + SHORT_STRING + rb")"
_NESTED = PLAIN + rb"*"
for _ in range(2):
    _NESTED = rb"(?:" + PLAIN + rb"|\[" + _NESTED + rb"\]|\(" + _NESTED + rb"\))*"
BRACKETS = rb"|\[" + _NESTED + rb"\]|\(" + _NESTED + rb"\)"
SIMPLE_INNER = rb"(?:" + PLAIN + BRACKETS + rb")*"
_SIMPLE_ITEM = compiled(rb"(?:[^,()\[\]{}'\"#\\]|" + SHORT_STRING + BRACKETS + rb")+")


class GiveUp(Exception):
    """Something the skim does not model: the file must be parsed."""


def parameters(items: list[bytes]) -> tuple[list[bytes], list[bytes]]:
    positional: list[bytes] = []
    keyword_only: list[bytes] = []
    after_star = False
    for item in items:
        if item == b"/" or item.startswith(b"**"):
            continue
        if item.startswith(b"*"):
            after_star = True
            continue
        name = _LEADING_NAME.match(item)
        if name is None or not item.isascii():
            raise GiveUp("a parameter list it cannot read")
        (keyword_only if after_star else positional).append(name.group())
    return positional, keyword_only


def call_arguments(expression: bytes) -> list[bytes]:
    """The argument texts of `expression`, which must be one plain call `a.b(...)` and nothing more."""
    callee = _CALLEE.match(expression)
    if callee is not None:
        arguments, end = split_bracket(expression, callee.end() - 1)
        if end == len(expression) - 1:
            return arguments
    raise GiveUp("a call it cannot read")


def keywords(arguments: list[bytes]) -> dict[bytes, bytes]:
    """The keyword arguments among argument texts: name -> value text."""
    return {m.group(1): a[m.end() :].strip() for a in arguments if (m := KEYWORD_ARG.match(a))}


def names_before(data: bytes, end: int) -> set[str]:
    """The identifiers that may be the last before `end`, across blank lines and comments.

    Line by line backwards, past lines that are blank or a comment; the first other line's
    code ends at one of its `#`s (any may be inside a string) or at its end.
    """
    position = end
    while True:
        start = max(data.rfind(b"\n", 0, position), data.rfind(b"\r", 0, position)) + 1
        line = data[start:position]
        if line.split(b"#", 1)[0].strip(SPACE):
            codes = [line, *(line[: sign.start()] for sign in re.finditer(rb"#", line))]
            return {found.group().decode() for code in codes if (found := NAME.search(code.rstrip(SPACE)))}
        if start == 0:
            return set()
        position = start - 1


def items(inner: bytes) -> list[bytes]:
    """The item texts of a plain bracket's contents (no strings or comments: see _SIMPLE_ITEM)."""
    return [item.strip() for item in _SIMPLE_ITEM.findall(inner) if not item.isspace()]


def split_bracket(data: bytes, open_at: int) -> tuple[list[bytes], int]:
    """The top-level item texts of the bracket opened at `open_at` (comments cut out), and
    where it closes. Strings are skipped whole, so brackets and commas in them do not count."""
    depth = 0
    items: list[bytes] = []
    pieces: list[bytes] = []  # the current item's text, around comments
    start, position = open_at + 1, open_at
    while True:
        found = _SPECIAL.search(data, position)
        if found is None:
            raise GiveUp("an unclosed bracket")
        index = found.start()
        char = data[index : index + 1]
        position = index + 1
        if char in b"([{":
            depth += 1
        elif char in b",)]}" and depth == 1:  # the end of an item
            pieces.append(data[start:index])
            items.append(b"".join(pieces).strip())
            if char != b",":
                return [a for a in items if a], index
            pieces, start = [], position
        elif char in b")]}":
            depth -= 1
        elif char == b"#":
            line_end = _LINE_END.search(data, index)
            assert line_end is not None  # it matches `\Z` at the latest
            pieces.append(data[start:index])
            start = position = line_end.start()
        elif char == b"\\":
            raise GiveUp("a backslash outside a string")
        elif char != b",":
            position = _string_end(data, index)


def _string_end(data: bytes, quote_at: int) -> int:
    prefix = _PREFIX.search(data, max(0, quote_at - 3), quote_at)
    assert prefix is not None  # `[A-Za-z]*\Z` matches an empty prefix at `quote_at` at the latest
    if prefix.group().lower() not in _PLAIN_PREFIXES:  # three letters: a longer prefix, or a name
        raise GiveUp("an f-string, or a quote after a name")
    quote = data[quote_at : quote_at + 3]
    if quote not in _STRING_END:
        quote = quote[:1]
    end = _STRING_END[quote].match(data, quote_at + len(quote))
    if end is None:
        raise GiveUp("an unterminated string")
    return end.end()
