"""What the language server says about one document: its findings as LSP diagnostics, and the
code actions on them. Every edit comes out of `semfix.api`, made and proved there as `fix`
makes it: a quick fix is the finding's one `Fix` (`fix_finding`), "fix all" is `fix_source`,
and a silencing comment is kept only if a fresh check no longer reports the finding.

Positions: a `Finding` counts 1-based lines and columns in characters, `Fix.edits` count
characters from the start of the text; the client counts 0-based lines and columns in its
position encoding (UTF-16 unless it negotiated another), which pygls's codec converts to.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import cached_property
from itertools import accumulate
from typing import Any, Protocol

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from semfix.api import FixResult, SourceError, fix_finding, fix_source
from semfix.findings import Edit, Finding
from semfix.rewrite.text import apply_edits, line_starts
from semfix.settings import Settings

SOURCE = "semfix"
FIX_ALL = f"{lsp.CodeActionKind.SourceFixAll.value}.{SOURCE}"  # source.fixAll.semfix: fix on save
KINDS = (lsp.CodeActionKind.QuickFix, FIX_ALL)
_IGNORE_CODES = re.compile(r"#\s*semfix:\s*ignore\[(?P<codes>[A-Za-z0-9,\s]*)\]")


class Lines:
    """One text's lines, to turn semfix's positions into the client's. They are split when first
    asked for (on every change, but a text with no findings needs none of them). `bom`: the
    client's buffer holds a U+FEFF before the text (which Python's parser refuses in a string),
    so its first line's positions are one character further on."""

    def __init__(self, text: str, codec: PositionCodec, bom: bool = False) -> None:
        self.text = text
        self.codec = codec
        self.bom = bom

    @cached_property
    def starts(self) -> list[int]:
        return line_starts(self.text)

    @cached_property
    def lines(self) -> list[str]:
        """Each line with its line break (the last line's may be empty), split where Python's
        tokenizer splits them."""
        if "\r" in self.text:  # a lone CR ends a line too
            starts = self.starts
            return [self.text[a:b] for a, b in zip(starts, [*starts[1:], len(self.text)])]
        *ended, last = self.text.split("\n")
        return [line + "\n" for line in ended] + [last]

    def position(self, line: int, column: int) -> lsp.Position:
        """The client's position of a 1-based line and character column. In an ASCII line a
        character is one unit in every encoding, so the codec (which counts each character of
        the line before it) is needed only for the others."""
        lines, index, character = self.lines, line - 1, column - 1
        if self.bom and index == 0:
            return self.codec.position_to_client_units(["\ufeff" + lines[0]], lsp.Position(0, character + 1))
        if 0 <= index < len(lines) and 0 <= character <= len(lines[index]) and lines[index].isascii():
            return lsp.Position(index, character)
        return self.codec.position_to_client_units(lines, lsp.Position(index, character))

    def at(self, offset: int) -> lsp.Position:
        """The client's position of a character offset."""
        line = bisect.bisect_right(self.starts, offset)
        return self.position(line, offset - self.starts[line - 1] + 1)

    def range_of(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.at(start), self.at(end))

    def line_text(self, line: int) -> str:
        """A 1-based line without its line ending."""
        return self.lines[line - 1].rstrip("\r\n") if line <= len(self.lines) else ""


def place(finding: Finding) -> tuple[int, int, int, int]:
    return finding.line, finding.column, finding.end_line, finding.end_column


def diagnostic(finding: Finding, lines: Lines) -> lsp.Diagnostic:
    """A finding as the client shows it; `data` names it again for the code actions."""
    start, end = lines.position(finding.line, finding.column), lines.position(finding.end_line, finding.end_column)
    fixable = "" if finding.fix is None else f" [{finding.fix.applicability} fix]"
    return lsp.Diagnostic(
        range=lsp.Range(start, end),
        message=finding.message + fixable,
        severity=lsp.DiagnosticSeverity.Warning,
        code=finding.rule,
        source=SOURCE,
        data={"rule": finding.rule, "place": list(place(finding))},
    )


def diagnostics(result: FixResult[str] | None, lines: Lines) -> list[lsp.Diagnostic]:
    """A text document's diagnostics; none without a result (where the text does not parse, the
    session shows the last ones instead, moved: `moved`)."""
    return [] if result is None else [diagnostic(f, lines) for f in result.findings if f.cell is None]


def moved(findings: Iterable[Finding], old: str, new: Lines) -> list[Finding]:
    """`findings` of the text `old`, on the text `new` (one that does not parse): each on lines
    the edits left alone, moved by the lines they added or removed above it; one on a changed
    line is dropped. A kept one lies on lines the same in both texts, so it never points past
    the end of `new`. The lines between the first and the last changed one are diffed (few,
    as typing goes)."""
    before, after = Lines(old, new.codec).lines, new.lines
    shortest = min(len(before), len(after))
    head = 0
    while head < shortest and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < shortest - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    blocks = SequenceMatcher(None, before[head : len(before) - tail], after[head : len(after) - tail])
    same = [(0, 0, head), *((head + a, head + b, size) for a, b, size in blocks.get_matching_blocks())]
    same.append((len(before) - tail, len(after) - tail, tail))
    kept = []
    for finding in findings:  # lines count from 1, blocks from 0
        for a, b, size in same:
            if a < finding.line and finding.end_line <= a + size:
                kept.append(replace(finding, line=finding.line + b - a, end_line=finding.end_line + b - a))
                break
    return kept


def findings_of(findings: Iterable[Finding], wanted: Iterable[lsp.Diagnostic]) -> list[Finding]:
    """The findings the client's diagnostics are about, matched on rule and place."""
    by_place = {(f.rule, place(f)): f for f in findings}
    found = []
    for item in wanted:
        data = item.data if isinstance(item.data, dict) else {}
        key = (data.get("rule"), tuple(data.get("place", ())))
        if key in by_place and by_place[key] not in found:
            found.append(by_place[key])
    return found


def wants(only: Sequence[str] | None, kind: str) -> bool:
    """Does the request's `only` ask for `kind`? Kinds are hierarchical: `source.fixAll` asks
    for `source.fixAll.semfix`."""
    return not only or any(kind == asked or kind.startswith(asked + ".") for asked in only)


class Target(Protocol):
    """A text document or a notebook: what its code actions are made of."""

    @property
    def settings(self) -> Settings: ...

    def quick_fix(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None: ...
    def silence(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None: ...
    def fix_all(self) -> lsp.CodeAction | None: ...


def code_actions(
    target: Target,
    findings: Sequence[Finding],
    context: lsp.CodeActionContext,
    *,
    lazy: bool = False,
    every: Sequence[Finding] | None = None,
) -> list[lsp.CodeAction]:
    """The quick fixes and silencing comments for the diagnostics in `context` (`findings` are
    the ones they may name), then fix all, where one of `every` finding (by default `findings`)
    has a fix it makes. `lazy`, for a client that resolves code actions, lists
    them without their edits, as ruff does: each edit costs a check or two, and the client asks
    for the actions at every move of the cursor. `codeAction/resolve` makes them (eagerly)."""
    actions: list[lsp.CodeAction | None] = []
    only = [str(kind) for kind in context.only] if context.only else None
    if wants(only, lsp.CodeActionKind.QuickFix):
        ours = [d for d in context.diagnostics if d.source == SOURCE]
        named = findings_of(findings, ours)
        lines = [f.line for f in named]
        for finding in named:
            item = next(d for d in ours if isinstance(d.data, dict) and d.data.get("place") == list(place(finding)))
            if lazy:
                fix = listed(fix_action(finding, item), "fix", finding) if finding.fix else None
                mine = [fix, listed(silence_action(finding, item), "silence", finding)]
            else:
                mine = [target.quick_fix(finding, item), target.silence(finding, item)]
            for action in mine if lines.count(finding.line) > 1 else ():  # the same titles: which is which
                if action is not None:
                    rule = f"({finding.rule})"
                    action.title = action.title.replace(rule, f"({finding.rule}, column {finding.column})", 1)
            actions += mine
    unsafe = target.settings.unsafe_fixes
    fixable = any(f.fix is not None and (f.safety == "safe" or unsafe) for f in (findings if every is None else every))
    if wants(only, FIX_ALL) and fixable:
        actions.append(listed(fix_all_action(), "fixAll") if lazy else target.fix_all())
    return [action for action in actions if action is not None]


def listed(action: lsp.CodeAction, kind: str, finding: Finding | None = None) -> lsp.CodeAction:
    """An action listed without its edit: its `data` names it, so that `codeAction/resolve`
    makes that one action alone (`resolve`)."""
    action.data = (
        {"action": kind} if finding is None else {"action": kind, "rule": finding.rule, "place": place(finding)}
    )
    return action


def resolve(
    target: Target, findings: Sequence[Finding], data: dict[str, Any], item: lsp.Diagnostic | None
) -> lsp.CodeAction | None:
    """The action a listed one's `data` names, made with its edit; None where the text changed
    so that it no longer is offered (the client then does nothing)."""
    if data.get("action") == "fixAll":
        return target.fix_all()
    key = (data.get("rule"), tuple(data.get("place") or ()))
    finding = next((f for f in findings if (f.rule, place(f)) == key), None)
    if finding is None:
        return None
    item = item or diagnostic(finding, Lines("", PositionCodec()))  # only the edit is sent back
    return target.quick_fix(finding, item) if data.get("action") == "fix" else target.silence(finding, item)


def fix_action(finding: Finding, item: lsp.Diagnostic, edit: lsp.WorkspaceEdit | None = None) -> lsp.CodeAction:
    """A finding's quick fix: an unsafe one says so and is never the preferred action."""
    unsafe = finding.safety == "unsafe"
    new = f"`{finding.replacement}`" if finding.replacement else "nothing"
    return lsp.CodeAction(
        title=f"semfix ({finding.rule}): replace `{finding.original}` with {new}" + (" (unsafe)" if unsafe else ""),
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[item],
        is_preferred=not unsafe,
        edit=edit,
    )


def silence_action(finding: Finding, item: lsp.Diagnostic, edit: lsp.WorkspaceEdit | None = None) -> lsp.CodeAction:
    return lsp.CodeAction(
        title=f"semfix ({finding.rule}): silence with `# semfix: ignore[{finding.rule}]`",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[item],
        edit=edit,
    )


def fix_all_action(edit: lsp.WorkspaceEdit | None = None) -> lsp.CodeAction:
    return lsp.CodeAction(title="semfix: fix all", kind=FIX_ALL, edit=edit)


def still_found(findings: Iterable[Finding], finding: Finding) -> bool:
    """Is `finding` among `findings` (a check of the text with a silencing comment)?"""
    key = (finding.rule, finding.cell, finding.line, finding.column)
    return any((f.rule, f.cell, f.line, f.column) == key for f in findings)


@dataclass(frozen=True)
class Document:
    """A text document as one check saw it; its code actions' edits are tied to its version."""

    uri: str
    version: int | None
    text: str
    lines: Lines
    settings: Settings
    found: Sequence[Finding] | None = None  # the findings of a check of this text, if made

    def edit(self, edits: list[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        """Edits tied to the version they were made for: a client drops them if the text moved on."""
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=self.uri, version=self.version)
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(identifier, edits)])

    def fix_all(self) -> lsp.CodeAction | None:
        """ "Fix all semfix": `fix_source` under the document's settings, sent as its changed
        spans (the applied fixes' own edits), so an editor keeps its marks elsewhere."""
        try:
            result = fix_source(self.text, settings=self.settings)
        except SourceError:
            return None
        if result.source == self.text:
            return None
        made = [edit for f in result.findings if f.applied and f.fix is not None for edit in f.fix.edits]
        return fix_all_action(self.edit(self.text_edits(result.source, made)))

    def text_edits(self, new: str, made: Iterable[Edit] = ()) -> list[lsp.TextEdit]:
        return [
            lsp.TextEdit(self.lines.range_of(start, end), text) for start, end, text in text_edits(self.text, new, made)
        ]

    def quick_fix(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None:
        """The finding's own fix, made and proved alone (with the rest of its decision, or the
        fix that holds it: `fix_finding`); its edits are the applied `Fix.edits`."""
        if finding.fix is None:
            return None
        try:
            result = fix_finding(self.text, finding, self.settings, found=self.found)
        except SourceError:
            return None
        made = [edit for f in result.findings if f.applied and f.fix is not None for edit in f.fix.edits]
        if not made or result.source == self.text:
            return None
        return fix_action(finding, item, self.edit(self.text_edits(result.source, made)))

    def silence(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None:
        """`# semfix: ignore[CODE]` on the finding's first line (or its last), kept only if a
        check of the new text no longer reports the finding and still reads the file."""
        for line in dict.fromkeys((finding.line, finding.end_line)):
            edit = comment_edit(self.lines, line, finding.rule)
            new = apply_edits(self.text, 0, len(self.text), [edit])
            try:
                again = fix_source(new, settings=self.settings, apply_fixes=False).findings
            except SourceError:
                continue
            if not still_found(again, finding):
                text_edit = lsp.TextEdit(self.lines.range_of(edit[0], edit[1]), edit[2])
                return silence_action(finding, item, self.edit([text_edit]))
        return None


def comment_edit(lines: Lines, line: int, rule: str) -> Edit:
    """Adds `rule` to the line's `# semfix: ignore[...]`, or appends one after its code."""
    start = lines.starts[line - 1]
    text = lines.line_text(line)
    existing = _IGNORE_CODES.search(text)
    if existing:
        codes = [c.strip() for c in existing["codes"].split(",") if c.strip()]
        return start + existing.start("codes"), start + existing.end("codes"), ", ".join([*codes, rule])
    code_end = len(text.rstrip())
    return start + code_end, start + len(text), f"  # semfix: ignore[{rule}]"


def text_edits(old: str, new: str, made: Iterable[Edit] = ()) -> list[Edit]:
    """The edits turning `old` into `new`, each narrowed to the span it changes, in order, none
    overlapping, all counted in `old` (as LSP wants a workspace edit's): an editor then moves
    its marks only where the text changed. `made`, the engine's own edits, are used when they
    make `new` exactly (a fix's always do); otherwise the lines are diffed."""
    edits = sorted(set(made))
    overlap = any(a[1] > b[0] for a, b in zip(edits, edits[1:]))
    if not edits or overlap or apply_edits(old, 0, len(old), edits) != new:
        edits = _diff(old, new)
    narrowed = []
    for start, end, text in edits:
        first, last, middle = one_edit(old[start:end], text)
        if first < last or middle:
            narrowed.append((start + first, start + last, middle))
    return narrowed


def _diff(old: str, new: str) -> list[Edit]:
    """One edit per run of changed lines (difflib's, whose runs never touch)."""
    before, after = old.splitlines(keepends=True), new.splitlines(keepends=True)
    starts = [0, *accumulate(len(line) for line in before)]
    opcodes = SequenceMatcher(None, before, after).get_opcodes()
    return [(starts[i1], starts[i2], "".join(after[j1:j2])) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]


def one_edit(old: str, new: str) -> Edit:
    """One edit turning `old` into `new`: what lies between their common prefix and suffix."""
    prefix = 0
    while prefix < min(len(old), len(new)) and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(old), len(new)) - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    return prefix, len(old) - suffix, new[prefix : len(new) - suffix]


def client_settings(raw: Any) -> dict[str, Any]:
    """The client's settings for semfix: `initializationOptions` or a `workspace/configuration`
    answer, either flat or under `settings` (as ruff's are) or `semfix`."""
    if not isinstance(raw, dict):
        return {}
    for key in ("settings", SOURCE):
        value = raw.get(key)
        if isinstance(value, dict):
            return value
    return raw
