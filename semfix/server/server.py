"""`semfix server`: semfix as a language server over stdio (pygls), as ruff's server works.

Diagnostics are published on open, save and change, or, to a client that declares pull
support, answered on `textDocument/diagnostic` and not published (as ruff's server chooses;
notebooks are published either way, since one cell's edit can change another's findings).
Hover and pulls answer from the text as it is at the request. A change is debounced by coalescing:
the analysis runs on one worker thread, and a change that arrives before an analysis is
published makes it stale, so only the newest text is ever published (`debounceMs` adds a
quiet period, 0 by default: an analysis of a 2,000-line kernel costs less than a typist's
pause). This module holds the LSP handlers; the session they call (documents, settings,
checking and publishing) is `semfix/server/session.py`'s; code actions are in `semfix/server/lsp.py`.
Settings: the document's `[tool.semfix]`, overridden by the client's (`initializationOptions`,
then `workspace/configuration` section `semfix`), as command-line options override the file.
No error ends the session: each is logged to the client (`window/logMessage`), and the
document gets no diagnostics; what the user must know (settings that mean nothing, syntax
newer than the server's Python) is shown once as well (`window/showMessage`).
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from pathlib import Path, PurePosixPath

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from semfix.floor import DECLARING
from semfix.rules import RULES, describe
from semfix.server.lsp import KINDS, client_settings, place
from semfix.server.protocol import Protocol
from semfix.server.session import LspWorkspace, SemfixServer

server = SemfixServer()


def _debounce() -> float:
    delay = server.state.options.get("debounceMs", 0)
    return max(0.0, float(delay)) / 1000 if isinstance(delay, (int, float)) else 0.0


@server.feature(lsp.INITIALIZE)
def initialize(ls: SemfixServer, params: lsp.InitializeParams) -> None:
    ls.state.options = client_settings(params.initialization_options)
    ls.loop = asyncio.get_running_loop()
    ls.workspace.__class__ = LspWorkspace  # made just before this handler: no document in it yet
    folders = [folder.uri for folder in params.workspace_folders or ()] + [params.root_uri or ""]
    ls.state.projects.roots = [Path(path) for uri in folders if uri.startswith("file:") and (path := to_fs_path(uri))]


@server.feature(lsp.INITIALIZED)
async def initialized(ls: SemfixServer, params: lsp.InitializedParams) -> None:
    try:
        await ls.watch_pyprojects()
        await ls.pull_configuration()
    finally:
        ls.state.configured.set()


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files_changed(ls: SemfixServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A pyproject.toml (or a file declaring the JAX floor) was written, made or deleted."""
    ls.refresh()


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def configuration_changed(ls: SemfixServer, params: lsp.DidChangeConfigurationParams) -> None:
    pushed = client_settings(params.settings)
    if pushed:
        ls.state.options = {**ls.state.options, **pushed}
        ls.refresh()
    else:
        await ls.pull_configuration()


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: SemfixServer, params: lsp.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: SemfixServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, _debounce())


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
def did_save(ls: SemfixServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if any(PurePosixPath(params.text_document.uri).match(name) for name in DECLARING):  # a floor or settings
        ls.refresh()
    else:
        ls.state.projects.saved()  # the project's changed files are read again when next needed
        ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: SemfixServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.state.close(uri)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))


_ACTIONS = lsp.CodeActionOptions(code_action_kinds=list(KINDS), resolve_provider=True)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, _ACTIONS)
async def code_action(ls: SemfixServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    """The actions, each with its edit; without, for a client that resolves them (as ruff does)."""
    try:
        lazy = ls.resolves_edits()
        actions = await ls.actions(params, lazy)
        for action in actions if lazy else ():
            action.data = {**(action.data if isinstance(action.data, dict) else {}), "uri": params.text_document.uri}
        return actions or None
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: code actions failed:\n{traceback.format_exc()}")
        return None


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: SemfixServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """A listed action's edit: the one action its `data` names (its kind, and the finding's
    rule and place), made alone; it keeps its title. No edit if the text changed so that it no
    longer is offered (the client then does nothing)."""
    try:
        action.edit = await ls.resolve(action)
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: resolving a code action failed:\n{traceback.format_exc()}")
    return action


_PULL = lsp.DiagnosticOptions(identifier="semfix", inter_file_dependencies=False, workspace_diagnostics=False)


@server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, _PULL)
async def pull_diagnostics(ls: SemfixServer, params: lsp.DocumentDiagnosticParams) -> lsp.DocumentDiagnosticReport:
    """The diagnostics of the text as it is now, whole each time (as ruff's: no result ids)."""
    try:
        found = await ls.pull(params.text_document.uri)
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: diagnostics for {params.text_document.uri} failed:\n{traceback.format_exc()}")
        found = []
    return lsp.RelatedFullDocumentDiagnosticReport(items=found)


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
async def hover(ls: SemfixServer, params: lsp.HoverParams) -> lsp.Hover | None:
    """Over a finding: its rule's docs, as `semfix rules CODE` prints them. In a notebook
    cell, the position is the cell's, as the cell's diagnostics are."""
    try:
        result, lines = await ls.current(params.text_document.uri)
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: hover failed:\n{traceback.format_exc()}")
        return None
    if result is None or lines is None:
        return None
    at = (params.position.line, params.position.character)
    for finding in result.findings:
        start, end = lines.position(*place(finding)[:2]), lines.position(*place(finding)[2:])
        if (start.line, start.character) <= at <= (end.line, end.character) and finding.rule in RULES:
            heading, _, body = describe(RULES[finding.rule]).partition("\n\n")
            text = "\n\n".join([*(line.strip() for line in heading.splitlines()), body])  # a paragraph each
            return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text), lsp.Range(start, end))
    return None


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_opened(ls: SemfixServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_changed(ls: SemfixServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri, _debounce())


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_saved(ls: SemfixServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
    ls.schedule(params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_closed(ls: SemfixServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
    ls.state.close(params.notebook_document.uri)
    for cell in params.cell_text_documents:
        ls.state.close(cell.uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(cell.uri, []))


def serve() -> None:
    """Serve over stdio until `exit` (or the end of stdin); exit 0 if `shutdown` came first, else 1
    (the spec: pygls's own status is lost, as it ends its loop on `exit` by raising SystemExit)."""
    server.start_io()
    sys.exit(0 if isinstance(server.protocol, Protocol) and server.protocol.shut_down else 1)
