"""`semfix server`: semfix as a language server over stdio (pygls), as ruff's server works.

Diagnostics are published on open, save and change. A change is debounced by coalescing:
the analysis runs on one worker thread, and a change that arrives before an analysis is
published makes it stale, so only the newest text is ever published (`debounceMs` adds a
quiet period, 0 by default: an analysis of a 2,000-line kernel costs less than a typist's
pause). Code actions are in `semfix/cli/lsp.py`. Settings: the document's `[tool.semfix]`,
overridden by the client's (`initializationOptions`, then `workspace/configuration` section
`semfix`), as command-line options override the file. No error ends the session: each is
logged to the client (`window/logMessage`), and the document gets no diagnostics.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from semfix import __version__
from semfix.api import FixResult, SafetyError, SourceError, fix_source
from semfix.cli.cells import Cell, Notebook
from semfix.cli.lsp import (
    KINDS,
    Document,
    Lines,
    client_settings,
    code_actions,
    diagnostics,
    place,
)
from semfix.rules import RULES, describe
from semfix.settings import Settings, SettingsError, find_pyproject, load_settings

T = TypeVar("T")
_CONFIGURATION_WAIT = 5.0  # seconds


@dataclass
class Analysed:
    """The last analysis of a document: its version, text and result (None: nothing to show)."""

    version: int | None
    text: str
    result: FixResult[str] | None


@dataclass
class State:
    options: dict[str, Any] = field(default_factory=dict)
    settings: dict[Path | None, Settings] = field(default_factory=dict)  # by the document's folder
    analysed: dict[str, Analysed] = field(default_factory=dict)  # by text document, or notebook cell
    notebooks: dict[str, tuple[bytes, FixResult[bytes] | None]] = field(default_factory=dict)  # data, result
    pending: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    #: Set once the client's settings are in (`initialized` asked for them): nothing is checked
    #: before, so that no diagnostics are published under settings about to change.
    configured: asyncio.Event = field(default_factory=asyncio.Event)


class SemfixServer(LanguageServer):
    def __init__(self) -> None:
        cells = lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")])
        super().__init__("semfix", __version__, notebook_document_sync=lsp.NotebookDocumentSyncOptions([cells]))
        self.state = State()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="semfix")  # the engine, one at a time

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Error) -> None:
        self.window_log_message(lsp.LogMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls's own errors go to the log too, never end the session."""
        self.log(f"semfix server: {error!r}")

    async def on_worker(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, work)

    def settings_for(self, uri: str) -> Settings:
        """The document's `[tool.semfix]`, with the client's settings over it; the file's alone,
        or the defaults, where the client's or the file's mean nothing (the error is logged).
        Kept by folder until the settings change or a pyproject.toml is saved."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        folder = Path(path).parent if path else None
        if folder not in self.state.settings:
            try:
                pyproject = find_pyproject([folder]) if folder else None
            except SettingsError as error:
                self.log(f"semfix: {error}")
                pyproject = None
            self.state.settings[folder] = self._settings(pyproject, self.state.options)
        return self.state.settings[folder]

    def _settings(self, pyproject: Path | None, options: dict[str, Any]) -> Settings:
        def strings(key: str) -> list[str]:
            value = options.get(key) or []
            return [value] if isinstance(value, str) else [str(v) for v in value]

        unsafe = options.get("unsafeFixes")
        try:
            return load_settings(
                pyproject,
                select=strings("select") or None,
                extend_select=strings("extendSelect"),
                ignore=strings("ignore"),
                unsafe_fixes=unsafe if isinstance(unsafe, bool) else None,
            )
        except SettingsError as error:
            self.log(f"semfix: {error}; using the project's settings alone")
        try:
            return load_settings(pyproject)
        except SettingsError as error:
            self.log(f"semfix: {error}; using the default settings")
            return Settings()

    def document(self, uri: str) -> Document:
        text_document = self.workspace.get_text_document(uri)
        text = text_document.source
        lines = Lines(text, self.workspace.position_codec)
        settings = self.settings_for(uri)
        if uri.endswith("/__init__.py"):  # as `semfix fix` runs it: its module-level names are its API
            settings = replace(settings, package_init=True)
        return Document(uri, text_document.version, text, lines, settings)

    def notebook(self, uri: str) -> Notebook | None:
        """The notebook `uri` names, or the one whose cell it is; None for a plain text document."""
        found = self.workspace.get_notebook_document(notebook_uri=uri) or self.workspace.get_notebook_document(
            cell_uri=uri
        )
        if found is None:
            return None
        cells = []
        for cell in found.cells:
            document = self.workspace.get_text_document(cell.document)
            if cell.kind == lsp.NotebookCellKind.Code and document.language_id in (None, "python"):
                lines = Lines(document.source, self.workspace.position_codec)
                cells.append(Cell(cell.document, document.version, document.source, lines))
        return Notebook(found.uri, tuple(cells), self.settings_for(found.uri))

    def analyse(self, document: Document | Notebook) -> Any:
        """Check the text (or the notebook's cells); None where it does not parse (no stale
        diagnostics) or on any error."""
        try:
            if isinstance(document, Notebook):
                return document.analyse()
            return fix_source(document.text, settings=document.settings, apply_fixes=False)
        except (SourceError, SafetyError):
            return None  # an unsaved buffer mid-edit: semfix is not a syntax checker
        except Exception:  # noqa: BLE001 - a bug in semfix must not end the session
            self.log(f"semfix: analysing {document.uri} failed:\n{traceback.format_exc()}")
            return None

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Analyse and publish the document's newest text, replacing any analysis not yet published."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        uri = uri if notebook is None else notebook.uri
        old = self.state.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self.state.pending[uri] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def settled(self) -> None:
        """Wait for the client's settings, a few seconds at most (a client may never answer)."""
        with suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.state.configured.wait(), _CONFIGURATION_WAIT)

    async def _publish(self, uri: str, delay: float) -> None:
        try:
            await self.settled()
            if delay:
                await asyncio.sleep(delay)
            notebook = self.notebook(uri)
            if notebook is not None:
                await self._publish_notebook(notebook)
                return
            document = self.document(uri)
            result = await self.on_worker(lambda: self.analyse(document))
            if self.workspace.get_text_document(uri).version != document.version:
                return  # a newer change has its own analysis coming
            self.state.analysed[uri] = Analysed(document.version, document.text, result)
            self.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri, diagnostics(result, document.lines), document.version)
            )
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            self.log(f"semfix: publishing diagnostics for {uri} failed:\n{traceback.format_exc()}")
        finally:
            if self.state.pending.get(uri) is asyncio.current_task():
                del self.state.pending[uri]

    async def _publish_notebook(self, notebook: Notebook) -> None:
        result = await self.on_worker(lambda: self.analyse(notebook))
        if self.notebook(notebook.uri) != notebook:
            return  # a newer change has its own analysis coming
        self.state.notebooks[notebook.uri] = (notebook.data, result)
        for index, cell in enumerate(notebook.cells):
            self.state.analysed[cell.uri] = Analysed(cell.version, cell.text, notebook.of_cell(result, index))
            found = notebook.diagnostics(result, index)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(cell.uri, found, cell.version))

    async def actions(self, params: lsp.CodeActionParams, lazy: bool) -> list[lsp.CodeAction]:
        """The code actions for the document (or notebook cell) the request names."""
        await self.settled()
        uri = params.text_document.uri
        notebook = self.notebook(uri)
        if notebook is None:
            document = self.document(uri)
            result = await self.result_for(document)
            findings = () if result is None else result.findings
            return await self.on_worker(lambda: code_actions(document, findings, params.context, lazy=lazy))
        data, known = self.state.notebooks.get(notebook.uri, (None, None))
        joined: FixResult[bytes] | None = (
            known if data == notebook.data else await self.on_worker(lambda: self.analyse(notebook))
        )
        index = notebook.cell_of(uri)
        cell = None if joined is None or index is None else notebook.of_cell(joined, index)
        if joined is None or cell is None:
            return []
        work = partial(code_actions, notebook, cell.findings, params.context, lazy=lazy, every=joined.findings)
        return await self.on_worker(work)

    def resolves_edits(self) -> bool:
        """Does the client resolve a code action's edit (`codeAction/resolve`)?"""
        document = self.client_capabilities.text_document
        action = document.code_action if document else None
        support = action.resolve_support if action else None
        return support is not None and "edit" in support.properties

    async def result_for(self, document: Document) -> FixResult[str] | None:
        """The analysis of exactly this text: the published one if it is current."""
        known = self.state.analysed.get(document.uri)
        if known is not None and known.text == document.text:
            return known.result
        return await self.on_worker(lambda: self.analyse(document))

    def refresh(self) -> None:
        """Settings changed: forget them and publish every open document again."""
        self.state.settings.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)

    async def watch_pyprojects(self) -> None:
        """Ask the client to say when a pyproject.toml changes, where it can (as ruff does)."""
        workspace = self.client_capabilities.workspace
        watching = workspace.did_change_watched_files if workspace else None
        if not (watching and watching.dynamic_registration):
            return
        watchers = lsp.DidChangeWatchedFilesRegistrationOptions([lsp.FileSystemWatcher("**/pyproject.toml")])
        registration = lsp.Registration("semfix-pyproject", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, watchers)
        try:
            await self.client_register_capability_async(lsp.RegistrationParams([registration]))
        except Exception as error:  # noqa: BLE001 - then a saved pyproject.toml is seen only when open
            self.log(f"semfix: cannot watch pyproject.toml files: {error}", lsp.MessageType.Warning)

    async def pull_configuration(self) -> None:
        """Ask the client for its `semfix` section, where it can answer."""
        capabilities = self.client_capabilities.workspace
        if not (capabilities and capabilities.configuration):
            return
        try:
            answer = await self.workspace_configuration_async(
                lsp.ConfigurationParams([lsp.ConfigurationItem(section="semfix")])
            )
        except Exception as error:  # noqa: BLE001 - a client that cannot answer keeps its initializationOptions
            self.log(f"semfix: workspace/configuration failed: {error}", lsp.MessageType.Warning)
            return
        if answer and isinstance(answer[0], dict):
            self.state.options = {**self.state.options, **client_settings(answer[0])}
        self.refresh()


server = SemfixServer()


def _debounce() -> float:
    delay = server.state.options.get("debounceMs", 0)
    return max(0.0, float(delay)) / 1000 if isinstance(delay, (int, float)) else 0.0


@server.feature(lsp.INITIALIZE)
def initialize(ls: SemfixServer, params: lsp.InitializeParams) -> None:
    ls.state.options = client_settings(params.initialization_options)


@server.feature(lsp.INITIALIZED)
async def initialized(ls: SemfixServer, params: lsp.InitializedParams) -> None:
    try:
        await ls.watch_pyprojects()
        await ls.pull_configuration()
    finally:
        ls.state.configured.set()


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def watched_files_changed(ls: SemfixServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A pyproject.toml was written, made or deleted: its [tool.semfix] may have changed."""
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
    if params.text_document.uri.endswith("pyproject.toml"):
        ls.refresh()
    else:
        ls.schedule(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: SemfixServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    pending = ls.state.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.state.analysed.pop(uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, []))


_ACTIONS = lsp.CodeActionOptions(code_action_kinds=list(KINDS), resolve_provider=True)


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, _ACTIONS)
async def code_action(ls: SemfixServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
    """The actions, each with its edit; without, for a client that resolves them (as ruff does)."""
    try:
        lazy = ls.resolves_edits()
        actions = await ls.actions(params, lazy)
        for action in actions if lazy else ():
            action.data = {"uri": params.text_document.uri}
        return actions or None
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: code actions failed:\n{traceback.format_exc()}")
        return None


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: SemfixServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """A listed action's edit: the actions are made again, with their edits, for the same
    diagnostics and kind, and the one of the same title is it. No edit if the text changed so
    that it no longer is offered (the client then does nothing)."""
    try:
        data = action.data if isinstance(action.data, dict) else {}
        where = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))  # the actions go by the diagnostics
        context = lsp.CodeActionContext(diagnostics=list(action.diagnostics or []), only=[action.kind or ""])
        params = lsp.CodeActionParams(lsp.TextDocumentIdentifier(data["uri"]), where, context)
        made = [a for a in await ls.actions(params, lazy=False) if a.title == action.title]
        action.edit = made[0].edit if made else None
    except Exception:  # noqa: BLE001
        ls.log(f"semfix: resolving a code action failed:\n{traceback.format_exc()}")
    return action


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: SemfixServer, params: lsp.HoverParams) -> lsp.Hover | None:
    """Over a finding: its rule's docs, as `semfix rules CODE` prints them."""
    known = ls.state.analysed.get(params.text_document.uri)
    if known is None or known.result is None:
        return None
    lines = Lines(known.text, ls.workspace.position_codec)
    at = (params.position.line, params.position.character)
    for finding in known.result.findings:
        start, end = lines.position(*place(finding)[:2]), lines.position(*place(finding)[2:])
        if (start.line, start.character) <= at <= (end.line, end.character) and finding.rule in RULES:
            text = describe(RULES[finding.rule])
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
    uri = params.notebook_document.uri
    pending = ls.state.pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    ls.state.notebooks.pop(uri, None)
    for cell in params.cell_text_documents:
        ls.state.analysed.pop(cell.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(cell.uri, []))


def serve() -> None:
    server.start_io()
