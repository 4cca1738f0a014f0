"""The language server's session: what it knows of each document (settings, the last
analysis, the pending one) and how it checks and publishes; the LSP handlers that call it are
server.py's."""

from __future__ import annotations

import asyncio
import gc
import os
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from semfix import __version__
from semfix.api import Checked, FixResult, SafetyError, SourceError, check_incremental, drops_imports
from semfix.findings import Finding
from semfix.floor import DECLARING
from semfix.selection import build_settings, load_settings
from semfix.server.cells import Cell, Notebook
from semfix.server.lsp import (
    Document,
    Lines,
    Target,
    client_settings,
    code_actions,
    diagnostic,
    diagnostics,
    moved,
    resolve,
)
from semfix.server.project import Projects
from semfix.server.protocol import Protocol
from semfix.settings import Settings, SettingsError, find_pyproject, for_file

T = TypeVar("T")
_CONFIGURATION_WAIT = 5.0  # seconds
_NEWER_SYNTAX = "uses syntax Python"  # how SourceError begins for syntax newer than the running Python
_STALE = object()  # an analysis skipped: its document changed again before it began


@dataclass
class Analysed:
    """The last analysis of a document: its version, text and result (None: nothing to show)."""

    version: int | None
    text: str
    result: FixResult[str] | None
    settings: Settings | None = None  # those it was made under: other settings, another analysis


@dataclass
class State:
    options: dict[str, Any] = field(default_factory=dict)
    settings: dict[Path | None, Settings] = field(default_factory=dict)  # by the document's folder
    analysed: dict[str, Analysed] = field(default_factory=dict)  # by text document, or notebook cell
    #: By text document: its last analysis of a text that parsed, whose diagnostics are kept
    #: (moved) while the text does not parse.
    parsed: dict[str, Analysed] = field(default_factory=dict)
    #: By notebook: its data and settings, and the analysis of them.
    notebooks: dict[str, tuple[bytes, Settings, FixResult[bytes] | None]] = field(default_factory=dict)
    pending: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    #: By text document: the last check's state, for the next to analyse only what an edit changes.
    checked: dict[str, Checked] = field(default_factory=dict)
    #: Off: every change checked whole, to time against (benchmarks/server_latency.py --whole).
    incremental: bool = field(default_factory=lambda: "SEMFIX_WHOLE_CHECKS" not in os.environ)
    told: set[str] = field(default_factory=set)  # what the user was shown (`SemfixServer.tell`), by key
    #: Set once the client's settings are in (`initialized` asked for them): nothing is checked
    #: before, so that no diagnostics are published under settings about to change.
    configured: asyncio.Event = field(default_factory=asyncio.Event)
    projects: Projects = field(default_factory=Projects)  # the run the rules deciding across files see

    def close(self, uri: str) -> None:
        """A document (or notebook) closed: its pending check is cancelled and its results dropped."""
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.analysed.pop(uri, None)
        self.parsed.pop(uri, None)
        self.checked.pop(uri, None)
        self.notebooks.pop(uri, None)


class _LspLines(TextDocument):
    """A document whose lines end where LSP's do: at `\\n`, `\\r\\n` and `\\r` alone. pygls's
    split (`str.splitlines`) also ends them at a form feed, `\\x1c`, U+2028 and the like, and
    every incremental edit below one would land a line too high."""

    @property
    def lines(self) -> Sequence[str]:
        return [line for line in Lines(self.source, self.position_codec).lines if line]


class LspWorkspace(Workspace):
    """pygls's workspace, its text documents `_LspLines` (the server's, from `initialize` on)."""

    def _create_text_document(self, doc_uri: str, *args: Any, **kwargs: Any) -> TextDocument:
        made = super()._create_text_document(doc_uri, *args, **kwargs)
        made.__class__ = _LspLines
        return made


def _uncollected(work: Callable[[], T]) -> T:
    """`work` with Python's cycle collector paused. A check of a 2,000-line kernel allocates some
    hundred thousand objects, and the collector, run every 700 allocations, walks the survivors
    again and again: a tenth of the check's time. A check leaves no cycles (every object it drops
    is freed as its last reference goes); what else might is collected once the collector resumes."""
    paused = gc.isenabled()
    gc.disable()
    try:
        return work()
    finally:
        if paused:
            gc.enable()


class SemfixServer(LanguageServer):
    def __init__(self) -> None:
        cells = lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")])
        sync = lsp.NotebookDocumentSyncOptions([cells])
        super().__init__("semfix", __version__, notebook_document_sync=sync, protocol_cls=Protocol)
        self.state = State()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="semfix")  # the engine, one at a time
        self.loop: asyncio.AbstractEventLoop | None = None  # the session's, once initialized

    def send(self, notify: Callable[[], None]) -> None:
        """Send a notification from the event loop's thread, even when the engine's worker asks."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self.loop is not None:
                self.loop.call_soon_threadsafe(notify)
                return
        notify()

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Error) -> None:
        self.send(partial(self.window_log_message, lsp.LogMessageParams(type=kind, message=message)))

    def tell(self, message: str, key: str | None = None, kind: lsp.MessageType = lsp.MessageType.Warning) -> None:
        """Show the user what they would otherwise never see (an editor may write the log to a
        file no one reads), once per session for each `key` (by default the message), as ruff
        does; logged as well."""
        key = message if key is None else key
        if key in self.state.told:
            return
        self.state.told.add(key)
        self.log(message, kind)
        self.send(partial(self.window_show_message, lsp.ShowMessageParams(type=kind, message=message)))

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls's own errors go to the log too, never end the session. A body that does not
        read as JSON (pygls's reading loop reports it so) is answered -32700, as JSON-RPC asks."""
        if source is JsonRpcException and isinstance(error, ValueError) and isinstance(self.protocol, Protocol):
            self.protocol.unreadable(error)
        self.log(f"semfix server: {error!r}")

    async def on_worker(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.worker, partial(_uncollected, work))

    def settings_for(self, uri: str) -> Settings:
        """The document's `[tool.semfix]`, with the client's settings over it; the file's alone,
        or the defaults, where the client's or the file's mean nothing (the user is told).
        Kept by folder until the settings change or a pyproject.toml is saved."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        folder = Path(path).parent if path else None
        if folder not in self.state.settings:
            try:
                pyproject = find_pyproject([folder]) if folder else None
            except SettingsError as error:
                self.tell(f"semfix: {error}; [tool.semfix] is not read until it is mended")
                pyproject, folder_read = None, False
            else:
                folder_read = True
            settings = self._settings(pyproject, self.state.options)
            try:  # the JAX floor of the nearest project that declares one, as `semfix fix` reads it per file
                settings = for_file(settings, folder / "_") if folder and folder_read else settings
            except SettingsError as error:
                self.tell(f"semfix: {error}; no JAX floor is read until it is mended")
            if settings.target_unread:  # once per folder: the settings are kept by folder
                self.tell(f"semfix: {settings.target_unread}")
            self.state.settings[folder] = settings
        return self.state.settings[folder]

    def _settings(self, pyproject: Path | None, options: dict[str, Any]) -> Settings:
        def strings(key: str) -> list[str]:
            value = options.get(key) or []
            return [value] if isinstance(value, str) else [str(v) for v in value]

        unsafe, target = options.get("unsafeFixes"), options.get("targetJax")
        given: dict[str, Any] = {
            "select": strings("select") or None,
            "extend_select": strings("extendSelect"),
            "ignore": strings("ignore"),
            "unsafe_fixes": unsafe if isinstance(unsafe, bool) else None,
            "target_jax": target if isinstance(target, str) else None,
        }
        errors: list[str] = []
        settings, using = build_settings(), "the default settings"
        for overrides in (given, {}):
            try:
                settings = load_settings(pyproject, **overrides)
            except SettingsError as error:
                errors += [str(error)] * (str(error) not in errors)
                continue
            if errors and pyproject:
                using = "the project's settings alone"
            break
        if errors:  # one message, saying what is used in the end
            self.tell(f"semfix: {'; '.join(errors)}; using {using}")
        return settings

    def document(self, uri: str) -> Document:
        text_document = self.workspace.get_text_document(uri)
        text = text_document.source
        bom = text.startswith("\ufeff")  # checked without it, as Python reads a file that starts so
        text = text[bom:]
        lines = Lines(text, self.workspace.position_codec, bom)
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
            if self.excluded(document.uri):
                empty = document.data if isinstance(document, Notebook) else document.text
                return FixResult(empty, (), "utf-8", parsed=False)
            if isinstance(document, Notebook):
                return document.analyse()
            previous = self.state.checked.pop(document.uri, None) if self.state.incremental else None
            result, state = check_incremental(previous, document.text, document.settings)
            if state is not None:
                self.state.checked[document.uri] = state
            return result
        except SourceError as error:
            if str(error).startswith(_NEWER_SYNTAX):  # else it would show nothing, and never say why
                name = document.uri.rsplit("/", 1)[-1]
                self.tell(f"semfix: {name} {error}: run `semfix server` under that Python to check it", document.uri)
            return None  # else an unsaved buffer mid-edit: semfix is not a syntax checker
        except SafetyError:
            return None
        except Exception:  # noqa: BLE001 - a bug in semfix must not end the session
            self.log(f"semfix: analysing {document.uri} failed:\n{traceback.format_exc()}")
            return None

    def excluded(self, uri: str) -> bool:
        """Is the document a file its project's excludes skip (`Projects.excluded`)?"""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        return path is not None and self.state.projects.excluded(Path(path))

    def pulls(self) -> bool:
        """Does the client pull text documents' diagnostics (`textDocument/diagnostic`)? Then,
        as ruff does, they are only answered, not pushed as well. Notebooks are pushed either
        way (as ruff's are): a change in one cell can change another's findings, which only a
        push brings to the other cell."""
        document = self.client_capabilities.text_document
        return document is not None and document.diagnostic is not None

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Analyse and publish the document's newest text, replacing any analysis not yet published."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is None and self.pulls() and self.workspace.get_notebook_document(notebook_uri=uri) is None:
            return  # the client asks when it wants them
        uri = uri if notebook is None else notebook.uri
        old = self.state.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        self.state.pending[uri] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def settled(self) -> None:
        """Wait for the client's settings, a few seconds at most (a client may never answer)."""
        if self.state.configured.is_set():
            return  # as on every change: no task made to wait for it
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
            result = await self.on_worker(partial(self._newest, uri, document))
            if result is _STALE or self.workspace.get_text_document(uri).version != document.version:
                return  # a newer change has its own analysis coming
            self.remember(uri, Analysed(document.version, document.text, result, document.settings))
            found = self.kept(uri, document.lines) if result is None else diagnostics(result, document.lines)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, found, document.version))
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            self.log(f"semfix: publishing diagnostics for {uri} failed:\n{traceback.format_exc()}")
        finally:
            if self.state.pending.get(uri) is asyncio.current_task():
                del self.state.pending[uri]

    def _newest(self, uri: str, document: Document) -> Any:
        """The analysis of `document`, on the worker, unless a newer change came while it waited
        its turn there: a burst of typing queues one analysis per change, and cancelling the
        task awaiting one does not stop it (5,000 changes took 134 s to absorb). Then `_STALE`."""
        if self.workspace.get_text_document(uri).version != document.version:
            return _STALE
        return self.analyse(document)

    async def _publish_notebook(self, notebook: Notebook) -> None:
        result = await self.on_worker(lambda: self.analyse(notebook))
        if self.notebook(notebook.uri) != notebook:
            return  # a newer change has its own analysis coming
        self.state.notebooks[notebook.uri] = (notebook.data, notebook.settings, result)
        for index, cell in enumerate(notebook.cells):
            mine = notebook.of_cell(result, index)
            self.remember(cell.uri, Analysed(cell.version, cell.text, mine, notebook.settings))
            # while one cell does not parse, every cell keeps its last diagnostics, as a text document does
            found = notebook.diagnostics(result, index) if result is not None else self.kept(cell.uri, cell.lines)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(cell.uri, found, cell.version))

    async def current(self, uri: str) -> tuple[FixResult[str] | None, Lines | None]:
        """The analysis of the text document (or notebook cell) as it is now, with its lines:
        the published one while it is current, else one made now (and kept), so that a pull, a
        hover or a code action never answers from an older text. A cell's findings count lines
        and columns within the cell, as the client does."""
        await self.settled()
        notebook = self.notebook(uri)
        if notebook is None:
            document = self.document(uri)
            result = await self.result_for(document)
            self.remember(uri, Analysed(document.version, document.text, result, document.settings))
            return result, document.lines
        index = notebook.cell_of(uri)
        if index is None:  # the notebook itself, or a markdown cell
            return None, None
        return notebook.of_cell(await self.notebook_result(notebook), index), notebook.cells[index].lines

    async def pull(self, uri: str) -> list[lsp.Diagnostic]:
        """`textDocument/diagnostic`: the document's (or cell's) diagnostics, now."""
        result, lines = await self.current(uri)
        if lines is None:
            return []
        return self.kept(uri, lines) if result is None else [diagnostic(f, lines) for f in result.findings]

    def remember(self, uri: str, analysed: Analysed) -> None:
        self.state.analysed[uri] = analysed
        if analysed.result is not None:
            self.state.parsed[uri] = analysed

    def kept(self, uri: str, lines: Lines) -> list[lsp.Diagnostic]:
        """While a text document (or a notebook's cell) does not parse (a bracket open
        mid-typing), the diagnostics of its last text that did, moved with the edits since (as
        rust-analyzer keeps them), so that they do not flicker away and back at every keystroke."""
        last = self.state.parsed.get(uri)
        if last is None or last.result is None:
            return []
        return [diagnostic(f, lines) for f in moved(last.result.findings, last.text, lines)]

    async def notebook_result(self, notebook: Notebook) -> FixResult[bytes] | None:
        """The analysis of the notebook's cells as they are: the published one if current."""
        data, settings, known = self.state.notebooks.get(notebook.uri, (None, None, None))
        return (
            known
            if (data, settings) == (notebook.data, notebook.settings)
            else await self.on_worker(lambda: self.analyse(notebook))
        )

    async def subject(self, uri: str) -> tuple[Target, Sequence[Finding], Sequence[Finding] | None]:
        """What a code action on `uri` is made of: the text document (or the notebook), the
        findings its actions may name, and every finding fix all may make (by default, those)."""
        await self.settled()
        notebook = self.notebook(uri)
        if notebook is None:
            document = self.document(uri)
            result = await self.result_for(document)
            found = () if result is None else result.findings
            imported = await self.imported(document)
            if imported:  # its fixes keep those imports: the findings' edits are made again
                return replace(document, settings=replace(document.settings, imported_by_run=imported)), found, None
            return replace(document, found=found), found, None
        joined = await self.notebook_result(notebook)
        index = notebook.cell_of(uri)
        cell = None if joined is None or index is None else notebook.of_cell(joined, index)
        if joined is None or cell is None:
            return notebook, (), ()
        return notebook, cell.findings, joined.findings

    async def imported(self, document: Document) -> frozenset[str]:
        """Under a rule that decides across files, the names the project's other modules (the
        open documents as they are) import from the document, as `semfix fix` run over the
        project reads them."""
        path = to_fs_path(document.uri) if document.uri.startswith("file:") else None
        if path is None or not drops_imports(document.settings):
            return frozenset()
        documents = self.workspace.text_documents.items()
        texts = {
            Path(p): text.source
            for uri, text in documents
            if uri.startswith("file:") and uri.endswith(".py") and (p := to_fs_path(uri))
        }
        return await self.on_worker(partial(self.state.projects.imported, Path(path), texts))

    async def actions(self, params: lsp.CodeActionParams, lazy: bool) -> list[lsp.CodeAction]:
        """The code actions for the document (or notebook cell) the request names."""
        target, findings, every = await self.subject(params.text_document.uri)
        return await self.on_worker(partial(code_actions, target, findings, params.context, lazy=lazy, every=every))

    async def resolve(self, action: lsp.CodeAction) -> lsp.WorkspaceEdit | None:
        """A listed action's edit: that one action alone, made again (`lsp.resolve`)."""
        data = action.data if isinstance(action.data, dict) else {}
        target, findings, _ = await self.subject(data["uri"])
        item = action.diagnostics[0] if action.diagnostics else None
        made = await self.on_worker(partial(resolve, target, findings, data, item))
        return None if made is None else made.edit

    def resolves_edits(self) -> bool:
        """Does the client resolve a code action's edit (`codeAction/resolve`)?"""
        document = self.client_capabilities.text_document
        action = document.code_action if document else None
        support = action.resolve_support if action else None
        return support is not None and "edit" in support.properties

    async def result_for(self, document: Document) -> FixResult[str] | None:
        """The analysis of exactly this text: the published one if it is current."""
        known = self.state.analysed.get(document.uri)
        if known is not None and (known.text, known.settings) == (document.text, document.settings):
            return known.result
        return await self.on_worker(lambda: self.analyse(document))

    def refresh(self) -> None:
        """Settings changed: forget them and publish every open document again; a client that
        pulls is asked to pull again (`workspace/diagnostic/refresh`), where it can be."""
        self.state.settings.clear()
        self.state.projects.forget()
        self.state.analysed.clear()  # made under the old settings: never an answer again
        self.state.parsed.clear()
        self.state.checked.clear()
        self.state.notebooks.clear()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri)  # under pull, the notebooks' cells alone
        workspace = self.client_capabilities.workspace
        refreshes = workspace.diagnostics if workspace else None
        if self.pulls() and refreshes and refreshes.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def watch_pyprojects(self) -> None:
        """Ask the client to say when a pyproject.toml changes, where it can (as ruff does)."""
        workspace = self.client_capabilities.workspace
        watching = workspace.did_change_watched_files if workspace else None
        if not (watching and watching.dynamic_registration):
            return
        watchers = lsp.DidChangeWatchedFilesRegistrationOptions([lsp.FileSystemWatcher(f"**/{n}") for n in DECLARING])
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
