"""Source the running Python cannot parse: one clear error, naming the Python it needs.

semfix proves every rewrite with CPython's own parser and compiler, so it analyses only what
the running Python parses. Newer syntax is refused (exit 2) rather than handed to a slower
parser whose result could not be proved: the error names the construct and the Python that
parses it, so the user knows to run semfix under that Python.
"""

from __future__ import annotations

import io
import sys
import tokenize

from semfix.errors import SourceError
from semfix.patterns import compiled

_F_PREFIX = compiled(r"[rRbBuU]*[fF]")
_F_STRING = "an f-string with quotes, backslashes or comments inside `{}`"
_NOISE = (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING)
_EDGE = tokenize.TokenInfo(tokenize.ENDMARKER, "\0", (0, 0), (0, 0), "")  # around the tokens: matches no test
_KEYWORDS = frozenset(
    [
        "and",
        "as",
        "assert",
        "async",
        "await",
        "del",
        "elif",
        "else",
        "for",
        "from",
        "if",
        "in",
        "is",
        "lambda",
        "not",
        "or",
        "return",
        "while",
        "with",
        "yield",
    ]
)


def syntax_error(text: str, error: SyntaxError) -> SourceError:
    """The error for a file `ast.parse` refused: its first construct newer than this Python, or
    CPython's words."""
    running = sys.version_info[:2]
    newer = [hit for hit in _constructs(text, error) if running < tuple(map(int, hit[1].split(".")))]
    if newer:
        what, version, line = min(newer, key=lambda hit: hit[2])
        python = f"{running[0]}.{running[1]}"
        return SourceError(f"uses syntax Python {python} cannot parse ({what}, Python {version}+) at line {line}")
    return SourceError(f"syntax error at line {error.lineno}, column {error.offset}: {error.msg}")


def _constructs(text: str, error: SyntaxError) -> list[tuple[str, str, int]]:
    """(what, the Python that parses it, line) for every newer construct the tokens show, whether
    or not this Python parses it."""
    tokens = [_EDGE]
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in _NOISE:
                tokens.append(token)
    except (tokenize.TokenError, SyntaxError):  # an older tokenizer may stop at newer syntax
        pass
    tokens += [_EDGE, _EDGE]
    hits = []
    subscripts: list[bool] = []  # per open bracket: is it a subscript's `[`?
    line_start = True
    for before, token, after, then in zip(tokens, tokens[1:], tokens[2:], tokens[3:]):
        line = token.start[0]
        if token.string in "([{" and token.type == tokenize.OP:
            subscripts.append(token.string == "[" and _ends_value(before))
        elif token.string in ")]}" and token.type == tokenize.OP and subscripts:
            subscripts.pop()
        elif token.string == "*" and subscripts and subscripts[-1] and before.string in "[,":
            hits.append(("a starred index `x[*i]`", "3.11", line))
        elif token.string == "except" and after.string == "*":
            hits.append(("`except*`", "3.11", line))
        elif token.string in ("def", "class") and after.type == tokenize.NAME and then.string == "[":
            hits.append((f"type parameters `{token.string} {after.string}[T]`", "3.12", line))
        elif token.string == "type" and line_start and after.type == tokenize.NAME and then.string in ("=", "["):
            hits.append(("a `type` alias statement", "3.12", line))
        elif token.type == tokenize.STRING and _F_PREFIX.match(token.string) and _open_brace(token.string):
            hits.append((_F_STRING, "3.12", line))
        line_start = token.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT) or (
            token.type == tokenize.OP and token.string == ";"
        )
    if "f-string" in str(error.msg) and ("backslash" in str(error.msg) or "'#'" in str(error.msg)):
        hits.append((_F_STRING, "3.12", error.lineno or 1))
    return hits


def _ends_value(token: tokenize.TokenInfo) -> bool:
    """Does a `[` after this token open a subscript (not a list display)?"""
    if token.type == tokenize.NAME:
        return token.string not in _KEYWORDS
    return token.type == tokenize.STRING or token.string in (")", "]", "}")


def _open_brace(literal: str) -> bool:
    """An f-string token cut short: a `{` it opens is not closed in it, as when an older
    tokenizer ends the string at a quote inside a replacement field."""
    body = literal[literal.index(literal[-1]) :].replace("{{", "").replace("}}", "")
    return body.count("{") > body.count("}")
