"""A source's text, or a notebook's cells, through the whole driver: the byte scan, the skim,
then `run.analyse`. The public API (semfix/api.py) offers these; they sit here, below it, so
that `explain` (semfix/explain/), which makes and checks its fixes the same way, needs no layer
above its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from semfix.catalog import may_contain_calls
from semfix.errors import SourceError
from semfix.findings import Finding
from semfix.rules.table import opens_a_gate
from semfix.selection import build_settings
from semfix.settings import Settings

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
    settings = settings or build_settings()
    if not may_fire(source, settings) or skims_clean(source, settings):
        return FixResult(source, (), "utf-8", parsed=False)
    from semfix.engine.run import analyse  # the analysis and the rules: loaded by the first file they read

    result = analyse(source, settings, apply_fixes)
    changed = any(f.applied for f in result.findings)
    new = result.text if isinstance(source, str) else result.text.encode(result.encoding)
    return FixResult(new if changed else source, result.findings, result.encoding)


def fix_notebook(data: bytes, settings: Settings | None = None, apply_fixes: bool = True) -> FixResult[bytes]:
    """`fix_source` over a Jupyter notebook's code cells, joined into one module (semfix/notebook.py);
    every other byte of the JSON is kept. Findings carry their cell number and cell-relative lines
    (their messages and a SourceError's name lines so);
    their `Fix.edits` are offsets into the joined module, not into the notebook's JSON."""
    from semfix.notebook import join_cells
    from semfix.rewrite.compiles import TOP_LEVEL_AWAIT

    notebook = join_cells(data)
    if notebook is None:  # not a Python notebook
        return FixResult(data, (), "utf-8", parsed=False)
    awaits = TOP_LEVEL_AWAIT.set(True)  # IPython awaits at a cell's top level
    try:
        result: FixResult[str] = fix_source(notebook.module, settings=settings, apply_fixes=apply_fixes)
    except SourceError as error:  # `syntax error at line 29`: the joined module's line, named in its cell
        raise SourceError(notebook.named(str(error))) from None
    finally:
        TOP_LEVEL_AWAIT.reset(awaits)
    findings = tuple(notebook.locate(f) for f in result.findings)
    new = data if result.source == notebook.module else notebook.rebuild(result.source)
    return FixResult(new, findings, "utf-8", result.parsed)


def may_fire(source: str | bytes, settings: Settings) -> bool:
    """The byte scan: False when the bytes alone show no enabled rule can fire. The rules on
    semaphore and DMA arguments need a catalog function's name and `pallas` spelled; a rule
    with a text gate (a migration: `pltpu.DeviceIdType` alone) needs its gate's spelling."""
    through_run = bool(settings.read_through.aliases)  # `pltpu` from a compat module need not spell "pallas"
    helped = bool(
        settings.read_through.helpers
    )  # nor need a helper's call (`fetch(x, y, sems[1])`) spell a catalog name
    if helped or may_contain_calls(source, through_run=through_run):  # a str's answer is not kept, its bytes'
        return True  # are (each asker of a run's file shares them)
    return opens_a_gate(
        source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source, settings.enabled
    )


def skims_clean(source: str | bytes, settings: Settings) -> bool:
    """True when the bytes alone prove no enabled rule can fire (see semfix/engine/skim.py).
    A file whose kernels another module of the run launches, or that calls a helper another
    module defines, is parsed: the skim reads allocations and catalog calls in the file alone
    (`Settings.launched_by_run`, `ReadThrough.helpers`)."""
    from semfix.engine.skim import clears_for  # for the files the byte scan keeps

    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    return not settings.launched_by_run and not settings.read_through.helpers and clears_for(raw, settings.enabled)
