"""`semfix server` end to end: pygls's LanguageClient drives `python -m semfix server` in a
subprocess through initialize, open, change, diagnostics, code actions, their edits, shutdown.
Every wait is bounded (tests/lsp_client.py), so a hung server fails the test."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types as lsp

from semfix.api import fix_finding, fix_source
from tests.lsp_client import RESOLVING, ROOT, Client, apply, session

KERNEL = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, sem):
    pltpu.semaphore_signal(sem[...], 1)
    pltpu.semaphore_wait(sem[...])
"""

UNSAFE = """\
from jax.experimental import pallas as pl


def helper(sems, i):
    pl.semaphore_signal(sems[i], 1)
"""


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 120))


def _document(folder: Path, text: str, name: str = "kernel.py") -> str:
    path = folder / name
    path.write_text(text)
    return path.as_uri()


def test_diagnostics_then_a_quick_fix_applied_then_fewer_diagnostics(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            found = await client.diagnostics(uri)
            assert [(d.code, d.range.start.line, d.range.start.character) for d in found] == [
                ("SEM001", 5, 27),
                ("SEM001", 6, 25),
            ]
            assert {(d.source, d.severity) for d in found} == {("semfix", lsp.DiagnosticSeverity.Warning)}
            assert found[0].range.end.character == 27 + len("sem[...]")
            actions = await client.actions(uri, found[:1])
            (fix,) = [a for a in actions if a.kind == lsp.CodeActionKind.QuickFix and "replace" in a.title]
            assert fix.is_preferred and "(unsafe)" not in fix.title
            fixed = apply(KERNEL, fix.edit)  # type: ignore[arg-type]
            assert fixed == KERNEL.replace("signal(sem[...]", "signal(sem")  # that finding's fix only
            client.change(uri, fixed)
            assert [d.range.start.line for d in await client.diagnostics(uri)] == [6]

    run(test)


def _spans(action: lsp.CodeAction) -> list[tuple[int, int, int, int, str]]:
    (change,) = action.edit.document_changes  # type: ignore[union-attr]
    edits = change.edits  # type: ignore[union-attr]
    return [
        (e.range.start.line, e.range.start.character, e.range.end.line, e.range.end.character, e.new_text)
        for e in edits
    ]


def test_fix_all_is_source_fix_all_semfix_one_edit_per_changed_span(tmp_path: Path) -> None:
    """Only what changes is sent (an editor keeps the marks and extmarks elsewhere), in order."""

    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            await client.diagnostics(uri)
            (action,) = await client.actions(uri, [], only=[lsp.CodeActionKind.SourceFixAll])
            assert action.kind == "source.fixAll.semfix"
            (change,) = action.edit.document_changes  # type: ignore[union-attr]
            assert change.text_document.version == 1  # type: ignore[union-attr]
            assert _spans(action) == [(5, 30, 5, 35, ""), (6, 28, 6, 33, "")]  # each `[...]`, deleted
            assert apply(KERNEL, action.edit) == fix_source(KERNEL).source  # type: ignore[arg-type]
            assert await client.actions(uri, [], only=[lsp.CodeActionKind.QuickFix]) == []
            found = await client.diagnostics(uri)
            (fix,) = [a for a in await client.actions(uri, found[1:]) if "replace" in a.title]
            assert _spans(fix) == [(6, 28, 6, 33, "")]

    run(test)


def test_silence_comment_ends_the_finding(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            found = await client.diagnostics(uri)
            (silence,) = [a for a in await client.actions(uri, found[1:]) if "silence" in a.title]
            silenced = apply(KERNEL, silence.edit)  # type: ignore[arg-type]
            assert "    pltpu.semaphore_wait(sem[...])  # semfix: ignore[SEM001]\n" in silenced
            client.change(uri, silenced)
            assert [d.range.start.line for d in await client.diagnostics(uri)] == [5]

    run(test)


def test_an_unsafe_fix_is_offered_marked_and_never_in_fix_all(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, UNSAFE)
        async with session(tmp_path) as client:
            client.open(uri, UNSAFE)
            found = await client.diagnostics(uri)
            assert [d.code for d in found] == ["SEM002"]
            (fix,) = [a for a in await client.actions(uri, found) if "replace" in a.title]
            assert fix.title.endswith("(unsafe)") and not fix.is_preferred
            assert apply(UNSAFE, fix.edit) == UNSAFE.replace("sems[i]", "sems.at[i]")  # type: ignore[arg-type]
            assert await client.actions(uri, [], only=["source.fixAll.semfix"]) == []

    run(test)


def test_while_the_buffer_does_not_parse_the_last_diagnostics_stay_moved_with_the_edits(tmp_path: Path) -> None:
    """No flicker mid-typing (as rust-analyzer): a text that does not parse shows the last
    diagnostics, moved by the lines added above them; one on a changed line goes. Once the text
    parses again, it is checked as ever."""

    def where(found: list[lsp.Diagnostic]) -> list[tuple[int, int, int]]:
        return [(d.range.start.line, d.range.start.character, d.range.end.character) for d in found]

    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            assert where(await client.diagnostics(uri)) == [(5, 27, 35), (6, 25, 33)]
            client.insert(uri, 5, "    x = f(\n")  # an open bracket: the text does not parse
            assert where(await client.diagnostics(uri)) == [(6, 27, 35), (7, 25, 33)]
            assert await client.actions(uri, [], only=[lsp.CodeActionKind.SourceFixAll]) == []
            client.insert(uri, 0, "y = [\n\n")  # still not, two lines more above both
            assert where(await client.diagnostics(uri)) == [(8, 27, 35), (9, 25, 33)]
            broken = "y = [\n\n" + KERNEL.replace(
                "    pltpu.semaphore_signal", "    x = f(\n    pltpu.semaphore_signal"
            )
            edited = broken.replace("wait(sem[...])", "wait(sem[...]")  # a finding's own line changed: it goes
            client.change(uri, edited)
            assert where(await client.diagnostics(uri)) == [(8, 27, 35)]
            client.change(uri, KERNEL + "    def broken(:\n")  # an edit at the end: all stay
            assert where(await client.diagnostics(uri)) == [(5, 27, 35), (6, 25, 33)]
            client.change(uri, "x = [\n")  # nothing left of the text that parsed
            assert await client.diagnostics(uri) == []
            client.change(uri, KERNEL)
            assert len(await client.diagnostics(uri)) == 2

    run(test)


def test_a_server_error_is_logged_and_the_session_goes_on(tmp_path: Path) -> None:
    async def test() -> None:
        missing = (tmp_path / "never_opened.py").as_uri()  # not open, not on disk: reading it fails
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            assert await client.actions(missing, [], only=[lsp.CodeActionKind.SourceFixAll]) == []
            assert any("code actions failed" in log for log in client.logs)
            client.open(uri, KERNEL)
            assert len(await client.diagnostics(uri)) == 2

    run(test)


def test_settings_from_pyproject_then_the_client_over_them(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nignore = ["SEM001"]\n')
    both = KERNEL + UNSAFE.split("\n\n\n", 1)[1].replace("helper", "other")

    async def test() -> None:
        uri = _document(tmp_path, both)
        async with session(tmp_path) as client:  # the file alone
            client.open(uri, both)
            assert [d.code for d in await client.diagnostics(uri)] == ["SEM002"]
        async with session(tmp_path, options={"settings": {"select": ["SEM001"]}}) as client:  # ruff's shape
            client.open(uri, both)
            assert [d.code for d in await client.diagnostics(uri)] == ["SEM001", "SEM001"]
        async with session(tmp_path, configuration={"unsafeFixes": True}) as client:  # workspace/configuration
            client.open(uri, both)
            await client.diagnostics(uri)
            (action,) = await client.actions(uri, [], only=["source.fixAll"])
            assert "sems.at[i]" in apply(both, action.edit)  # type: ignore[arg-type]

    run(test)


def test_positions_count_utf16_units(tmp_path: Path) -> None:
    text = KERNEL.replace("    pltpu.semaphore_wait(sem[...])", "    x = '\U0001f600'; pltpu.semaphore_wait(sem[...])")

    async def test() -> None:
        uri = _document(tmp_path, text)
        async with session(tmp_path) as client:
            client.open(uri, text)
            found = await client.diagnostics(uri)
            start = found[1].range.start
            assert (start.line, start.character) == (6, 35)  # 34 characters, the emoji 2 units
            (fix,) = [a for a in await client.actions(uri, found[1:]) if "replace" in a.title]
            assert apply(text, fix.edit) == text.replace("wait(sem[...]", "wait(sem")  # type: ignore[arg-type]

    run(test)


def test_hover_over_a_finding_shows_its_rule(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            await client.diagnostics(uri)
            params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(5, 29))
            hover = await asyncio.wait_for(client.text_document_hover_async(params), 30)
            assert hover is not None
            paragraphs = hover.contents.value.split("\n\n")  # type: ignore[union-attr]
            assert paragraphs[:3] == [  # the heading's lines, each its own paragraph in Markdown
                "SEM001  value-read-passed-as-semaphore",
                "fix: safe; default: on",
                "A semaphore argument reads the Ref with [...] or [()]; pass the Ref itself.",
            ]
            assert paragraphs[3].startswith("## What it does\n")
            params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(0, 0))
            assert await asyncio.wait_for(client.text_document_hover_async(params), 30) is None

    run(test)


def test_without_pygls_the_command_names_the_extra(tmp_path: Path) -> None:
    script = (
        "import sys; sys.modules['pygls'] = None; sys.argv = ['semfix', 'server']\n"
        "from semfix.cli.main import entry; entry()"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert "semfix[server]" in done.stderr


def _framed(*bodies: object) -> bytes:
    """LSP messages as a client writes them; a `bytes` body is sent as it is."""
    raw = [b if isinstance(b, bytes) else json.dumps(b).encode() for b in bodies]
    return b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) for body in raw)


def _raw_session(tmp_path: Path, *bodies: object) -> tuple[int, dict[object, dict[str, object]]]:
    """`semfix server` given these messages after `initialize`, then `exit`: its exit status
    and its answers (responses, not notifications), by id."""
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
    written = _framed(initialize, *bodies, {"jsonrpc": "2.0", "method": "exit"})
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "semfix", "server"]
    done = subprocess.run(command, input=written, capture_output=True, timeout=60, env=env, cwd=tmp_path, check=False)
    messages = [
        json.loads(body) for body in re.split(rb"Content-Length: \d+\r\n(?:[^\r\n]+\r\n)*\r\n", done.stdout)[1:]
    ]
    return done.returncode, {m.get("id"): m for m in messages if "method" not in m}


def test_the_server_answers_what_it_cannot_read_and_ends_as_the_spec_says(tmp_path: Path) -> None:
    """Every request is answered, even one whose params are not its LSP type (-32602), a body
    that is not JSON (-32700), one that is no JSON-RPC object (-32600), or one after `shutdown`
    (-32600); `exit` exits 0 after `shutdown`, 1 without."""
    hover = {"textDocument": {"uri": (tmp_path / "k.py").as_uri()}, "position": {"line": 0, "character": 0}}
    status, answers = _raw_session(
        tmp_path,
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": 5}},
        b"{not json",
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
        {"jsonrpc": "2.0", "id": 4, "method": "textDocument/hover", "params": hover},
    )
    codes = {key: answer.get("error", {}).get("code") for key, answer in answers.items()}  # type: ignore[union-attr]
    assert (status, codes) == (0, {1: None, 2: -32602, None: -32700, 3: None, 4: -32600})
    assert answers[3]["result"] is None
    status, answers = _raw_session(tmp_path, [1, 2])
    assert status == 1 and answers[None]["error"] == {"code": -32600, "message": "not a JSON-RPC message"}


IMPORTS_CELL = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
KERNEL_CELL = "def kernel(x_ref, o_ref, sem):\n    pltpu.semaphore_signal(sem[...], 1)\n"


def test_a_notebook_s_cells_are_checked_as_one_module_and_fixed_cell_by_cell(tmp_path: Path) -> None:
    notebook, cells = (tmp_path / "k.ipynb").as_uri(), [f"{(tmp_path / 'k.ipynb').as_uri()}#cell{i}" for i in (1, 2)]
    notebooks = lsp.NotebookDocumentClientCapabilities(lsp.NotebookDocumentSyncClientCapabilities())

    async def test() -> None:
        async with session(tmp_path, capabilities=lsp.ClientCapabilities(notebook_document=notebooks)) as client:
            document = lsp.NotebookDocument(
                notebook, "jupyter-notebook", 1, [lsp.NotebookCell(lsp.NotebookCellKind.Code, uri) for uri in cells]
            )
            texts = (IMPORTS_CELL, KERNEL_CELL)
            items = [lsp.TextDocumentItem(uri, "python", 1, text) for uri, text in zip(cells, texts)]
            client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(document, items))
            assert await client.diagnostics(cells[0], version=1) == []
            (found,) = await client.diagnostics(cells[1], version=1)  # the imports are in the other cell
            assert (found.code, found.range.start.line, found.range.start.character) == ("SEM001", 1, 27)
            actions = await client.actions(cells[1], [found])
            (fix,) = [a for a in actions if "replace" in a.title]
            (change,) = fix.edit.document_changes  # type: ignore[union-attr]
            assert change.text_document.uri == cells[1]  # type: ignore[union-attr]
            fixed = apply(KERNEL_CELL, fix.edit)  # type: ignore[arg-type]
            assert fixed == KERNEL_CELL.replace("sem[...]", "sem")
            assert any("silence" in a.title for a in actions)
            (fix_all,) = await client.actions(cells[1], [], only=["source.fixAll"])
            assert apply(KERNEL_CELL, fix_all.edit) == fixed  # type: ignore[arg-type]
            content = lsp.NotebookDocumentCellContentChanges(
                lsp.VersionedTextDocumentIdentifier(uri=cells[1], version=2),
                [lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
            )
            event = lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[content]))
            identifier = lsp.VersionedNotebookDocumentIdentifier(version=2, uri=notebook)
            client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(identifier, event))
            assert await client.diagnostics(cells[1], version=2) == []

    run(test)


def test_a_broken_cell_keeps_every_cell_s_last_diagnostics(tmp_path: Path) -> None:
    """One cell that does not parse (mid-typing) leaves every cell its last diagnostics, as a
    text document keeps its own; once it parses again, the cells are checked as ever."""
    notebook, cells = (tmp_path / "k.ipynb").as_uri(), [f"{(tmp_path / 'k.ipynb').as_uri()}#cell{i}" for i in (1, 2, 3)]
    notebooks = lsp.NotebookDocumentClientCapabilities(lsp.NotebookDocumentSyncClientCapabilities())

    async def published(client: Client, uri: str, count: int) -> list[lsp.Diagnostic]:
        async with client.arrived:
            await asyncio.wait_for(client.arrived.wait_for(lambda: len(client.published.get(uri, [])) >= count), 30)
        return list(client.published[uri][count - 1].diagnostics)

    def edit(client: Client, version: int, text: str) -> None:
        content = lsp.NotebookDocumentCellContentChanges(
            lsp.VersionedTextDocumentIdentifier(uri=cells[2], version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
        event = lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[content]))
        identifier = lsp.VersionedNotebookDocumentIdentifier(version=version, uri=notebook)
        client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(identifier, event))

    async def test() -> None:
        async with session(tmp_path, capabilities=lsp.ClientCapabilities(notebook_document=notebooks)) as client:
            document = lsp.NotebookDocument(
                notebook, "jupyter-notebook", 1, [lsp.NotebookCell(lsp.NotebookCellKind.Code, uri) for uri in cells]
            )
            texts = (IMPORTS_CELL, KERNEL_CELL, "x = 1\n")
            items = [lsp.TextDocumentItem(uri, "python", 1, text) for uri, text in zip(cells, texts)]
            client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(document, items))
            assert [d.code for d in await published(client, cells[1], 1)] == ["SEM001"]
            edit(client, 2, "x = (\n")  # the third cell, mid-typing
            assert [d.code for d in await published(client, cells[1], 2)] == ["SEM001"]
            edit(client, 3, "x = (1)\n")
            assert [d.code for d in await published(client, cells[1], 3)] == ["SEM001"]

    run(test)


def test_a_buffer_that_starts_with_a_byte_order_mark_is_checked(tmp_path: Path) -> None:
    """A BOM (U+FEFF) in the buffer, as some editors keep it: checked as Python reads such a
    file, the positions on its first line counting it."""
    text = "\ufefffrom jax.experimental import pallas as pl; pl.semaphore_wait(sem[...])\n" + KERNEL.split("\n", 1)[1]

    async def test() -> None:
        uri = _document(tmp_path, text)
        async with session(tmp_path) as client:
            client.open(uri, text)
            found = await client.diagnostics(uri)
            assert [(d.range.start.line, d.range.start.character) for d in found] == [
                (0, text.index("sem[...]")),
                (5, 27),
                (6, 25),
            ]
            (fix,) = [a for a in await client.actions(uri, found[:1]) if "replace" in a.title]
            assert apply(text, fix.edit) == text.replace("wait(sem[...])", "wait(sem)", 1)  # type: ignore[arg-type]
            (fix_all,) = await client.actions(uri, [], only=[lsp.CodeActionKind.SourceFixAll])
            assert apply(text, fix_all.edit) == "\ufeff" + fix_source(text[1:]).source  # type: ignore[arg-type]

    run(test)


def test_a_file_the_project_excludes_is_not_checked_nor_fixed(tmp_path: Path) -> None:
    """As ruff's server: a file under `extend-exclude` gets no diagnostics and no fix on save."""

    async def test() -> None:
        (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nextend-exclude = ["vendor"]\n')
        (tmp_path / "vendor").mkdir()
        vendored, own = _document(tmp_path, KERNEL, "vendor/lib.py"), _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(vendored, KERNEL)
            client.open(own, KERNEL)
            assert len(await client.diagnostics(own)) == 2
            assert await client.diagnostics(vendored) == []
            assert await client.actions(vendored, [], only=[lsp.CodeActionKind.SourceFixAll]) == []
            assert len(await client.actions(own, [], only=[lsp.CodeActionKind.SourceFixAll])) == 1

    run(test)


def test_save_close_and_pushed_settings(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            assert len(await client.diagnostics(uri)) == 2
            client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
            async with client.arrived:
                await asyncio.wait_for(client.arrived.wait_for(lambda: len(client.published[uri]) == 2), 30)
            pushed = lsp.DidChangeConfigurationParams(settings={"semfix": {"ignore": ["SEM001"]}})
            client.workspace_did_change_configuration(pushed)
            async with client.arrived:
                await asyncio.wait_for(client.arrived.wait_for(lambda: not client.published[uri][-1].diagnostics), 30)
            client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
            async with client.arrived:
                await asyncio.wait_for(client.arrived.wait_for(lambda: client.published[uri][-1].version is None), 30)

    run(test)


def test_settings_that_mean_nothing_are_shown_once_and_the_project_s_used(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nignore = ["SEM002"]\n')

    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path, options={"select": ["NOPE"]}) as client:
            client.open(uri, KERNEL)
            assert len(await client.diagnostics(uri)) == 2
            assert client.shown == [
                "semfix: unknown rule selector 'NOPE' (see `semfix rules`); using the project's settings alone"
            ]
            assert any("unknown rule selector 'NOPE'" in log for log in client.logs)

    run(test)


async def _told(client: Client, count: int = 1) -> list[str]:
    """What the user was shown, once `count` messages have come (a moment more for any other)."""
    async with client.arrived:
        await asyncio.wait_for(client.arrived.wait_for(lambda: len(client.shown) >= count), 30)
    await asyncio.sleep(0.3)
    return client.shown


@pytest.mark.parametrize(
    ("pyproject", "said"),
    [
        (
            '[tool.semfix]\nselect = ["SEM9"]\n',
            "unknown rule selector 'SEM9' (see `semfix rules`); using the default settings",
        ),
        ("[tool.semfix\n", "not valid TOML"),
    ],
    ids=["unknown code", "not TOML"],
)
def test_a_broken_tool_semfix_is_shown_once_in_one_message(tmp_path: Path, pyproject: str, said: str) -> None:
    """Shown, not only logged (an editor may write its log where no one looks); once, however
    many files; and one message that says what is used instead."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(pyproject)

    async def test() -> None:
        first, second = _document(tmp_path, KERNEL), _document(tmp_path, KERNEL, "other.py")
        async with session(tmp_path, options={"ignore": ["SEM002"]}) as client:
            client.open(first, KERNEL)
            client.open(second, KERNEL)
            assert len(await client.diagnostics(first)) == len(await client.diagnostics(second)) == 2
            (message,) = await _told(client)
            assert said in message and "pyproject.toml" in message
            assert not any("project's settings alone" in log for log in client.logs)

    run(test)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="this Python parses `type X = ...`: it is checked as any")
def test_syntax_newer_than_the_server_s_python_is_shown_once(tmp_path: Path) -> None:
    newer = KERNEL + "\ntype Pair = tuple[int, int]\n"

    async def test() -> None:
        uri = _document(tmp_path, newer)
        async with session(tmp_path) as client:
            client.open(uri, newer)
            assert await client.diagnostics(uri) == []
            client.change(uri, newer + "x = 1\n")
            assert await client.diagnostics(uri) == []
            (message,) = await _told(client)
            python = f"{sys.version_info.major}.{sys.version_info.minor}"
            assert message.startswith(f"semfix: kernel.py uses syntax Python {python} cannot parse (a `type` alias")
            assert "Python 3.12+) at line 9" in message

    run(test)


def test_a_burst_of_changes_publishes_the_newest_text_and_nothing_older_after_it(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            await client.diagnostics(uri)
            for index in range(20):
                last = client.change(uri, KERNEL + f"x = {index}\n" + ("    def broken(:\n" if index % 2 == 0 else ""))
            assert len(await client.diagnostics(uri, last)) == 2  # the last text parses
            versions = [p.version for p in client.published[uri]]
            assert versions == sorted(versions) and len(versions) < 22

    run(test)


CARRIED = """\
from jax.experimental import pallas as pl


def kernel(o_ref, flag):
    seen = flag[...]
    pl.semaphore_signal(seen, 1)
    pl.semaphore_wait(seen, 1)
    o_ref[0] = 1
"""


def test_a_quick_fix_with_several_edits_is_its_whole_decision(tmp_path: Path) -> None:
    """A carried read's fix rewrites each use and drops the assignment: one Fix, several edits."""

    async def test() -> None:
        uri = _document(tmp_path, CARRIED)
        async with session(tmp_path) as client:
            client.open(uri, CARRIED)
            found = await client.diagnostics(uri)
            signal = [d for d in found if d.range.start.line == 5]
            (fix,) = [a for a in await client.actions(uri, signal) if "replace" in a.title]
            (change,) = fix.edit.document_changes  # type: ignore[union-attr]
            assert len(change.edits) > 1  # type: ignore[union-attr]
            (finding,) = [f for f in fix_source(CARRIED, apply_fixes=False).findings if f.line == 6]
            assert apply(CARRIED, fix.edit) == fix_finding(CARRIED, finding).source != CARRIED  # type: ignore[arg-type]

    run(test)


def test_a_client_that_resolves_code_actions_gets_them_listed_then_each_edit_made(tmp_path: Path) -> None:
    """As ruff's: the actions are listed without edits (cheap at every move of the cursor), and
    `codeAction/resolve` makes the chosen one's edit, the same as listed eagerly."""

    async def test() -> None:
        uri = _document(tmp_path, CARRIED)
        async with session(tmp_path, capabilities=RESOLVING) as client:
            client.open(uri, CARRIED)
            found = await client.diagnostics(uri)
            listed = await client.actions(uri, found[1:2])  # no `only`: every kind
            assert [a.title.split(")")[-1][:9] for a in listed] == [": replace", ": silence", "semfix: f"]
            assert all(a.edit is None for a in listed)
            made = [await asyncio.wait_for(client.code_action_resolve_async(a), 30) for a in listed]
            fix, silence, fix_all = (apply(CARRIED, a.edit) for a in made)  # type: ignore[arg-type]
            assert fix == fix_all == fix_source(CARRIED).source
            assert "# semfix: ignore[SEM003]" in silence

    run(test)


TWO_ON_A_LINE = """\
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, sem):
    pltpu.semaphore_signal(sem[...], 1); pltpu.semaphore_wait(sem[...])
"""


def test_resolving_a_listed_action_makes_that_action_itself(tmp_path: Path) -> None:
    """Two findings on one line, each resolved to its own fix (its `data` names it, not its
    title), keeping the title it was listed with."""

    async def test() -> None:
        uri = _document(tmp_path, TWO_ON_A_LINE)
        async with session(tmp_path, capabilities=RESOLVING) as client:
            client.open(uri, TWO_ON_A_LINE)
            found = await client.diagnostics(uri)
            fixes = [a for a in await client.actions(uri, found) if a.kind == lsp.CodeActionKind.QuickFix]
            made = [await asyncio.wait_for(client.code_action_resolve_async(a), 30) for a in fixes]
            assert [a.title for a in made] == [a.title for a in fixes]
            assert [a.title for a in fixes] == [
                f"semfix (SEM001, column {column}): {what}"
                for column in (28, 63)
                for what in ("replace `sem[...]` with `sem`", "silence with `# semfix: ignore[SEM001]`")
            ]
            first, second = (d.range.start.character for d in found)
            fixed = [apply(TWO_ON_A_LINE, a.edit) for a in made if "replace" in a.title]  # type: ignore[arg-type]
            line = "    pltpu.semaphore_signal(sem[...], 1); pltpu.semaphore_wait(sem[...])"
            assert fixed == [
                TWO_ON_A_LINE.replace(line, line[:first] + line[first:].replace("[...]", "", 1)),
                TWO_ON_A_LINE.replace(line, line[:second] + line[second:].replace("[...]", "", 1)),
            ]

    run(test)


def test_a_changed_pyproject_is_read_again(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.semfix]\n")

    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path) as client:
            client.open(uri, KERNEL)
            assert len(await client.diagnostics(uri)) == 2
            for _ in range(300):  # the registration is the server's request, on its own time
                if client.registered:
                    break
                await asyncio.sleep(0.1)
            (watch,) = client.registered
            assert watch.method == "workspace/didChangeWatchedFiles"
            pyproject.write_text('[tool.semfix]\nignore = ["SEM001"]\n')
            changed = lsp.FileEvent(pyproject.as_uri(), lsp.FileChangeType.Changed)
            client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams([changed]))
            async with client.arrived:
                await asyncio.wait_for(client.arrived.wait_for(lambda: not client.published[uri][-1].diagnostics), 30)

    run(test)


def test_nothing_is_published_before_the_client_s_settings_are_in(tmp_path: Path) -> None:
    async def test() -> None:
        uri = _document(tmp_path, KERNEL)
        async with session(tmp_path, configuration={"ignore": ["SEM001"]}, answer_after=1.0) as client:
            client.open(uri, KERNEL)
            assert await client.diagnostics(uri) == []
            assert all(not p.diagnostics for p in client.published[uri])

    run(test)


@pytest.mark.parametrize("breaker", ["\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
def test_an_incremental_edit_below_a_character_python_s_splitlines_breaks_at(tmp_path: Path, breaker: str) -> None:
    """LSP ends lines at `\\n`, `\\r\\n` and `\\r` only: a form feed or a U+2028 in a comment
    above must not move an edit a line up (fix all would then write a SyntaxError)."""
    text = KERNEL.replace("pallas as pl\n", f"pallas as pl  # a{breaker}b\n")

    async def test() -> None:
        uri = _document(tmp_path, text)
        async with session(tmp_path) as client:
            client.open(uri, text)
            await client.diagnostics(uri)
            inserted = "    x = 1\n"
            client.insert(uri, 6, inserted)
            edited = text.replace("    pltpu.semaphore_wait", inserted + "    pltpu.semaphore_wait")
            found = await client.diagnostics(uri)
            assert [d.range.start.line for d in found] == [5, 7]
            (action,) = await client.actions(uri, [], only=[lsp.CodeActionKind.SourceFixAll])
            assert apply(edited, action.edit) == fix_source(edited).source  # type: ignore[arg-type]

    run(test)


UNSEEN_SCRATCH = """\
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref, sems):
    pl.semaphore_wait(sems[1][...])


def run(x, shapes):
    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=shapes)(x)
"""


@pytest.mark.parametrize("capabilities", [None, RESOLVING], ids=["eager", "resolving"])
def test_an_unsafe_fix_inside_a_safe_one_makes_its_edit(tmp_path: Path, capabilities: lsp.ClientCapabilities) -> None:
    """`sems[1][...]`: SEM001 drops the `[...]` (safe), SEM002 then `.at` (unsafe). Under unsafe
    fixes they are one fix, so SEM002's quick fix is that one: never an action that does nothing."""

    async def test() -> None:
        uri = _document(tmp_path, UNSEEN_SCRATCH)
        async with session(tmp_path, capabilities=capabilities) as client:
            client.open(uri, UNSEEN_SCRATCH)
            found = await client.pull(uri) if capabilities else await client.diagnostics(uri)
            assert [d.code for d in found] == ["SEM001", "SEM002"]
            fixes = [a for a in await client.actions(uri, found[1:]) if "replace" in a.title]
            made = [await asyncio.wait_for(client.code_action_resolve_async(a), 30) for a in fixes]
            assert [a.title for a in made] == ["semfix (SEM002): replace `sems[1]` with `sems.at[1]` (unsafe)"]
            fixed = apply(UNSEEN_SCRATCH, made[0].edit)  # type: ignore[arg-type]
            assert fixed == UNSEEN_SCRATCH.replace("sems[1][...]", "sems.at[1]")

    run(test)


SYNC = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas.tpu import DeviceIdType, semaphore_signal


def signal(sem):
    semaphore_signal(sem, 1, device_id=0, device_id_type=DeviceIdType.MESH)
"""


def test_fix_all_keeps_an_import_a_file_of_the_project_or_an_open_document_imports(tmp_path: Path) -> None:
    """The server's run is the project's files (as `semfix fix .` reads them), its open
    documents over them: a sibling's `from .sync import DeviceIdType` keeps that import."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mypkg"\ndependencies = ["jax>=0.7"]\n\n[tool.semfix]\nextend-select = ["SEM1"]\n'
    )
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "other.py").write_text("from .sync import DeviceIdType\n")
    user = _document(package, "KIND = 1\n", "user.py")

    async def fixed(client: Client, uri: str) -> str:
        (action,) = await client.actions(uri, [], only=[lsp.CodeActionKind.SourceFixAll])
        return apply(SYNC, action.edit)  # type: ignore[arg-type]

    async def test() -> None:
        uri = _document(package, SYNC, "sync.py")
        async with session(tmp_path) as client:
            client.open(uri, SYNC)
            await client.diagnostics(uri)
            assert "import DeviceIdType\n" in await fixed(client, uri)  # other.py imports it
            (package / "other.py").write_text("")
            client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))  # read again
            assert "DeviceIdType" not in await fixed(client, uri)
            client.open(user, "from mypkg.sync import DeviceIdType\n")  # unsaved
            assert "import DeviceIdType\n" in await fixed(client, uri)

    run(test)
