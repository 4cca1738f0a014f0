"""Jupyter notebooks: the code cells as one module, and the module's new text put back.

The code cells are joined into one module (imports in one cell serve kernels in another), with
IPython magics and shell escapes masked as `pass` statements, fixed like any other source
(`semfix.api.fix_notebook`), then split back. Only the JSON strings of cells that changed are
re-encoded, in the escaping style the file already uses; everything else is copied from the
original text. Nothing here analyses Python: the API, the codemod and the CLI share this.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from semfix.analysis.importer import OPAQUE_CODE
from semfix.errors import SourceError
from semfix.findings import Finding
from semfix.rewrite.text import apply_edits, line_starts

_BOUNDARY = "#semfix-cell-boundary#\n"
#: Cell magics whose body is Python, as ruff lists them: the magic's line is masked as any magic.
PYTHON_CELL_MAGICS = frozenset({"capture", "debug", "prun", "pypy", "python", "python3", "time", "timeit"})
_CELL_MAGIC = re.compile(r"\s*%%(?P<name>\w*)")
_MASK = "pass  " + OPAQUE_CODE  # the line's code stays after it: the names it spells count as read
# `%magic`, `!shell`, `?obj`, `x = !shell`, or `obj?` (IPython's help): a `?` at the end of a line
# with a `#` is left as Python, where it most likely ends a comment (`x = 1  # why?`)
_MAGIC = re.compile(r"^\s*(?:[%!?]|\w+\s*=\s*[%!])|^[^#]*\?\s*$")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_INDENT = re.compile(r"^\s*")
_MASKED = re.compile(r"^(\s*)" + re.escape(_MASK))
# A line a message names (`at line 29`), outside the code it quotes in backticks.
_LINE_NAMED = re.compile(r"`[^`\n]*`|\bline (?P<line>\d+)\b")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+\-]*|true|false|null|[][{}:,]|(?P<other>[^ \t\r\n])', re.DOTALL)

_Spans = dict[tuple[object, ...], tuple[int, int]]  # a JSON value's path -> where it is in the text


@dataclass
class _Cell:
    index: int  # position among all cells, 0-based
    lines: list[str]
    parts: list[str] | None  # the strings of the JSON `source` array; None when it is one string


def _spans(text: str) -> _Spans:
    """Where each value of the notebook's JSON sits in the text, by its path of keys and indexes.

    The text has already parsed as JSON, so this only follows its tokens.
    """
    spans: _Spans = {}
    tokens = _TOKEN.finditer(text)

    def value(path: tuple[object, ...], token: re.Match[str]) -> None:
        if token["other"] is not None:  # NaN or Infinity: json.loads takes them, JSON does not
            raise SourceError(f"not valid notebook JSON at offset {token.start()}")
        item = token
        if token[0] in ("{", "["):
            close, index = ("}" if token[0] == "{" else "]"), 0
            item = next(tokens)
            while item[0] != close:
                if close == "}":
                    next(tokens)  # the colon
                    value((*path, json.loads(item[0])), next(tokens))
                else:
                    value((*path, index), item)
                    index += 1
                item = next(tokens)
                if item[0] == ",":
                    item = next(tokens)
        spans[path] = (token.start(), item.end())

    value((), next(tokens))
    return spans


def _encode_like(value: str, original_raw: str, original_value: str) -> str:
    for ensure_ascii in (False, True):
        if json.dumps(original_value, ensure_ascii=ensure_ascii) == original_raw:
            return json.dumps(value, ensure_ascii=ensure_ascii)
    raise SourceError("cannot rewrite this notebook's JSON byte for byte (unusual string escapes)")


def _mask(line: str) -> str:
    if not _MAGIC.search(line.rstrip("\n")) or line.lstrip().startswith("#"):
        return line
    return _INDENT.sub(lambda indent: indent.group() + _MASK, line, count=1)


@dataclass
class Joined:
    """A notebook's code cells as one module: what is fixed, and how to map it back."""

    text: str  # the notebook's JSON text
    spans: _Spans
    cells: list[_Cell]
    starts: list[int]  # each cell's first line in the module, counted as Python counts (a lone CR too)
    module: str

    def cells_by_number(self) -> list[tuple[int, int, list[str]]]:
        """(the cell's 1-based number among all cells, its first line in the module, its lines)."""
        return [(cell.index + 1, start, cell.lines) for cell, start in zip(self.cells, self.starts)]

    def locate(self, finding: Finding) -> Finding:
        """The finding in the module, placed in its cell: its cell number, lines counted within
        it, and the lines its message names (`named`) and its evidence's (`related`) too; evidence
        in another cell is named in the message alone."""
        own, line = self._place(finding.line)
        _, end_line = self._place(finding.end_line)
        related = tuple(within for cell, within in map(self._place, finding.related) if cell == own)
        message = self.named(finding.message, own)
        return replace(finding, cell=own, line=line, end_line=end_line, message=message, related=related)

    def named(self, message: str, own: int | None = None) -> str:
        """`message` (a finding's or an error's) with each line of the module it names as the
        line of its cell: `line 29` becomes `cell 3, line 5`, or `line 5` in the cell `own`."""

        def name(match: re.Match[str]) -> str:
            if match["line"] is None:  # quoted code: left as written
                return match[0]
            cell, line = self._place(int(match["line"]))
            return f"line {line}" if cell == own else f"cell {cell}, line {line}"

        return _LINE_NAMED.sub(name, message)

    def _place(self, line: int) -> tuple[int, int]:
        """The module's `line` as (its cell's 1-based number among all cells, its line there)."""
        number = max((i for i, start in enumerate(self.starts) if start <= line), default=0)
        return self.cells[number].index + 1, line - self.starts[number] + 1

    def file_line(self, cell: int, line: int) -> int:
        """The line of the notebook's JSON text holding line `line` of cell `cell` (1-based, among
        all cells): where the JSON string it starts in begins, so that an annotation on the file
        (GitHub's, reviewdog's) lands on the code it is about."""
        found = next(c for c in self.cells if c.index + 1 == cell)
        path: tuple[object, ...] = ("cells", found.index, "source")
        start = sum(len(text) for text in found.lines[: line - 1])  # its offset in the cell's source
        for index, part in enumerate(found.parts or ()):
            path = ("cells", found.index, "source", index)
            if start < len(part):
                break
            start -= len(part)
        return self.text.count("\n", 0, self.spans[path][0]) + 1

    def rebuild(self, new_module: str) -> bytes:
        """The notebook's bytes with each code cell given its new text from `new_module`."""
        edits = []
        for cell, new_body in zip(self.cells, new_module.split(_BOUNDARY)):
            old_text = "".join(cell.lines)
            new_text = "".join(_MASKED.sub(r"\1", line, count=1) for line in _LINES.findall(new_body))
            if not old_text.endswith("\n") and new_text.endswith("\n"):
                new_text = new_text[:-1]
            if new_text != old_text:
                edits += _edits(self.text, self.spans, cell, new_text)
        return apply_edits(self.text, 0, len(self.text), edits).encode("utf-8")


def join_cells(data: bytes) -> Joined | None:
    """The notebook's code cells joined into one module; None for a notebook not in Python.
    Raises SourceError for bytes that are not a notebook."""
    try:
        text = data.decode("utf-8")
        notebook = json.loads(text)
    except (UnicodeDecodeError, ValueError) as error:
        raise SourceError(f"not a readable notebook: {error}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise SourceError("not a notebook in nbformat 4 (no top-level cells list)")
    if notebook.get("metadata", {}).get("language_info", {}).get("name", "python") != "python":
        return None
    spans = _spans(text)
    cells = []
    for index, cell in enumerate(notebook["cells"]):
        source = cell.get("source", "")
        if cell.get("cell_type") != "code" or ("cells", index, "source") not in spans:
            continue
        joined = "".join(source) if isinstance(source, list) else source
        magic = _CELL_MAGIC.match(joined)
        if magic and magic["name"] not in PYTHON_CELL_MAGICS:
            continue  # a cell magic whose body is not Python (`%%bash`, `%%html`): not checked
        cells.append(_Cell(index, _LINES.findall(joined), source if isinstance(source, list) else None))
    module: list[str] = []
    starts: list[int] = []
    for cell in cells:
        starts.append(len(line_starts("".join(module[-2:]))) + (starts[-1] - 1 if starts else 0))
        body = "".join(_mask(line) for line in cell.lines)
        module.append(body if body.endswith("\n") or not body else body + "\n")
        module.append(_BOUNDARY)
    return Joined(text, spans, cells, starts, "".join(module))


def _edits(text: str, spans: _Spans, cell: _Cell, new_text: str) -> list[tuple[int, int, str]]:
    """The edits to the text that give a changed cell its new source: only the changed strings."""
    base = ("cells", cell.index, "source")
    if cell.parts is None:
        start, end = spans[base]
        raw = text[start:end]
        return [(start, end, _encode_like(new_text, raw, json.loads(raw)))]
    new_lines = _LINES.findall(new_text)
    old_spans = [spans[base + (i,)] for i in range(len(cell.parts))]
    if cell.parts == cell.lines and len(new_lines) == len(cell.lines):  # one string per line, kept so
        return [
            (start, end, _encode_like(new, text[start:end], old))
            for (start, end), old, new in zip(old_spans, cell.lines, new_lines)
            if old != new
        ]
    if not old_spans:
        raise SourceError("cannot rewrite an empty cell")
    separator = text[old_spans[0][1] : old_spans[1][0]] if len(old_spans) > 1 else ", "
    style_raw, style_old = text[old_spans[0][0] : old_spans[0][1]], cell.parts[0]
    encoded = separator.join(_encode_like(line, style_raw, style_old) for line in new_lines)
    return [(old_spans[0][0], old_spans[-1][1], encoded)]
