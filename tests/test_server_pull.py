"""`semfix server` end to end, for a client that pulls diagnostics (`textDocument/diagnostic`),
and hover inside notebook cells: pygls's LanguageClient drives `python -m semfix server`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types as lsp

from tests.lsp_client import Client, session
from tests.test_server import IMPORTS_CELL, KERNEL, KERNEL_CELL, run

PULLS = lsp.ClientCapabilities(
    text_document=lsp.TextDocumentClientCapabilities(diagnostic=lsp.DiagnosticClientCapabilities()),
    workspace=lsp.WorkspaceClientCapabilities(diagnostics=lsp.DiagnosticWorkspaceClientCapabilities(True)),
    notebook_document=lsp.NotebookDocumentClientCapabilities(lsp.NotebookDocumentSyncClientCapabilities()),
)


def _where(found: list[lsp.Diagnostic]) -> list[tuple[object, int, int]]:
    return [(d.code, d.range.start.line, d.range.start.character) for d in found]


def _open_notebook(client: Client, folder: Path, texts: tuple[str, ...]) -> tuple[str, list[str]]:
    """A notebook of code cells `texts`, opened; its uri and its cells' uris."""
    notebook = (folder / "k.ipynb").as_uri()
    cells = [f"{notebook}#cell{i}" for i in range(1, len(texts) + 1)]
    document = lsp.NotebookDocument(
        notebook, "jupyter-notebook", 1, [lsp.NotebookCell(lsp.NotebookCellKind.Code, uri) for uri in cells]
    )
    items = [lsp.TextDocumentItem(uri, "python", 1, text) for uri, text in zip(cells, texts)]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(document, items))
    return notebook, cells


def _change_cell(client: Client, notebook: str, cell: str, version: int, text: str) -> None:
    content = lsp.NotebookDocumentCellContentChanges(
        lsp.VersionedTextDocumentIdentifier(uri=cell, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)],
    )
    event = lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[content]))
    identifier = lsp.VersionedNotebookDocumentIdentifier(version=version, uri=notebook)
    client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(identifier, event))


def test_a_client_that_pulls_gets_diagnostics_when_it_asks_and_none_pushed(tmp_path: Path) -> None:
    """As ruff's server: `diagnosticProvider` advertised; a client declaring pull support pulls
    (the text as it is at the request), is not pushed the same diagnostics too, and is asked
    to pull again when the settings change."""

    async def test() -> None:
        path = tmp_path / "kernel.py"
        path.write_text(KERNEL)
        uri = path.as_uri()
        async with session(tmp_path, capabilities=PULLS) as client:
            provider = client.server_capabilities.diagnostic_provider  # type: ignore[union-attr]
            assert isinstance(provider, lsp.DiagnosticOptions) and provider.identifier == "semfix"
            assert not provider.inter_file_dependencies and not provider.workspace_diagnostics
            client.open(uri, KERNEL)
            assert _where(await client.pull(uri)) == [("SEM001", 5, 27), ("SEM001", 6, 25)]
            client.change(uri, KERNEL.replace("signal(sem[...]", "signal(sem"))
            assert _where(await client.pull(uri)) == [("SEM001", 6, 25)]  # the new text, at once
            refreshes = client.refreshes
            pushed = lsp.DidChangeConfigurationParams(settings={"semfix": {"ignore": ["SEM001"]}})
            client.workspace_did_change_configuration(pushed)
            async with client.arrived:
                await asyncio.wait_for(client.arrived.wait_for(lambda: client.refreshes > refreshes), 30)
            assert await client.pull(uri) == []
            await asyncio.sleep(0.5)  # time enough for a push, were one coming
            assert uri not in client.published

    run(test)


def test_a_client_that_pulls_still_gets_a_notebook_s_cells_pushed_and_may_pull_them(tmp_path: Path) -> None:
    """A change in one cell can change another's findings: only a push brings them (ruff's
    notebooks are pushed too). A cell pulled gets the same diagnostics, in cell coordinates."""

    async def test() -> None:
        async with session(tmp_path, capabilities=PULLS) as client:
            _, cells = _open_notebook(client, tmp_path, (IMPORTS_CELL, KERNEL_CELL))
            assert await client.diagnostics(cells[0], version=1) == []
            assert _where(await client.diagnostics(cells[1], version=1)) == [("SEM001", 1, 27)]
            assert _where(await client.pull(cells[1])) == [("SEM001", 1, 27)]
            assert await client.pull(cells[0]) == []

    run(test)


def test_hover_in_a_notebook_cell_goes_by_the_cell_s_positions_and_its_current_text(tmp_path: Path) -> None:
    """The client's settings come late, so nothing is published before the hovers: each hover
    answers from the cells as they are, not from an earlier publication."""

    async def test() -> None:
        async with session(tmp_path, configuration={}, answer_after=1.0) as client:
            notebook, cells = _open_notebook(client, tmp_path, (IMPORTS_CELL, KERNEL_CELL))
            hover = await client.hover(cells[1], 1, 29)  # `sem[...]` in cell 2, line 2
            assert hover is not None and hover.range is not None
            assert "SEM001" in hover.contents.value  # type: ignore[union-attr]
            assert (hover.range.start.line, hover.range.start.character, hover.range.end.character) == (1, 27, 35)
            assert await client.hover(cells[0], 1, 29) is None  # the imports cell: nothing there
            assert await client.hover(cells[1], 0, 4) is None  # the `def` line
            _change_cell(client, notebook, cells[1], 2, "\n" + KERNEL_CELL)  # every line moves down one
            moved = await client.hover(cells[1], 2, 29)
            assert moved is not None and moved.range is not None and moved.range.start.line == 2
            assert await client.hover(cells[1], 1, 29) is None

    run(test)


def test_hover_answers_from_the_text_as_it_is_not_the_last_published(tmp_path: Path) -> None:
    """A long `debounceMs` holds the change's diagnostics back: the hover must not go by the
    positions published for the text before it."""

    async def test() -> None:
        path = tmp_path / "kernel.py"
        path.write_text(KERNEL)
        uri = path.as_uri()
        async with session(tmp_path, options={"debounceMs": 20_000}) as client:
            client.open(uri, KERNEL)
            await client.diagnostics(uri)
            client.insert(uri, 0, "\n\n")  # two lines up top
            hover = await client.hover(uri, 7, 29)
            assert hover is not None and hover.range is not None and hover.range.start.line == 7
            assert await client.hover(uri, 5, 29) is None
            assert [p.version for p in client.published[uri]] == [1]  # the change's are still held back

    run(test)
