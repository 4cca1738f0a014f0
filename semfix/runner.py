"""One run over files: read, fix in memory, optionally write, and collect the outcome.

This is the layer between the CLI (which knows nothing of libcst) and the API (which knows
nothing of files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from semfix.api import SafetyError, SourceError, fix_source
from semfix.files import FileError, discover, read_source, write_atomic
from semfix.findings import Finding
from semfix.settings import Settings

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2


@dataclass
class FileOutcome:
    path: Path
    findings: tuple[Finding, ...] = ()
    old: bytes = b""
    new: bytes = b""
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.error is None and self.new != self.old


@dataclass
class RunOutcome:
    files: list[FileOutcome] = field(default_factory=list)
    checked: int = 0

    @property
    def errors(self) -> list[FileOutcome]:
        return [f for f in self.files if f.error is not None]

    @property
    def findings(self) -> list[tuple[Path, Finding]]:
        return [(f.path, finding) for f in self.files for finding in f.findings]

    @property
    def exit_code(self) -> int:
        if self.errors:
            return EXIT_ERROR
        return EXIT_FOUND if self.findings else EXIT_CLEAN


def process_file(path: Path, *, settings: Settings, apply_fixes: bool, write: bool) -> FileOutcome:
    """Fix one file in memory and write it back only if it changed and `write` is set."""
    try:
        old = read_source(path)
        result = fix_source(old, settings=settings, apply_fixes=apply_fixes)
        outcome = FileOutcome(path, result.findings, old, result.source)
        if write and outcome.changed:
            write_atomic(path, result.source, expected=old)
        return outcome
    except (FileError, SourceError) as error:
        return FileOutcome(path, error=str(error))
    except SafetyError as error:
        return FileOutcome(path, error=f"internal error, file left unchanged: {error}")
    except Exception as error:  # a bug in semfix must not stop the other files
        return FileOutcome(
            path, error=f"internal error, file left unchanged: {type(error).__name__}: {error}"
        )


def run(paths: Iterable[Path], *, settings: Settings, apply_fixes: bool, write: bool) -> RunOutcome:
    found = discover(paths)
    outcome = RunOutcome(checked=len(found.files))
    outcome.files.extend(FileOutcome(path, error=reason) for path, reason in found.errors)
    for path in found.files:
        outcome.files.append(process_file(path, settings=settings, apply_fixes=apply_fixes, write=write))
    return outcome
