"""A notebook document in the language server: its code cells, checked as `semfix.api` checks
a notebook file (the cells joined into one module, so an import in one cell serves a kernel in
another), with each finding published on its cell. Code actions work on the notebook as a
whole and come back as each changed cell's new text; their fixes are made and proved by the
API on the joined module, as for a `.ipynb` file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property

from lsprotocol import types as lsp

from semfix.api import (
    FixResult,
    SourceError,
    fix_finding,
    fix_notebook,
    fix_source,
    join_cells,
)
from semfix.findings import Finding
from semfix.rewrite.text import apply_edits
from semfix.server.lsp import (
    Lines,
    comment_edit,
    diagnostic,
    fix_action,
    fix_all_action,
    silence_action,
    still_found,
    text_edits,
)
from semfix.settings import Settings


@dataclass(frozen=True)
class Cell:
    uri: str
    version: int | None
    text: str
    lines: Lines = field(compare=False)


@dataclass(frozen=True)
class Notebook:
    uri: str
    cells: tuple[Cell, ...]  # the code cells, in order
    settings: Settings

    @cached_property
    def data(self) -> bytes:
        return self.json([cell.text for cell in self.cells])

    @staticmethod
    def json(texts: list[str]) -> bytes:
        """The cells as a notebook file holds them, for `fix_notebook` and `join_cells`."""
        cells: list[dict[str, object]] = [
            {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}
            for text in texts
        ]
        python = {"language_info": {"name": "python"}}
        notebook = {"cells": cells, "metadata": python, "nbformat": 4, "nbformat_minor": 5}
        return json.dumps(notebook).encode("utf-8")

    def analyse(self, data: bytes | None = None) -> FixResult[bytes]:
        return fix_notebook(self.data if data is None else data, self.settings, apply_fixes=False)

    def of_cell(self, result: FixResult[bytes] | None, index: int) -> FixResult[str] | None:
        """One cell's findings (cells count from 1), as a text document's result."""
        if result is None:
            return None
        found = tuple(f for f in result.findings if f.cell == index + 1)
        return FixResult(self.cells[index].text, found, "utf-8", result.parsed)

    def diagnostics(self, result: FixResult[bytes] | None, index: int) -> list[lsp.Diagnostic]:
        mine = self.of_cell(result, index)
        return [] if mine is None else [diagnostic(f, self.cells[index].lines) for f in mine.findings]

    def edit(self, data: bytes) -> lsp.WorkspaceEdit | None:
        """Each changed cell's edit, from the notebook's new JSON; None if nothing changed."""
        texts = [cell["source"] for cell in json.loads(data)["cells"]]
        texts = ["".join(text) if isinstance(text, list) else text for text in texts]
        changes = []
        for cell, new in zip(self.cells, texts):
            if new != cell.text:
                identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version)
                spans = text_edits(cell.text, new)
                edits = [lsp.TextEdit(cell.lines.range_of(start, end), text) for start, end, text in spans]
                changes.append(lsp.TextDocumentEdit(identifier, edits))
        return lsp.WorkspaceEdit(document_changes=changes) if changes else None

    def fix_all(self) -> lsp.CodeAction | None:
        try:
            edit = self.edit(fix_notebook(self.data, self.settings).source)
        except SourceError:
            return None
        return None if edit is None else fix_all_action(edit)

    def quick_fix(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None:
        """The finding's own fix, made and proved on the joined module (`fix_finding`)."""
        if finding.fix is None:
            return None
        try:
            joined = join_cells(self.data)
            if joined is None:
                return None
            module = fix_source(joined.module, settings=self.settings, apply_fixes=False).findings
            ours = [f for f in module if _key(joined.locate(f)) == _key(finding)]
            if not ours:
                return None
            edit = self.edit(joined.rebuild(fix_finding(joined.module, ours[0], self.settings).source))
        except SourceError:
            return None
        return None if edit is None else fix_action(finding, item, edit)

    def silence(self, finding: Finding, item: lsp.Diagnostic) -> lsp.CodeAction | None:
        index = (finding.cell or 1) - 1
        cell = self.cells[index]
        for line in dict.fromkeys((finding.line, finding.end_line)):
            texts = [c.text for c in self.cells]
            texts[index] = apply_edits(cell.text, 0, len(cell.text), [comment_edit(cell.lines, line, finding.rule)])
            data = self.json(texts)
            try:
                if still_found(self.analyse(data).findings, finding):
                    continue
            except SourceError:
                continue
            edit = self.edit(data)
            if edit is not None:
                return silence_action(finding, item, edit)
        return None

    def cell_of(self, uri: str) -> int | None:
        return next((i for i, cell in enumerate(self.cells) if cell.uri == uri), None)


def _key(finding: Finding) -> tuple[object, ...]:
    return finding.rule, finding.cell, finding.line, finding.column, finding.end_line, finding.end_column
