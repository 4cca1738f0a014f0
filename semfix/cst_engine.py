"""The libcst engine: the full rule set on a concrete syntax tree, with its own checks.

Imported only when a file needs it: importing libcst alone costs more than scanning most files.
"""

from __future__ import annotations

import ast
import warnings
from typing import TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper

from semfix.equivalence import check_rewrite
from semfix.errors import SafetyError, SourceError
from semfix.evidence import EvidenceCollector
from semfix.findings import Finding
from semfix.imports import ImportChanges, apply_import_changes
from semfix.settings import Settings
from semfix.syntax import syntax_error
from semfix.transform import SemaphoreTransformer

Source = TypeVar("Source", str, bytes)


def _parse(source: str | bytes) -> cst.Module:
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise SourceError(_describe_syntax_error(source, error)) from None
    except UnicodeDecodeError as error:
        raise SourceError(
            f"cannot decode as {error.encoding}: byte {error.object[error.start]:#04x} at offset {error.start}"
        ) from None
    except (SyntaxError, LookupError) as error:  # a bad or unknown coding cookie
        raise SourceError(f"bad encoding declaration: {error}") from None
    except RecursionError:
        raise SourceError("too deeply nested for the parser") from None
    regenerated = module.bytes if isinstance(source, bytes) else module.code
    if regenerated != source:
        raise SourceError("cannot reproduce this file byte for byte (lone carriage returns?)")
    try:  # libcst parses syntax newer than this Python, which CPython could not prove: refused
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as error:
        raise syntax_error(module.code, error) from None
    except (ValueError, RecursionError, MemoryError):
        pass  # libcst's own checks stand, as before
    return module


def _describe_syntax_error(source: str | bytes, error: cst.ParserSyntaxError) -> str:
    """CPython's own words for the error when it agrees the source is invalid; they are clearer."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
    except SyntaxError as python_error:
        return str(syntax_error(source if isinstance(source, str) else source.decode("utf-8", "replace"), python_error))
    except (ValueError, RecursionError, MemoryError):
        pass
    reason = str(error.message).strip().splitlines()[0] if error.message else "invalid syntax"
    return f"libcst cannot parse line {error.raw_line}, column {error.raw_column + 1}: {reason}"


def _transform(module: cst.Module, settings: Settings, apply_fixes: bool) -> tuple[cst.Module, list[Finding], ImportChanges]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        collector = EvidenceCollector()
        wrapper.visit(collector)
        transformer = SemaphoreTransformer(collector.evidence, settings, apply_fixes=apply_fixes)
        new_module = wrapper.visit(transformer)
        new_module = apply_import_changes(new_module, transformer.imports)
    except RecursionError:
        raise SourceError("too deeply nested to analyse") from None
    return new_module, transformer.findings, transformer.imports


def _render(module: cst.Module, like: Source) -> Source:
    return module.bytes if isinstance(like, bytes) else module.code  # type: ignore[return-value]


def fix_with_libcst(source: Source, settings: Settings, apply_fixes: bool) -> tuple[Source, tuple[Finding, ...], str]:
    """New source, findings and encoding; raises SourceError or SafetyError."""
    module = _parse(source)
    new_module, findings, imports = _transform(module, settings, apply_fixes)
    new_source = _render(new_module, source)
    if new_source != source:
        _verify(new_source, settings)
        check_rewrite(source, new_source, findings, imports)
    return new_source, tuple(findings), module.encoding


def _verify(new_source: str | bytes, settings: Settings) -> None:
    try:
        module = _parse(new_source)
    except SourceError as error:
        raise SafetyError(f"the rewritten source does not parse: {error}") from None
    again, findings, _ = _transform(module, settings, apply_fixes=True)
    if any(f.applied for f in findings) or _render(again, new_source) != new_source:
        raise SafetyError("a second run would change the rewritten source again")
