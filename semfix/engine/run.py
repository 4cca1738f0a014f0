"""One file through the engine: decode, parse, analyse, apply the edits, prove the result."""

from __future__ import annotations

import ast
import bisect
from contextlib import suppress
from dataclasses import replace
from typing import NamedTuple

from semfix.analysis.evidence import NeedsAccesses
from semfix.analysis.fixes import Decision, Removal
from semfix.analysis.nodes import Text, parse
from semfix.analysis.scopes import ScopeBuilder, Tracking
from semfix.analysis.syntax import syntax_error
from semfix.engine.loop import Engine
from semfix.errors import SafetyError, SourceError
from semfix.findings import Finding
from semfix.rewrite.compiles import refuse_uncompilable
from semfix.rewrite.text import apply_edits, decode, line_starts
from semfix.rules import GATES, RULES
from semfix.settings import Place, Settings


class Result(NamedTuple):
    text: str
    encoding: str
    findings: tuple[Finding, ...]


def analyse(source: str | bytes, settings: Settings, apply_fixes: bool) -> Result:
    """The new text and findings; SourceError for a file that cannot be read or written back."""
    text, encoding = decode(source)
    round_trips = isinstance(source, str) or not apply_fixes or text.encode(encoding) == source
    tree = parse_whole(text, source if isinstance(source, bytes) and encoding == "utf-8" else None)
    if not round_trips:  # a fix would rewrite bytes it did not mean to
        raise SourceError(f"cannot write this file back byte for byte in {encoding}")
    return analyse_tree(text, tree, encoding, settings, apply_fixes)


def run_rules(lines: Text, tree: ast.Module, settings: Settings) -> tuple[Engine, list[Finding]]:
    """The rules over the tree, and their findings, each fixed one with its decision's edits.
    Scopes record every name's accesses only where a rule asks (few files ask whether a Ref
    expression keeps its value): from the start where a rule's `tracks` is spelled, else on a
    second run when the first asks."""
    engine = None
    if not any(RULES[code].tracks and RULES[code].tracks in lines.text for code in settings.enabled):
        with suppress(NeedsAccesses):
            engine = _run(lines, tree, ScopeBuilder(), settings)
    if engine is None:
        engine = _run(lines, tree, Tracking(), settings)
    return engine, _with_their_edits(engine.findings, engine.fixes)


def parse_whole(text: str, data: bytes | None = None) -> ast.Module:
    """The whole file's tree (`data`: its bytes, where UTF-8 without a BOM: `nodes.parse`); the
    parser's complaints as SourceError."""
    try:
        return parse(text, data)
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested for the parser") from None  # libcst would crash
    except ValueError as error:  # NUL bytes, on Python before 3.12
        raise SourceError(f"not Python source: {error}") from None
    except SyntaxError as error:
        if any(word in str(error.msg) for word in ("too many nested", "too complex", "statically nested")):
            raise SourceError(f"too deeply nested for the parser: {error.msg}") from None
        raise syntax_error(text, error) from None


#: Passes of unsafe fixes made at most, as ruff iterates: a view written by one (`pair.at[1]`)
#: is evidence that may prove another (`pair[0]`) on the next pass.
ROUNDS = 10


def analyse_tree(
    text: str, tree: ast.Module, encoding: str, settings: Settings, apply_fixes: bool, rounds: int = ROUNDS
) -> Result:
    """`analyse` from the parsed tree (`apply_and_prove` runs it again on the new text)."""
    engine, findings = run_rules(Text(text), tree, settings)
    if not apply_fixes:
        if any(f.replacement is not None for f in findings):  # what `fix` would refuse to write
            refuse_uncompilable(text, tree)  # the tree is as parsed: only the fix path changes it
        return Result(text, encoding, tuple(replace(f, applied=False) for f in findings))
    if all(isinstance(c, Removal) for fix in engine.fixes for c in fix.changes):  # a removal alone is never made
        return Result(text, encoding, tuple(findings))
    new_text, later = apply_and_prove(engine.text, tree, engine.fixes, encoding, settings, findings, rounds)
    if later is not None:  # unsafe fixes made, then more on the next pass: its findings are what is left
        return Result(new_text, encoding, (*(f for f in findings if f.applied), *later))
    return Result(new_text, encoding, tuple(findings))


def apply_and_prove(
    old: Text,
    tree: ast.Module,
    fixes: list[Decision],
    encoding: str,
    settings: Settings,
    findings: list[Finding],
    rounds: int = ROUNDS,
) -> tuple[str, tuple[Finding, ...] | None]:
    """The new text with every fix made, proven: it compiles, parses to the tree the fixes
    declare (made here from `tree`, in place) and a second pass, where one could find more
    (`Decision.settles`, or an unfixed finding of a rule that does not settle), changes nothing.
    SafetyError otherwise. Where an unsafe fix was made (`--unsafe-fixes`) the second pass may
    make more: its text, proven the same way, and its findings are given instead (`rounds`
    passes at most)."""
    from semfix.engine.proof import free_names, prove, settles_by_construction, shifts_lines  # loaded by a fix

    edits = sorted(edit for fix in fixes for edit in fix.edits)
    new_text = apply_edits(old.text, 0, len(old.text), edits)
    unbound = free_names(tree) if shifts_lines(old.text, edits) else None  # edits that may drop a binding
    for fix in fixes:
        for change in fix.changes:
            change.declare()
    rewrites = [rewrite for fix in fixes for rewrite in fix.rewrites]
    settled = all(fix.settles for fix in fixes) and settles_by_construction(findings, rewrites)
    again = settings if settings.chosen is None else replace(settings, chosen=_rewritten(new_text, edits), near=True)
    actual = prove(tree, old, new_text, edits, again, settled=settled)
    if unbound is not None and actual is not None and (read := free_names(actual) - unbound):
        raise SafetyError(f"the rewritten source reads {', '.join(sorted(read))}, which nothing would bind")
    if actual is not None:  # a second pass must change nothing
        second = analyse_tree(new_text, actual, encoding, again, apply_fixes=True, rounds=rounds - 1)
        if second.text != new_text or any(f.applied for f in second.findings):
            unsafe = any(f.applied and f.fix is not None and f.fix.applicability == "unsafe" for f in findings)
            if not unsafe or rounds <= 1:
                raise SafetyError("a second run would change the rewritten source again")
            return second.text, second.findings
    return new_text, None


def _with_their_edits(findings: list[Finding], decisions: list[Decision]) -> list[Finding]:
    """The findings, each fixed one's `Fix` with every edit of its decision."""
    found = list(findings)
    for decision in decisions:
        edits = tuple(sorted(decision.edits))
        for index in decision.findings:
            fix = found[index].fix
            assert fix is not None  # a decision's findings are those whose fix it makes (`Context.make`)
            found[index] = replace(found[index], fix=replace(fix, edits=edits))
    return found


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
    scopes.stars = dict(settings.read_through.stars)
    scopes.callee_names |= {name.rpartition(".")[2] for name, _ in settings.read_through.helpers}
    scopes.build(tree)
    engine = Engine(lines, scopes, settings)
    if any(RULES[code].needs_tree and GATES[code].spelled_in(lines.text) for code in settings.enabled):
        engine.tree = tree  # checking too works out such a rule's edits: they decide what is fixable
    engine.run()
    return engine
