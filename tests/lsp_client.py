"""A real LSP client (pygls's) driving `python -m semfix server` in a subprocess, for the server's
tests and its latency benchmark. Every wait is bounded, so a hung server fails a test instead
of blocking it, and the subprocess is killed if it does not exit when told."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Union, get_args, get_origin

import attrs
from cattrs import Converter
from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient
from pygls.protocol import default_converter

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30.0  # seconds any one answer may take
#: A client that lists code actions without their edits and resolves the chosen one (`codeAction/resolve`).
RESOLVING = lsp.ClientCapabilities(
    text_document=lsp.TextDocumentClientCapabilities(
        code_action=lsp.CodeActionClientCapabilities(resolve_support=lsp.ClientCodeActionResolveOptions(["edit"]))
    )
)


def _converter() -> Converter:
    """pygls's converter, able to read a notebook selector that names no notebook (`{"cells":
    [...]}`, as the server sends, as ruff's does): cattrs cannot structure that union by itself."""
    converter = default_converter()
    filters = (
        lsp.NotebookDocumentFilterNotebookType,
        lsp.NotebookDocumentFilterScheme,
        lsp.NotebookDocumentFilterPattern,
    )

    def is_notebook(kind: Any) -> bool:
        names = {getattr(arg, "__forward_arg__", getattr(arg, "__name__", "")) for arg in get_args(kind)}
        return get_origin(kind) is Union and {"str", "NotebookDocumentFilterScheme"} <= names

    def structure(value: Any, _: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        kind = next((k for k in filters if attrs.fields(k)[0].name in value), filters[0])
        return converter.structure(value, kind)

    converter.register_structure_hook_func(is_notebook, structure)
    return converter


class Client(LanguageClient):
    """Keeps what the server publishes and logs; answers `workspace/configuration`."""

    def __init__(self, configuration: dict[str, Any] | None) -> None:
        super().__init__("semfix-tests", "1", converter_factory=_converter)
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.logs: list[str] = []
        self.shown: list[str] = []  # window/showMessage: what the user is told
        self.configuration = configuration
        self.arrived = asyncio.Condition()
        self.versions: dict[str, int] = {}
        self.registered: list[lsp.Registration] = []
        self.answer_after = 0.0  # seconds before answering workspace/configuration
        self.refreshes = 0  # workspace/diagnostic/refresh requests: pull the diagnostics again
        self.server_capabilities: lsp.ServerCapabilities | None = None  # the initialize answer's

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        async def published(params: lsp.PublishDiagnosticsParams) -> None:
            async with self.arrived:
                self.published.setdefault(params.uri, []).append(params)
                self.arrived.notify_all()

        @self.feature(lsp.WINDOW_LOG_MESSAGE)
        def logged(params: lsp.LogMessageParams) -> None:
            self.logs.append(params.message)

        @self.feature(lsp.WINDOW_SHOW_MESSAGE)
        async def shown(params: lsp.ShowMessageParams) -> None:
            async with self.arrived:
                self.shown.append(params.message)
                self.arrived.notify_all()

        @self.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            self.registered.extend(params.registrations)

        @self.feature(lsp.WORKSPACE_DIAGNOSTIC_REFRESH)
        async def refresh(params: None) -> None:
            async with self.arrived:
                self.refreshes += 1
                self.arrived.notify_all()

        @self.feature(lsp.WORKSPACE_CONFIGURATION)
        async def configure(params: lsp.ConfigurationParams) -> list[Any]:
            await asyncio.sleep(self.answer_after)
            return [self.configuration for _ in params.items]

    async def diagnostics(self, uri: str, version: int | None = None) -> list[lsp.Diagnostic]:
        """The diagnostics published for `version` of the document (by default, the latest sent)."""
        wanted = self.versions.get(uri) if version is None else version

        def ready() -> bool:
            return any(p.version == wanted for p in self.published.get(uri, []))

        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(ready), TIMEOUT)
        return list([p for p in self.published[uri] if p.version == wanted][-1].diagnostics)

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        self.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", 1, text)))

    def change(self, uri: str, text: str) -> int:
        """Replace the whole text; the new version."""
        self.versions[uri] += 1
        identifier = lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        whole = lsp.TextDocumentContentChangeWholeDocument(text=text)
        self.text_document_did_change(lsp.DidChangeTextDocumentParams(identifier, [whole]))
        return self.versions[uri]

    def insert(self, uri: str, line: int, text: str) -> int:
        """Insert `text` at the start of `line`, as an editor sends a keystroke (an incremental
        change); the new version."""
        self.versions[uri] += 1
        identifier = lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri])
        where = lsp.Range(lsp.Position(line, 0), lsp.Position(line, 0))
        change = lsp.TextDocumentContentChangePartial(range=where, text=text)
        self.text_document_did_change(lsp.DidChangeTextDocumentParams(identifier, [change]))
        return self.versions[uri]

    async def pull(self, uri: str) -> list[lsp.Diagnostic]:
        """`textDocument/diagnostic`: the items of the full report the server answers."""
        params = lsp.DocumentDiagnosticParams(lsp.TextDocumentIdentifier(uri))
        report = await asyncio.wait_for(self.text_document_diagnostic_async(params), TIMEOUT)
        assert isinstance(report, lsp.RelatedFullDocumentDiagnosticReport), report
        return list(report.items)

    async def hover(self, uri: str, line: int, character: int) -> lsp.Hover | None:
        params = lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, character))
        return await asyncio.wait_for(self.text_document_hover_async(params), TIMEOUT)

    async def actions(
        self, uri: str, diagnostics: list[lsp.Diagnostic], only: list[str] | None = None
    ) -> list[lsp.CodeAction]:
        where = diagnostics[0].range if diagnostics else lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
        context = lsp.CodeActionContext(diagnostics=diagnostics, only=only)  # type: ignore[arg-type]
        params = lsp.CodeActionParams(lsp.TextDocumentIdentifier(uri), where, context)
        answer = await asyncio.wait_for(self.text_document_code_action_async(params), TIMEOUT)
        return [a for a in answer or [] if isinstance(a, lsp.CodeAction)]


def offset(text: str, position: lsp.Position) -> int:
    """A UTF-16 position's character offset in `text`, its lines ended where LSP ends them."""
    lines = re.findall(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+", text)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(line)


def apply(text: str, edit: lsp.WorkspaceEdit) -> str:
    """The text with a workspace edit's text edits made (one document, as the server sends)."""
    (change,) = edit.document_changes or []
    edits = sorted(
        ((offset(text, e.range.start), offset(text, e.range.end), e.new_text) for e in change.edits), reverse=True
    )
    for start, end, new in edits:  # type: ignore[union-attr]
        text = text[:start] + new + text[end:]
    return text


@asynccontextmanager
async def session(
    root: Path,
    options: dict[str, Any] | None = None,
    configuration: dict[str, Any] | None = None,
    capabilities: lsp.ClientCapabilities | None = None,
    answer_after: float = 0.0,
) -> AsyncIterator[Client]:
    """`semfix server` started, initialized (with `options` as initializationOptions), and at
    the end shut down and exited; killed if it does not exit."""
    client = Client(configuration)
    client.answer_after = answer_after
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    await client.start_io(sys.executable, "-m", "semfix", "server", cwd=str(root), env=env)
    try:
        capabilities = capabilities or lsp.ClientCapabilities()
        capabilities.workspace = lsp.WorkspaceClientCapabilities(
            configuration=configuration is not None,
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True),
            diagnostics=capabilities.workspace.diagnostics if capabilities.workspace else None,
        )
        params = lsp.InitializeParams(
            capabilities=capabilities, root_uri=root.as_uri(), initialization_options=options, process_id=os.getpid()
        )
        client.server_capabilities = (await asyncio.wait_for(client.initialize_async(params), TIMEOUT)).capabilities
        client.initialized(lsp.InitializedParams())
        yield client
        await asyncio.wait_for(client.shutdown_async(None), TIMEOUT)
        client.exit(None)
        await asyncio.wait_for(client._server.wait(), TIMEOUT)  # type: ignore[union-attr]
    finally:
        process = client._server
        if process is not None and process.returncode is None:
            with suppress(ProcessLookupError):
                process.kill()
        with suppress(Exception):
            await asyncio.wait_for(client.stop(), TIMEOUT)
