"""The public Python API: fix source text in memory, with every rewrite verified.

Nothing here touches files; the CLI and other tools build on `fix_source`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper

from semfix.catalog import may_contain_calls
from semfix.evidence import EvidenceCollector
from semfix.findings import Finding
from semfix.settings import Settings
from semfix.imports import apply_import_changes
from semfix.quick import Defer, QuickSafetyError, analyse
from semfix.transform import SemaphoreTransformer

Source = TypeVar("Source", str, bytes)


class SourceError(Exception):
    """The source cannot be processed (it does not parse or decode); it is left alone."""


class SafetyError(Exception):
    """semfix produced a rewrite that failed its own checks; it must not be written."""


@dataclass(frozen=True)
class FixResult(Generic[Source]):
    source: Source  # the new source, same type (and for bytes, same encoding) as the input
    findings: tuple[Finding, ...]
    encoding: str  # the encoding the source was decoded with ("utf-8" for str input)

    @property
    def applied(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.applied)


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
    return module


def _describe_syntax_error(source: str | bytes, error: cst.ParserSyntaxError) -> str:
    """CPython's own words for the error when it agrees the source is invalid; they are clearer."""
    try:
        ast.parse(source)
    except SyntaxError as python_error:
        return f"syntax error at line {python_error.lineno}, column {python_error.offset}: {python_error.msg}"
    except (ValueError, RecursionError, MemoryError):
        pass
    reason = str(error.message).strip().splitlines()[0] if error.message else "invalid syntax"
    return f"libcst cannot parse line {error.raw_line}, column {error.raw_column + 1}: {reason}"


def _transform(module: cst.Module, settings: Settings, apply_fixes: bool) -> tuple[cst.Module, list[Finding]]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        collector = EvidenceCollector()
        wrapper.visit(collector)
        transformer = SemaphoreTransformer(collector.evidence, settings, apply_fixes=apply_fixes)
        new_module = wrapper.visit(transformer)
        new_module = apply_import_changes(new_module, transformer.imports)
    except RecursionError:
        raise SourceError("too deeply nested to analyse") from None
    return new_module, transformer.findings


def _render(module: cst.Module, like: Source) -> Source:
    return module.bytes if isinstance(like, bytes) else module.code  # type: ignore[return-value]


Engine = Literal["auto", "libcst", "quick"]


def fix_source(
    source: Source, *, settings: Settings | None = None, apply_fixes: bool = True, engine: Engine = "auto"
) -> FixResult[Source]:
    """Find (and by default fix) semaphore arguments that read the Ref instead of passing it.

    Raises SourceError for source semfix cannot read, and SafetyError if the rewrite fails its
    checks: the new source must parse, and fixing it again must change nothing.
    `engine="auto"` tries the quick stdlib-ast engine first and hands libcst whatever it
    defers; "libcst" forces the libcst engine; "quick" raises `Defer` instead of handing over.
    """
    settings = settings or Settings()
    if not may_contain_calls(source):
        return FixResult(source, (), "utf-8")
    if engine != "libcst":
        try:
            quick = analyse(source, settings, apply_fixes)
        except Defer:
            if engine == "quick":
                raise
        except QuickSafetyError as error:
            raise SafetyError(str(error)) from None
        else:
            changed = any(f.applied for f in quick.findings)
            new = quick.text if isinstance(source, str) else quick.text.encode(quick.encoding)
            return FixResult(new if changed else source, quick.findings, quick.encoding)  # type: ignore[arg-type]
    module = _parse(source)
    new_module, findings = _transform(module, settings, apply_fixes)
    new_source = _render(new_module, source)
    if new_source != source:
        _verify(new_source, settings)
    return FixResult(new_source, tuple(findings), module.encoding)


def _verify(new_source: str | bytes, settings: Settings) -> None:
    try:
        module = _parse(new_source)
    except SourceError as error:
        raise SafetyError(f"the rewritten source does not parse: {error}") from None
    again, findings = _transform(module, settings, apply_fixes=True)
    if any(f.applied for f in findings) or _render(again, new_source) != new_source:
        raise SafetyError("a second run would change the rewritten source again")
