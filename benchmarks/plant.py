"""Real code as the oracle (issue 35): plant one mistake at one site, fix, compare with the original.

In a real tree the original is the right answer and needs no inputs. At every semaphore,
barrier and DMA-buffer argument of a catalog call (found here from the imports and
`semfix.catalog`, never from semfix's analysis, so that a miss shows), each mistake is planted
alone in a copy of the file:
  at             `sems.at[i]` -> `sems[i]` (an element read where the view was meant)
  at-carried     the same read moved into a local assigned just above, the local passed
  ellipsis       a Ref `r` (a name, an attribute or a `.at[...]` view) -> `r[...]`
  unit           `r` -> `r[()]`
  ellipsis-carried  `tmp = r[...]` above, `tmp` passed
  dropped-index  `a.at[i, j]` -> `a.at[i]`
  at-dropped-index  `a.at[i, j]` -> `a[i]` (a read of a row: a fix must not write `a.at[i]`)
The last two only on semaphores and barriers, where JAX refuses a row (non-()-shaped); a DMA
buffer's row is a Ref JAX takes, whose lost index no rule can see.
semfix's fix (`fix_source`, every rule) then runs on the planted file, safe and then with
unsafe fixes. Each plant ends as one verdict: restored (safe), restored only unsafe, reported
(a new finding, no rewrite), wrong (a new rewrite that is not the original), missed (nothing
new) or error (semfix raised). "Restored" compares with what the same run makes of the
original, so a tree's own findings (a migration, say) do not count against a plant.
"""

from __future__ import annotations

import ast
import difflib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from real import _aliases, _line_starts, _qualified

from semfix.api import SafetyError, SourceError, fix_source
from semfix.catalog import lookup
from semfix.findings import Finding
from semfix.selection import build_settings
from semfix.settings import Settings

KINDS = ("at", "at-carried", "ellipsis", "unit", "ellipsis-carried", "dropped-index", "at-dropped-index")
VERDICTS = ("restored", "unsafe", "reported", "wrong-safe", "wrong-unsafe", "missed", "error")
SETTINGS = {unsafe: build_settings(select=["ALL"], unsafe_fixes=unsafe) for unsafe in (False, True)}
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


@dataclass(frozen=True)
class Plant:
    """One mistake at one site: where, what was there, and the whole planted file."""

    kind: str
    offset: int  # the argument's byte offset in the original: with `kind`, the plant's id in a file
    line: int  # 1-based, in the original
    original: str  # the argument as written
    planted: str  # what stands there now (for a carried form: the assignment, then the argument)
    text: bytes


@dataclass(frozen=True)
class Verdict:
    plant: Plant
    verdict: str
    wrote: str = ""  # for wrong or error: the lines semfix wrote where the original's were, or the error


def plants(data: bytes) -> Iterator[Plant]:
    """Every plant of every kind at every site of the file."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return
    starts = _line_starts(data)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    local = next(f"planted_{n}" for n in range(99) if f"planted_{n}".encode() not in data)
    for node, semaphore in sites(tree):

        def at(n: ast.AST, end: bool = False) -> int:
            if end:
                return starts[n.end_lineno - 1] + n.end_col_offset  # type: ignore[attr-defined,operator]
            return starts[n.lineno - 1] + n.col_offset  # type: ignore[attr-defined]

        start, end = at(node), at(node, True)
        text = data[start:end]
        edits: dict[str, tuple[int, int, bytes, bytes | None]] = {}  # kind -> span, new text, carried read
        if _is_view(node):
            assert isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
            dot = data.rindex(b".", at(node.value.value, True), at(node.value, True))  # keeps a line break before it
            cut = dot - start, at(node.value, True) - start
            read = text[: cut[0]] + text[cut[1] :]
            edits["at"] = (start, end, read, None)
            edits["at-carried"] = (start, end, local.encode(), read)
            index = node.slice
            if semaphore and isinstance(index, ast.Tuple) and len(index.elts) > 1 and not _starred(index):
                drop = at(index.elts[-2], True), at(index.elts[-1], True)
                edits["dropped-index"] = (*drop, b"", None)
                kept = text[: drop[0] - start] + text[drop[1] - start :]
                edits["at-dropped-index"] = (start, end, kept[: cut[0]] + kept[cut[1] :], None)
        edits["ellipsis"] = (end, end, b"[...]", None)
        edits["unit"] = (end, end, b"[()]", None)
        edits["ellipsis-carried"] = (start, end, local.encode(), text + b"[...]")
        statement = _statement(node, parents, data, starts)
        for kind, (left, right, new, carried) in edits.items():
            planted = data[:left] + new + data[right:]
            shown = data[start:left] + new + data[right:end]
            if carried is not None:
                if statement is None:
                    continue
                line_start = data.rfind(b"\n", 0, statement) + 1
                assignment = data[line_start:statement] + local.encode() + b" = " + carried + newline
                planted = data[:line_start] + assignment + planted[line_start:]
                shown = assignment.strip() + b"; " + new
                try:  # a read that spans lines outside its own brackets (`(a\n.at[i])`) cannot move
                    ast.parse(assignment.strip())
                except SyntaxError:
                    continue
            yield Plant(kind, start, node.lineno, text.decode(), shown.decode(), planted)


def sites(tree: ast.Module) -> Iterator[tuple[ast.expr, bool]]:
    """The Refs passed to catalog calls' semaphore, barrier and buffer parameters (both
    branches of a conditional expression), outside f-strings; True for a semaphore or barrier."""
    aliases = _aliases(tree)
    in_fstrings = {id(n) for f in ast.walk(tree) if isinstance(f, ast.JoinedStr) for n in ast.walk(f)}
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or id(call) in in_fstrings:
            continue
        operation = lookup(_qualified(call.func, aliases) or "")
        if operation is None or any(isinstance(a, ast.Starred) for a in call.args):
            continue
        for param in (*operation.sem_params, *operation.buffer_params):
            argument = next((k.value for k in call.keywords if k.arg == param.name), None)
            if argument is None and param.position is not None and param.position < len(call.args):
                argument = call.args[param.position]
            yield from ((ref, param in operation.sem_params) for ref in _refs(argument))


def _refs(node: ast.expr | None) -> Iterator[ast.expr]:
    if isinstance(node, ast.IfExp):
        yield from _refs(node.body)
        yield from _refs(node.orelse)
    elif isinstance(node, (ast.Name, ast.Attribute)) or _is_view(node):
        yield node  # type: ignore[misc]


def _is_view(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "at"


def _starred(index: ast.Tuple) -> bool:
    return any(isinstance(e, ast.Starred) for e in index.elts)


def _statement(node: ast.AST, parents: dict[ast.AST, ast.AST], data: bytes, starts: list[int]) -> int | None:
    """The byte offset of the simple statement holding `node`, where a carried read can go
    just above it: alone at the start of its line, and `node` in no lambda or comprehension
    (whose own names the read may use)."""
    while not isinstance(node, ast.stmt):
        node = parents[node]
        if isinstance(node, _SCOPES):
            return None
    if not isinstance(node, _SIMPLE):
        return None
    offset = starts[node.lineno - 1] + node.col_offset
    return offset if not data[starts[node.lineno - 1] : offset].strip() else None


def judge(
    plant: Plant,
    expected: dict[bool, bytes],
    baseline: dict[bool, tuple[Finding, ...]],
    settings: dict[bool, Settings] = SETTINGS,
) -> Verdict:
    """Fix the planted file safe, then unsafe; compare with what each run makes of the original."""
    for unsafe in (False, True):
        try:
            result = fix_source(plant.text, settings=settings[unsafe])
        except (SafetyError, SourceError, RecursionError) as error:
            return Verdict(plant, "error", f"{type(error).__name__}: {error}"[:300])
        if result.source == expected[unsafe]:
            return Verdict(plant, "unsafe" if unsafe else "restored")
        if _new(result.findings, baseline[unsafe], applied=True):
            return Verdict(plant, "wrong-unsafe" if unsafe else "wrong-safe", _changed(expected[unsafe], result.source))
    return Verdict(plant, "reported" if _new(result.findings, baseline[True]) else "missed")


def baseline(
    data: bytes, settings: dict[bool, Settings] = SETTINGS
) -> tuple[dict[bool, bytes], dict[bool, tuple[Finding, ...]]]:
    """What each run makes of the original, and what it finds there."""
    results = {unsafe: fix_source(data, settings=settings[unsafe]) for unsafe in (False, True)}
    return {u: r.source for u, r in results.items()}, {u: r.findings for u, r in results.items()}


def _new(findings: tuple[Finding, ...], before: tuple[Finding, ...], applied: bool = False) -> bool:
    """Whether a finding (an applied one) is not among the original's, counted by rule and text."""

    def key(f: Finding) -> tuple[str, str, str | None]:
        return f.rule, f.original, f.replacement

    chosen = [f for f in findings if f.applied or not applied]
    return bool(Counter(map(key, chosen)) - Counter(key(f) for f in before if f.applied or not applied))


def _changed(expected: bytes, got: bytes) -> str:
    """The lines semfix wrote in place of the original's."""
    old, new = expected.decode(errors="replace").splitlines(), got.decode(errors="replace").splitlines()
    lines = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            lines += [f"-{line}" for line in old[i1:i2]] + [f"+{line}" for line in new[j1:j2]]
    return "\n".join(lines)
