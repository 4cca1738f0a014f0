"""The editor's check, again after an edit: only what the edit can change is analysed again.

A whole-file check keeps, beside its findings, each top-level statement's lines, the names it
binds for the others and the words it spells, and the call each finding was made at. When an
edit leaves every line outside one top-level function's body as it was (lines it adds or
removes there move what follows, unless a finding's words name a line it moves), the
analysis reaches from that function only through names: the statements linked to it, one
spelling a name the other binds, again and again, are analysed again, in the text with every
other function and class blanked out (spaces, so that every offset stays); the findings of the
rest are kept. Imports bind the same names before and after, but what one function reads of an
imported name may prove what another does: an import links the functions spelling the names it
binds (JAX's own, which never hold a Ref, link nothing). A def that declares `global` or
`nonlocal`, or whose decorators, defaults or annotations hold a walrus, binds every word it
spells. What the engine does for the whole
file at once (the nesting check holding every fix, the migrations' renames and import edits, a
finding made outside a call) and every other case is checked whole (`whole`): equal findings
(tests/test_incremental.py checks many random edits).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from semfix.analysis.nodes import Text
from semfix.engine.loop import Engine
from semfix.engine.run import parse_whole, run_rules
from semfix.findings import Finding
from semfix.rewrite.compiles import refuse_uncompilable
from semfix.rules import GATES, RULES
from semfix.settings import Settings

_WORD = re.compile(r"\w+")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_JAX = re.compile(r"jax(\.\w+)*")


@dataclass(frozen=True)
class Unit:
    """One top-level statement: its lines (decorators included), what it binds for the rest
    (its name, for a def or class; for an import, the names it binds outside JAX; else every
    word it spells) and the words it spells."""

    first: int
    last: int
    kind: str  # function, class, import, other
    names: frozenset[str]
    words: frozenset[str]


@dataclass(frozen=True)
class Checked:
    """A check to start the next from: the text, its settings, units and findings, each
    finding's call (its end), and whether the file was compiled (a fixable finding)."""

    text: str
    lines: list[str]
    settings: Settings
    units: tuple[Unit, ...]
    findings: tuple[Finding, ...]
    keys: tuple[tuple[int, int], ...]
    compiled: bool


#: How many whole-file analyses were made (the tests count them).
analyses = 0


def check(previous: Checked | None, text: str, settings: Settings) -> tuple[tuple[Finding, ...], Checked | None]:
    """The findings of `analyse(text, settings, apply_fixes=False)`, and a state for the next
    check (None where none can start from this one). SourceError as `analyse`."""
    if previous is not None and previous.settings == settings and previous.text == text:
        return previous.findings, previous
    if previous is not None and previous.settings == settings:
        again = _again(previous, text, settings)
        if again is not None:
            return again
    return whole(text, settings)


def whole(text: str, settings: Settings) -> tuple[tuple[Finding, ...], Checked | None]:
    """The whole file checked, as `analyse` does."""
    global analyses
    analyses += 1
    tree = parse_whole(text)
    findings, engine = _findings(text, tree, settings)
    fixable = any(f.replacement is not None for f in findings)
    if fixable:
        refuse_uncompilable(text, tree)
    keys = _keys(engine, len(findings))
    if keys is None or not _steady(settings) or "\r" in text:
        return findings, None
    lines = text.split("\n")
    units = tuple(_unit(statement, lines) for statement in tree.body)
    return findings, Checked(text, lines, settings, units, findings, keys, fixable)


def _steady(settings: Settings) -> bool:
    """Settings under which a finding depends only on what its statement reaches by name."""
    return (
        settings.chosen is None
        and not settings.package_init
        and not any(RULES[code].needs_tree or GATES[code].drops_imports for code in settings.enabled)
    )


def _findings(text: str, tree: ast.Module, settings: Settings) -> tuple[tuple[Finding, ...], Engine]:
    engine, found = run_rules(Text(text), tree, settings)
    return tuple(replace(f, applied=False) for f in found), engine


def _keys(engine: Engine, count: int) -> tuple[tuple[int, int], ...] | None:
    """The end of the call each finding was made at; None where one was made outside a call,
    or the nesting check held every fix."""
    emitted = getattr(engine, "emitted", None)
    if emitted is None or engine.nested or engine.before or (emitted[-1] if emitted else 0) != count:
        return None
    return tuple(engine.calls_ended[bisect.bisect_right(emitted, index)] for index in range(count))


def _span(statement: ast.stmt) -> tuple[int, int]:
    """The statement's first and last lines, its decorators' included."""
    first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
    return first, statement.end_lineno or statement.lineno


def _unit(statement: ast.stmt, lines: list[str]) -> Unit:
    first, last = _span(statement)
    words = frozenset(_WORD.findall("\n".join(lines[first - 1 : last])))
    if isinstance(statement, _DEFS) and not words & {"global", "nonlocal"} and not _binds_outside(statement):
        kind = "class" if isinstance(statement, ast.ClassDef) else "function"
        return Unit(first, last, kind, frozenset({statement.name}), words)
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return Unit(first, last, "import", _imported(statement), words)
    return Unit(first, last, "other", words, words)


def _binds_outside(statement: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    """Does a walrus in what the module evaluates of a def (its decorators, defaults,
    annotations, bases) bind a module name (`def f(b=(pltpu := None))`)?"""
    outside = (value for name, value in ast.iter_fields(statement) if name != "body")
    return any(isinstance(node, ast.NamedExpr) for value in outside for node in _walk(value))


def _walk(value: object) -> list[ast.AST]:
    items = value if isinstance(value, list) else [value]
    return [node for item in items if isinstance(item, ast.AST) for node in ast.walk(item)]


def _imported(statement: ast.Import | ast.ImportFrom) -> frozenset[str]:
    """The names an import binds that link the functions spelling them: what one reads of an
    imported name may prove what another does (`SEMS.at[0]` proves `SEMS[i]` a Ref). JAX's
    own modules and functions never hold a Ref: they link nothing."""
    if isinstance(statement, ast.ImportFrom):
        jax = not statement.level and _JAX.fullmatch(statement.module or "") is not None
        return frozenset() if jax else frozenset(alias.asname or alias.name for alias in statement.names)
    return frozenset(
        alias.asname or alias.name.partition(".")[0] for alias in statement.names if not _JAX.fullmatch(alias.name)
    )


def _again(old: Checked, text: str, settings: Settings) -> tuple[tuple[Finding, ...], Checked] | None:
    """The check from `old`, where the edit lies within one top-level function and keeps the
    line count; None where the whole file must be checked."""
    if "\r" in text:
        return None
    lines = text.split("\n")
    delta = len(lines) - len(old.lines)
    same = min(len(lines), len(old.lines))
    head = next((i for i in range(same) if old.lines[i] != lines[i]), same)  # lines kept at the start
    tail = next((i for i in range(same - head) if old.lines[-1 - i] != lines[-1 - i]), same - head)
    first, last = head + 1, len(old.lines) - tail  # the old lines the edit replaced (none: last < first)
    firsts = [unit.first for unit in old.units]
    at = bisect.bisect_right(firsts, first) - 1
    if at < 0:
        return None
    edited = old.units[at]
    # within the function's body: its def line stays (an edit there may change what the def
    # is), and lines added before its last line are its own
    if edited.kind != "function" or not edited.first < first <= max(last, first) <= edited.last:
        return None
    if delta and any(_mentions_lines(f.message, edited.first) for f in old.findings):
        return None  # a kept finding's words would name a line the edit moved
    shifted = tuple(
        unit if index < at else replace(unit, last=unit.last + delta) if index == at else _shift(unit, delta)
        for index, unit in enumerate(old.units)
    )
    reach = _reach(shifted, at, lines)
    if reach is None:
        return None
    units, linked = reach
    reduced = list(lines)
    for index, unit in enumerate(units):
        if index not in linked and unit.kind in ("function", "class"):
            reduced[unit.first - 1 : unit.last] = [" " * len(line) for line in lines[unit.first - 1 : unit.last]]
    reduced_text = "\n".join(reduced)
    try:
        tree = ast.parse(reduced_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    kept = [unit for index, unit in enumerate(units) if index in linked or unit.kind not in ("function", "class")]
    if [_span(s) for s in tree.body] != [(u.first, u.last) for u in kept]:
        return None  # the edit made or merged statements
    new, engine = _findings(reduced_text, tree, settings)
    keys = _keys(engine, len(new))
    if keys is None:
        return None
    owner, owner_before = _owners(units), _owners(old.units)
    found: list[tuple[tuple[int, int], int, Finding]] = []
    for order, (finding, key) in enumerate(zip(old.findings, old.keys)):
        if owner_before(key[0]) not in linked:
            moved = _moved(finding, old.text, text, edited, delta)
            if moved is None:
                return None
            found.append(((key[0] + delta, key[1]) if key[0] > edited.last else key, order, moved))
    for order, (finding, key) in enumerate(zip(new, keys)):
        if owner(key[0]) in linked:
            found.append((key, order, finding))
    # the whole file's order: by the call each finding was made at, then as it was made
    found.sort(key=lambda item: item[:2])
    merged = tuple(f for _, _, f in found)
    fixable = any(f.replacement is not None for f in merged)
    if fixable:
        if not old.compiled:
            return None
        refuse_uncompilable(reduced_text, tree)  # the other functions compiled before, unchanged
    return merged, Checked(text, lines, settings, units, merged, tuple(k for k, _, _ in found), fixable)


def _reach(units: tuple[Unit, ...], at: int, lines: list[str]) -> tuple[tuple[Unit, ...], set[int]] | None:
    """The units with the edited one's new words, and the indices of those linked to it."""
    edited = units[at]
    statement_text = "\n".join(lines[edited.first - 1 : edited.last])
    words = frozenset(_WORD.findall(statement_text))
    if words & {"global", "nonlocal"}:
        return None
    try:
        parsed = ast.parse(statement_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if len(parsed.body) != 1 or not isinstance(parsed.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if _binds_outside(parsed.body[0]):
        return None  # a walrus added to a signature over several lines
    names = edited.names | {parsed.body[0].name}
    units = (*units[:at], Unit(edited.first, edited.last, "function", names, edited.words | words), *units[at + 1 :])
    linked, todo = {at}, [at]
    while todo:
        unit = units[todo.pop()]
        for index, other in enumerate(units):
            if (
                index not in linked
                and (other.kind != "import" or other.names)
                and (unit.names & other.words or other.names & unit.words)
            ):
                linked.add(index)
                todo.append(index)
    return units, linked


def _owners(units: tuple[Unit, ...]) -> Callable[[int], int]:
    """The index of the unit a line is in (-1: between units)."""
    firsts = [unit.first for unit in units]

    def owner(line: int) -> int:
        index = bisect.bisect_right(firsts, line) - 1
        return index if index >= 0 and line <= units[index].last else -1

    return owner


def _shift(unit: Unit, delta: int) -> Unit:
    return replace(unit, first=unit.first + delta, last=unit.last + delta)


_LINE_NAMED = re.compile(r"\bline (\d+)")


def _mentions_lines(message: str, first: int) -> bool:
    """Whether the message names a line from `first` on (an edit adding or removing lines there
    would renumber it)."""
    return any(int(number) >= first for number in _LINE_NAMED.findall(message))


def _moved(finding: Finding, old: str, new: str, edited: Unit, delta: int) -> Finding | None:
    """A finding kept from before the edit, its position, its evidence's lines and its fix's
    offsets past the edited function moved (`delta`: the lines the edit added); None where a
    position or its evidence lies in it."""
    if finding.end_line >= edited.first and finding.line <= edited.last:
        return None
    if any(edited.first <= line <= edited.last for line in finding.related):  # its evidence was edited
        return None
    if finding.line > edited.last:
        finding = replace(finding, line=finding.line + delta, end_line=finding.end_line + delta)
    if delta and any(line > edited.last for line in finding.related):
        finding = replace(finding, related=tuple(line + delta * (line > edited.last) for line in finding.related))
    if finding.fix is None or not finding.fix.edits:
        return finding
    starts = Text(old).starts
    low, high = starts[edited.first - 1], starts[edited.last] if edited.last < len(starts) else len(old)
    shift = len(new) - len(old)
    edits = []
    for start, end, replacement in finding.fix.edits:
        if end <= low:
            edits.append((start, end, replacement))
        elif start >= high:
            edits.append((start + shift, end + shift, replacement))
        else:
            return None
    return replace(finding, fix=replace(finding.fix, edits=tuple(edits)))
