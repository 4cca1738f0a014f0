"""The language server's hot path from a change to its diagnostics, in process: positions given
as the client counts them without asking the codec for every character, and the engine run with
the cycle collector paused (benchmarks/server_latency.py measures the whole of it)."""

from __future__ import annotations

import asyncio
import gc
import re
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types as lsp
from pygls.workspace.position_codec import PositionCodec

from semfix import api
from semfix.findings import Finding
from semfix.rewrite.text import apply_edits
from semfix.selection import build_settings
from semfix.server import lsp as lsp_module
from semfix.server.lsp import Document, Lines, moved, text_edits
from semfix.server.session import SemfixServer, _uncollected
from semfix.settings import Settings

ENCODINGS = [lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf16, lsp.PositionEncodingKind.Utf32]

TEXTS = {
    "ascii": "import jax\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[0])\n",
    "no final newline": "x = 1\ny = 2",
    "empty": "",
    "crlf": "x = 1\r\ny = 'é'\r\n\r\n",
    "lone cr": "x = 1\ry = 2\r\nz = 3\n",
    "wide characters": "s = '日本語'  # é\nt = '😋😋' + sem[0]\nu = 1\n",
    "form feed and separators": "x = 1\x0c\ny = '\u2028'\nz = '\x1c'\n",
}


def _old_lines(text: str) -> list[str]:
    """How Lines split a text before: at each line break Python's tokenizer ends a line at."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]


@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_lines_split_where_the_tokenizer_does(text: str) -> None:
    lines = Lines(text, PositionCodec())
    assert lines.lines == _old_lines(text)
    assert lines.starts == [sum(len(line) for line in lines.lines[:i]) for i in range(len(lines.lines))]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("text", TEXTS.values(), ids=TEXTS.keys())
def test_positions_are_the_codecs(text: str, encoding: lsp.PositionEncodingKind) -> None:
    """Every line and column a finding may name (and some past the end) gives the position
    pygls's codec gives."""
    codec = PositionCodec(encoding)
    lines = Lines(text, codec)
    split = _old_lines(text)
    for line in range(1, len(split) + 3):
        width = len(split[line - 1]) if line <= len(split) else 0
        for column in range(1, width + 4):
            expected = codec.position_to_client_units(split, lsp.Position(line - 1, column - 1))
            assert lines.position(line, column) == expected, (line, column)


def test_the_engine_runs_with_the_cycle_collector_paused() -> None:
    """A check makes no cycles, and the collector walking its young objects cost a tenth of it:
    the worker runs with the collector paused and gives it back as it found it."""
    server = SemfixServer()
    try:
        assert gc.isenabled()
        assert asyncio.run(server.on_worker(gc.isenabled)) is False
        assert gc.isenabled()
        with pytest.raises(ZeroDivisionError):
            asyncio.run(server.on_worker(lambda: 1 // 0))
        assert gc.isenabled()
        gc.disable()
        try:
            assert _uncollected(gc.isenabled) is False
            assert not gc.isenabled()  # paused by someone else: left so
        finally:
            gc.enable()
    finally:
        server.worker.shutdown()


OLD = "a = 1\nb = sem[...]\nc = 3\nd = 4\ne = sem[...]\n"


@pytest.mark.parametrize(
    ("new", "made"),
    [
        (OLD.replace("sem[...]", "sem"), [(13, 18, ""), (38, 43, "")]),  # the engine's own edits
        (OLD.replace("sem[...]", "sem"), [(10, 18, "sem"), (10, 18, "sem"), (33, 43, "= sem")]),  # wider, twice
        (OLD.replace("sem[...]", "sem"), [(0, 40, "x")]),  # wrong: the text is diffed instead
        ("a = 1\nb = sem\nx = 0\nc = 3\ne = sem\n", []),  # lines added and removed: diffed
        ("", []),
        (OLD, []),
    ],
)
def test_text_edits_are_each_changed_span_in_order(new: str, made: list[tuple[int, int, str]]) -> None:
    """Each edit narrowed to what it changes, none overlapping, in the document's order, all
    counted in the old text (as LSP asks), and together they make the new text."""
    edits = text_edits(OLD, new, made)
    assert apply_edits(OLD, 0, len(OLD), edits) == new
    assert edits == sorted(edits) and all(a[1] <= b[0] for a, b in zip(edits, edits[1:]))
    for start, end, text in edits:  # nothing kept that the edit leaves as it was
        assert start < end or text
        assert not (start < end and text) or (OLD[start] != text[0] and OLD[end - 1] != text[-1])
    if new == OLD.replace("sem[...]", "sem"):
        assert edits == [(13, 18, ""), (38, 43, "")]


def test_resolving_makes_the_named_action_alone_with_one_run_of_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """`codeAction/resolve` builds the one action its `data` names, from the analysis the
    diagnostics came from: a quick fix or fix all is one run of the engine (the fix), a
    silencing comment one (the check of the new text)."""
    text = "from jax.experimental import pallas as pl\n\n\ndef k(sem):\n    pl.semaphore_wait(sem[...])\n"
    found = api.fix_source(text, apply_fixes=False).findings
    document = Document("file:///k.py", 1, text, Lines(text, PositionCodec()), build_settings(), found=found)
    runs: list[bool] = []
    real = api.fix_source

    def counted(source: str, *, settings: Settings | None = None, apply_fixes: bool = True) -> object:
        runs.append(apply_fixes)
        return real(source, settings=settings, apply_fixes=apply_fixes)

    monkeypatch.setattr(api, "fix_source", counted)
    monkeypatch.setattr(lsp_module, "fix_source", counted)
    (finding,) = found
    for kind, engine_runs in [("fix", [True]), ("silence", [False]), ("fixAll", [True])]:
        runs.clear()
        data = {"action": kind, "rule": finding.rule, "place": list(lsp_module.place(finding))}
        made = lsp_module.resolve(document, found, data, None)
        assert made is not None and made.edit is not None and runs == engine_runs, kind
    assert lsp_module.resolve(document, found, {"action": "fix", "rule": "SEM001", "place": [9, 9, 9, 9]}, None) is None


@pytest.mark.parametrize(
    ("new", "kept"),
    [
        ("x = 1\ny = (\nz = sem[0]\nw = sem[1]\n", [3, 4]),  # an open bracket above: both move one down
        ("y = (\nz = sem[0]\nw = sem[1]\n", [2, 3]),  # a line deleted above: both move up
        ("x = (\nz = sem[0]\nw = sem[1]\ny = (\n", [2, 3]),  # lines changed above and below: both stay
        ("z = sem[0]\nw = sem[1\n", [1]),  # the second's own line changed: it goes
        ("z = sem[0]\n", [1]),  # the end cut off: nothing points past it
        ("z = sem[", []),
        ("", []),
    ],
)
def test_the_last_findings_move_with_the_edits_and_never_past_the_end(new: str, kept: list[int]) -> None:
    old = "z = sem[0]\nw = sem[1]\n"
    findings = [Finding("SEM001", line, 5, line, 11, "m", f"sem[{line - 1}]", None, False) for line in (1, 2)]
    lines = Lines(new, PositionCodec())
    found = moved(findings, old, lines)
    assert [f.line for f in found] == kept
    for finding in found:  # each on its own text, in the new text
        assert finding.end_line <= len(lines.lines)
        assert lines.line_text(finding.line)[finding.column - 1 : finding.end_column - 1] == finding.original


def test_a_burst_of_changes_analyses_the_newest_text_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each change queues an analysis on the worker; cancelling the task that awaits one does not
    stop it, so a burst of typing built a backlog. One that begins after a newer change skips."""
    newest = {"version": 50}

    class Texts:
        def get_text_document(self, uri: str) -> object:
            return type("Text", (), {"version": newest["version"]})()

    monkeypatch.setattr(SemfixServer, "workspace", property(lambda self: Texts()))
    analysed: list[int] = []
    monkeypatch.setattr(SemfixServer, "analyse", lambda self, document: analysed.append(document.version))
    server = SemfixServer()

    async def burst() -> list[object]:
        documents = [type("Document", (), {"version": version})() for version in range(1, 51)]
        return await asyncio.gather(*(server.on_worker(lambda d=d: server._newest("k.py", d)) for d in documents))

    try:
        results = asyncio.run(burst())
    finally:
        server.worker.shutdown()
    assert analysed == [50]
    assert sum(result is not None for result in results) == 49  # the stale ones, skipped


def test_a_save_reads_again_only_the_project_files_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from semfix.server import project

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for index in range(20):
        (tmp_path / "pkg" / f"m{index}.py").write_text(f"from .sync import DeviceIdType as d{index}\n")
    (tmp_path / "pkg" / "sync.py").write_text("from jax.experimental.pallas.tpu import DeviceIdType\n")
    (tmp_path / "pkg" / "data.py").write_text("TABLE = " + "1, " * 1000 + "\n")
    reads: list[Path] = []
    real = project.read_source
    monkeypatch.setattr(project, "read_source", lambda path: reads.append(path) or real(path))
    projects = project.Projects(roots=[tmp_path])
    sync = tmp_path / "pkg" / "sync.py"
    assert projects.imported(sync, {}) == {"DeviceIdType"}
    assert len(reads) == 23
    assert projects.disk[tmp_path][tmp_path / "pkg" / "data.py"][1] == b""  # imports nothing: not kept
    projects.saved()
    reads.clear()
    (tmp_path / "pkg" / "m3.py").write_text("import os\n")
    assert projects.imported(sync, {}) == {"DeviceIdType"}
    assert reads == [tmp_path / "pkg" / "m3.py"]
