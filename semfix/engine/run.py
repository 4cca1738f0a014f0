"""One file through the engine: decode, parse, analyse, apply the edits, prove the result."""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from dataclasses import dataclass, replace

from semfix.catalog import MIGRATION_TEXT
from semfix.engine.analysis import Engine
from semfix.engine.evidence import NeedsAccesses
from semfix.engine.nodes import Rewrite, Text, parse
from semfix.engine.scopes import ScopeBuilder, Tracking
from semfix.engine.syntax import syntax_error
from semfix.errors import SourceError
from semfix.findings import Finding
from semfix.rewrite.compiles import refuse_uncompilable
from semfix.rewrite.proof import prove, settles_by_construction
from semfix.rewrite.text import apply_edits, line_starts
from semfix.settings import Place, Settings

_MIGRATION_TEXT = re.compile(MIGRATION_TEXT.decode())


def _decode(source: str | bytes) -> tuple[str, str]:
    if isinstance(source, str):
        return source, "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding), encoding
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode as {error.encoding}: byte {error.object[error.start]:#04x} at offset {error.start}"
        ) from None
    except (SyntaxError, LookupError) as error:  # a bad or unknown coding cookie
        raise SourceError(f"bad encoding declaration: {error}") from None


def _replace_in_tree(rewrite: Rewrite) -> None:
    if rewrite.keyword is not None:
        rewrite.keyword.arg = "value"
        return
    call = rewrite.call
    for index, argument in enumerate(call.args):
        if argument is rewrite.argument:
            call.args[index] = rewrite.replacement
            return
    for keyword in call.keywords:
        if keyword.value is rewrite.argument:
            keyword.value = rewrite.replacement
            return
    raise AssertionError("a rewrite's argument is not in its call")


@dataclass(frozen=True)
class Result:
    text: str
    encoding: str
    findings: tuple[Finding, ...]


def analyse(source: str | bytes, settings: Settings, apply_fixes: bool) -> Result:
    """The new text and findings; SourceError for a file that cannot be read or written back."""
    text, encoding = _decode(source)
    round_trips = isinstance(source, str) or not apply_fixes or text.encode(encoding) == source
    tree = _parse_whole(text)
    if not round_trips:  # a fix would rewrite bytes it did not mean to
        raise SourceError(f"cannot write this file back byte for byte in {encoding}")
    return analyse_tree(text, tree, encoding, settings, apply_fixes)


def _parse_whole(text: str) -> ast.Module:
    """The whole file's tree; the parser's complaints as SourceError."""
    try:
        return parse(text)
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested for the parser") from None  # libcst would crash
    except ValueError as error:  # NUL bytes, on Python before 3.12
        raise SourceError(f"not Python source: {error}") from None
    except SyntaxError as error:
        if any(word in str(error.msg) for word in ("too many nested", "too complex", "statically nested")):
            raise SourceError(f"too deeply nested for the parser: {error.msg}") from None
        raise syntax_error(text, error) from None


def analyse_tree(text: str, tree: ast.Module, encoding: str, settings: Settings, apply_fixes: bool) -> Result:
    """`analyse` from the parsed tree (the proof runs it again on the new text)."""
    lines = Text(text)
    try:
        engine = _run(lines, tree, ScopeBuilder(), settings)
    except NeedsAccesses:  # few files ask whether a Ref expression keeps its value
        engine = _run(lines, tree, Tracking(), settings)
    findings = engine.findings
    if not apply_fixes:
        if any(f.replacement is not None for f in findings):  # what `fix` would refuse to write
            refuse_uncompilable(text)
        return Result(text, encoding, tuple(replace(f, applied=False) for f in findings))
    if not engine.rewrites:
        return Result(text, encoding, tuple(findings))
    edits = sorted([
        *(edit for rewrite in engine.rewrites for edit in rewrite.edits),
        *(r[2] for r in engine.removals),
        *engine.import_edits,
    ])
    new_text = apply_edits(text, 0, len(text), edits)
    for rewrite in engine.rewrites:
        if rewrite.call is not None:  # SEM101's renames are declared in engine.imports
            _replace_in_tree(rewrite)
    for body, statement, _ in engine.removals:  # SEM003: the line goes; the proof compares whole trees
        body.remove(statement)
    if engine.imports is not None:
        engine.imports.apply()
    settled = not engine.removals and not engine.migrated and settles_by_construction(findings, engine.rewrites)
    again = settings if settings.chosen is None else replace(settings, chosen=_rewritten(new_text, edits), near=True)
    prove(tree, engine.text, new_text, edits, encoding, again, settled=settled)
    return Result(new_text, encoding, tuple(findings))


def _rewritten(new_text: str, edits: list[tuple[int, int, str]]) -> frozenset[Place]:
    """Where each edit's text lies in the new text. When only chosen fixes are made (`explain`),
    the proof's second pass asks whether a fix would be made there again, not elsewhere."""
    starts, places, shift = line_starts(new_text), set(), 0
    for start, end, replacement in edits:  # sorted, never overlapping
        first = start + shift
        shift += len(replacement) - (end - start)
        places.add((*_position(starts, first), *_position(starts, first + len(replacement))))
    return frozenset(places)


def _position(starts: list[int], offset: int) -> tuple[int, int]:
    """(line, column), 1-based, of a character offset."""
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def _run(lines: Text, tree: ast.Module, scopes: ScopeBuilder, settings: Settings) -> Engine:
    """The rules over one tree, with `scopes` built over it."""
    scopes.build(tree)
    engine = Engine(lines, scopes, settings)
    if "SEM101" in settings.enabled and "tpu" in lines.text and _MIGRATION_TEXT.search(lines.text):
        engine.tree = tree  # checking too works out the import edits: they decide what is fixable
    engine.run()
    return engine
