"""Source the running Python cannot parse: one clear error, naming the Python it needs.

semfix proves every rewrite with CPython's own parser and compiler, so it analyses only what
the running Python parses. Newer syntax is refused (exit 2) rather than handed to a slower
parser whose result could not be proved: the error names the construct and the Python that
parses it, so the user knows to run semfix under that Python.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize

from semfix.errors import SourceError

_F_PREFIX = re.compile(r"[rRbBuU]*[fF]")


def syntax_error(text: str, error: SyntaxError) -> SourceError:
    """The error for a file `ast.parse` refused: the newer construct it uses, or CPython's words."""
    newer = _newer_construct(text, error)
    if newer is not None:
        what, version, line = newer
        running = f"{sys.version_info.major}.{sys.version_info.minor}"
        return SourceError(f"uses syntax Python {running} cannot parse ({what}, Python {version}+) at line {line}")
    return SourceError(f"syntax error at line {error.lineno}, column {error.offset}: {error.msg}")


def _newer_construct(text: str, error: SyntaxError) -> tuple[str, str, int] | None:
    """(what, the Python that parses it, line) for the first construct newer than this Python."""
    found = [hit for hit in _constructs(text, error) if sys.version_info < tuple(map(int, hit[1].split(".")))]
    return min(found, key=lambda hit: hit[2]) if found else None


def _constructs(text: str, error: SyntaxError) -> list[tuple[str, str, int]]:
    """Every newer construct the tokens show, whether or not this Python parses it."""
    tokens = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in _NOISE:
                tokens.append(token)
    except (tokenize.TokenError, SyntaxError):  # an older tokenizer may stop at newer syntax
        pass
    hits = []
    subscripts: list[bool] = []  # per open bracket: is it a subscript's `[`?
    line_start = True
    for i, token in enumerate(tokens):
        before = tokens[i - 1] if i else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.string in "([{" and token.type == tokenize.OP:
            subscripts.append(token.string == "[" and before is not None and _ends_value(before))
        elif token.string in ")]}" and token.type == tokenize.OP and subscripts:
            subscripts.pop()
        elif token.string == "*" and subscripts and subscripts[-1] and before and before.string in "[,":
            hits.append(("a starred index `x[*i]`", "3.11", token.start[0]))
        elif token.string == "except" and after is not None and after.string == "*":
            hits.append(("`except*`", "3.11", token.start[0]))
        elif token.string in ("def", "class") and _generic(tokens, i):
            hits.append((f"type parameters `{token.string} {after.string}[T]`", "3.12", token.start[0]))  # type: ignore[union-attr]
        elif token.string == "type" and line_start and after is not None and after.type == tokenize.NAME and _generic_or_assigned(tokens, i + 2):
            hits.append(("a `type` alias statement", "3.12", token.start[0]))
        elif token.type == tokenize.STRING and _F_PREFIX.match(token.string) and _open_brace(token.string):
            hits.append(("an f-string with quotes, backslashes or comments inside `{}`", "3.12", token.start[0]))
        line_start = token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) or (token.type == tokenize.OP and token.string == ";")
    if "f-string" in str(error.msg) and ("backslash" in str(error.msg) or "'#'" in str(error.msg)):
        hits.append(("an f-string with quotes, backslashes or comments inside `{}`", "3.12", error.lineno or 1))
    return hits


_NOISE = (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING)


def _ends_value(token: tokenize.TokenInfo) -> bool:
    """Does a `[` after this token open a subscript (not a list display)?"""
    if token.type == tokenize.NAME:
        return token.string not in _KEYWORDS
    return token.type == tokenize.STRING or token.string in (")", "]", "}")


_KEYWORDS = frozenset(
    "and as assert async await del elif else for from if in is lambda not or return while with yield".split()
)


def _generic(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """`def name[` or `class name[`."""
    return i + 2 < len(tokens) and tokens[i + 1].type == tokenize.NAME and tokens[i + 2].string == "["


def _generic_or_assigned(tokens: list[tokenize.TokenInfo], i: int) -> bool:
    """After `type Name`: `=` or `[`, as a type alias statement goes on."""
    return i < len(tokens) and tokens[i].string in ("=", "[")


def _open_brace(literal: str) -> bool:
    """An f-string token cut short: a `{` it opens is not closed in it, as when an older
    tokenizer ends the string at a quote inside a replacement field."""
    body = literal[literal.index(literal[-1]) :].replace("{{", "").replace("}}", "")
    return body.count("{") > body.count("}")
