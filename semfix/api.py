"""The public Python API: fix source text in memory, with every rewrite verified.

Nothing here touches files; the CLI and other tools build on `fix_source`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from semfix.catalog import may_contain_calls
from semfix.errors import SafetyError, SourceError
from semfix.findings import Finding
from semfix.engine import Defer, QuickSafetyError, analyse
from semfix.settings import Settings
from semfix.rules import MIGRATIONS
from semfix.skim import clears

__all__ = ["Engine", "FixResult", "SafetyError", "SourceError", "fix_source"]

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


Engine = Literal["auto", "libcst", "quick"]


def fix_source(
    source: Source, *, settings: Settings | None = None, apply_fixes: bool = True, engine: Engine = "auto"
) -> FixResult[Source]:
    """Find (and by default fix) semaphore arguments that read the Ref instead of passing it.

    Source the byte scan or the skim clears is never parsed, so it returns no findings even
    if it would not parse. Raises SourceError for source semfix must parse but cannot read,
    and SafetyError if the rewrite fails its checks: the new source must parse, and fixing
    it again must change nothing.
    `engine="auto"` tries the quick stdlib-ast engine first and hands libcst whatever it
    defers; "libcst" forces the libcst engine; "quick" raises `Defer` instead of handing over.
    """
    settings = settings or Settings()
    if not may_contain_calls(source) or skims_clean(source, settings):
        return FixResult(source, (), "utf-8", parsed=False)
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
    from semfix.cst_engine import fix_with_libcst  # deferred: libcst is slow to import

    new_source, findings, encoding = fix_with_libcst(source, settings, apply_fixes)
    return FixResult(new_source, findings, encoding)


def skims_clean(source: str | bytes, settings: Settings) -> bool:
    """True when the bytes alone prove no enabled rule can fire (see semfix/skim.py)."""
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    return not (settings.enabled & MIGRATIONS) and clears(raw)
