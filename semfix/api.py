"""The public Python API: fix source text in memory, with every rewrite verified.

Nothing here touches files; the CLI and other tools build on `fix_source` (and `blame`, whose
chosen fixes `fix_source` makes under `chosen_settings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from semfix.catalog import may_contain_calls
from semfix.engine.blame import Blame, blame
from semfix.engine.blame import settings_for as chosen_settings
from semfix.engine.importer import OPAQUE_CODE
from semfix.engine.relocate import find_line
from semfix.engine.run import analyse
from semfix.engine.skim import clears_for
from semfix.errors import SafetyError, SourceError
from semfix.findings import Finding
from semfix.settings import Settings

__all__ = [
    "OPAQUE_CODE", "Blame", "FixResult", "SafetyError", "SourceError",
    "blame", "chosen_settings", "find_line", "fix_source",
]

Source = TypeVar("Source", str, bytes)


@dataclass(frozen=True)
class FixResult(Generic[Source]):
    source: Source  # the new source, same type (and for bytes, same encoding) as the input
    findings: tuple[Finding, ...]
    encoding: str  # the encoding the source was decoded with ("utf-8" for str input)
    parsed: bool = True  # False when the bytes alone proved there is nothing to find

    @property
    def applied(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.applied)


def fix_source(source: Source, *, settings: Settings | None = None, apply_fixes: bool = True) -> FixResult[Source]:
    """Find (and by default fix) semaphore arguments that read the Ref instead of passing it.

    Source the byte scan or the skim clears is never parsed, so it returns no findings even
    if it would not parse. Raises SourceError for source semfix must parse but cannot read,
    and SafetyError if the rewrite fails its checks: the new source must parse, and fixing
    it again must change nothing.
    """
    settings = settings or Settings()
    if not may_contain_calls(source) or skims_clean(source, settings):
        return FixResult(source, (), "utf-8", parsed=False)
    result = analyse(source, settings, apply_fixes)
    changed = any(f.applied for f in result.findings)
    new = result.text if isinstance(source, str) else result.text.encode(result.encoding)
    return FixResult(new if changed else source, result.findings, result.encoding)  # type: ignore[arg-type]


def skims_clean(source: str | bytes, settings: Settings) -> bool:
    """True when the bytes alone prove no enabled rule can fire (see semfix/engine/skim.py)."""
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    return clears_for(raw, settings.enabled)
