"""The public Python API: fix source text (or a notebook's cells) in memory, every rewrite verified.

Nothing here touches files but explain's search and the naming of a run's modules
(`imported_by_run`); the CLI and other tools build on `fix_source` and `fix_notebook`
(semfix/engine/fix.py) and on `explain`'s services: `parse_log`, `blame`, whose chosen fixes
`fix_source` makes under `chosen_settings`, `find_line`, and the search for the files a
traceback names (`explain_failure`, `merged_fixes`, `left_after`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from semfix.engine.fix import FixResult, fix_notebook, fix_source, may_fire, skims_clean
from semfix.errors import SafetyError, SourceError
from semfix.files import module_names
from semfix.findings import Finding
from semfix.rewrite.text import decode
from semfix.rules import GATES
from semfix.selection import build_settings
from semfix.settings import Launch, ReadThrough, Settings

if TYPE_CHECKING:
    from semfix.analysis.run_imports import names_imported
    from semfix.engine.incremental import Checked
    from semfix.explain.blame import Blame, blame
    from semfix.explain.blame import settings_for as chosen_settings
    from semfix.explain.errors import BY_KEY as ERRORS_BY_KEY
    from semfix.explain.errors import JaxError, read_shape, recognise, said
    from semfix.explain.errors import markdown as errors_markdown
    from semfix.explain.logs import Failure, Frame, decode_log, parse_log
    from semfix.explain.logs import distinct as distinct_failures
    from semfix.explain.relocate import find_line
    from semfix.explain.search import Explanation, FileFix, left_after, merged_fixes
    from semfix.explain.search import explain as explain_failure
    from semfix.notebook import Joined, join_cells

__all__ = [
    "catalog_rules",
    "drops_imports",
    "imported_by_run",
    "launched_by_run",
    "may_drop_imports",
    "may_read_through_run",
    "read_through_run",
    "reads_through_run",
    "names_imported",
    "ERRORS_BY_KEY",
    "Blame",
    "Checked",
    "Explanation",
    "FileFix",
    "Failure",
    "FixResult",
    "Frame",
    "JaxError",
    "Joined",
    "SafetyError",
    "SourceError",
    "blame",
    "chosen_settings",
    "decode",
    "decode_log",
    "distinct_failures",
    "errors_markdown",
    "explain_failure",
    "find_line",
    "check_incremental",
    "fix_finding",
    "fix_notebook",
    "fix_source",
    "join_cells",
    "left_after",
    "may_fire",
    "skims_clean",
    "merged_fixes",
    "parse_log",
    "read_shape",
    "recognise",
    "said",
]

#: explain's services and the notebook's cells, each name with its module and its name there:
#: loaded on first use (PEP 562), since checking or fixing Python files needs none of them.
_LAZY = {
    "names_imported": ("semfix.analysis.run_imports", "names_imported"),
    "Checked": ("semfix.engine.incremental", "Checked"),
    "ERRORS_BY_KEY": ("semfix.explain.errors", "BY_KEY"),
    "Blame": ("semfix.explain.blame", "Blame"),
    "Failure": ("semfix.explain.logs", "Failure"),
    "Frame": ("semfix.explain.logs", "Frame"),
    "Joined": ("semfix.notebook", "Joined"),
    "blame": ("semfix.explain.blame", "blame"),
    "chosen_settings": ("semfix.explain.blame", "settings_for"),
    "errors_markdown": ("semfix.explain.errors", "markdown"),
    "find_line": ("semfix.explain.relocate", "find_line"),
    "join_cells": ("semfix.notebook", "join_cells"),
    "parse_log": ("semfix.explain.logs", "parse_log"),
    "decode_log": ("semfix.explain.logs", "decode_log"),
    "distinct_failures": ("semfix.explain.logs", "distinct"),
    "JaxError": ("semfix.explain.errors", "JaxError"),
    "read_shape": ("semfix.explain.errors", "read_shape"),
    "recognise": ("semfix.explain.errors", "recognise"),
    "said": ("semfix.explain.errors", "said"),
    "Explanation": ("semfix.explain.search", "Explanation"),
    "FileFix": ("semfix.explain.search", "FileFix"),
    "explain_failure": ("semfix.explain.search", "explain"),
    "left_after": ("semfix.explain.search", "left_after"),
    "merged_fixes": ("semfix.explain.search", "merged_fixes"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'semfix.api' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def check_incremental(
    previous: Checked | None, source: str, settings: Settings
) -> tuple[FixResult[str], Checked | None]:
    """`fix_source(source, settings=settings, apply_fixes=False)`, from the state of the check
    before (None at first): after an edit within one top-level function, only what it can
    change is analysed again (semfix/engine/incremental.py), as an editor checks on every
    keystroke. Returns the result and the state to pass to the next check."""
    if not may_fire(source, settings) or skims_clean(source, settings):
        return FixResult(source, (), "utf-8", parsed=False), None
    from semfix.engine import incremental  # the server's alone: a command line run never loads it

    findings, state = incremental.check(previous, source, settings)
    return FixResult(source, findings, "utf-8"), state


def fix_finding(
    source: str, finding: Finding, settings: Settings | None = None, *, found: Sequence[Finding] | None = None
) -> FixResult[str]:
    """`fix_source` making only `finding`'s fix, through the same run and proof, as `explain`
    makes its chosen fixes (`Settings.chosen`). A fix is a decision's: a carried read's is made
    only with its assignment's removal and its other uses, so every finding whose `Fix` has the
    same edits is chosen with it. An unsafe fix is made too: asking for this one fix by name is
    the opt-in (an editor's quick fix marked unsafe). `found`, the findings of a check of this
    very source under `settings` (an editor's last analysis), spares checking it again, where
    they hold the fix's edits (a safe fix, or unsafe fixes on: an unsafe fix's edits are made
    only when unsafe fixes are)."""
    settings = settings or build_settings()
    unsafe = settings.unsafe_fixes or finding.safety == "unsafe"
    if found is None or unsafe != settings.unsafe_fixes:
        found = fix_source(source, settings=replace(settings, unsafe_fixes=unsafe), apply_fixes=False).findings
    settings = replace(settings, unsafe_fixes=unsafe)
    mine = [f for f in found if (f.rule, _place(f)) == (finding.rule, _place(finding)) and f.fix is not None]
    if not mine:  # under unsafe fixes, another fix may hold it: `sems[1][...]`'s holds `sems[1]`'s
        holding = (f for f in found if f.fix is not None and _holds(f, finding))
        mine = sorted(holding, key=lambda f: (-f.line, -f.column, f.end_line, f.end_column))[:1]  # the innermost
    edits = mine[0].fix.edits if mine and mine[0].fix else ()
    chosen = {_place(f) for f in found if edits and f.fix is not None and f.fix.edits == edits}
    return fix_source(source, settings=replace(settings, chosen=frozenset({_place(finding), *chosen})))


def _holds(outer: Finding, inner: Finding) -> bool:
    """Does `outer`'s span hold `inner`'s, in the same cell?"""
    place = _place(outer)
    return outer.cell == inner.cell and place[:2] <= _place(inner)[:2] and _place(inner)[2:] <= place[2:]


def _place(finding: Finding) -> tuple[int, int, int, int]:
    return finding.line, finding.column, finding.end_line, finding.end_column


def imported_by_run(
    sources: Mapping[Path, bytes],
    wanted: Collection[Path] | None = None,
    named: Mapping[Path, tuple[str, bool]] | None = None,
) -> dict[Path, frozenset[str]]:
    """For each file of a run (`sources`: every file's bytes), or of those `wanted` among them,
    the names the run's other modules import from it (`Settings.imported_by_run`), where they
    import any; the CLI's run and the server's (the project, its open documents over it) alike.
    `named`: `module_names(sources)`, where the caller has it already."""
    from semfix.analysis.run_imports import names_imported  # the run's questions, asked of a few runs

    named = named if named is not None else module_names(sources)
    answered = None if wanted is None else {named[path][0] for path in wanted}
    imported = names_imported(((name, package, sources[path]) for path, (name, package) in named.items()), answered)
    return {
        path: imported[name]
        for path, (name, _) in named.items()
        if name in imported and (wanted is None or path in wanted)
    }


def read_through_run(
    sources: Mapping[Path, bytes],
    wanted: Collection[Path],
    named: Mapping[Path, tuple[str, bool]] | None = None,
) -> dict[Path, ReadThrough]:
    """For each file `wanted` of a run (`sources`: every file's bytes), the JAX names it reads
    through the run's other modules and what its star imports of them bind, where it has either
    (`Settings.read_through`). `named`: as `imported_by_run`'s."""
    from semfix.analysis.run_imports import names_read_through

    named = named if named is not None else module_names(sources)
    importers = {named[path][0]: path for path in wanted}
    found = names_read_through(((name, package, sources[path]) for path, (name, package) in named.items()), importers)
    return {importers[name]: through for name, through in found.items()}


def launched_by_run(
    sources: Mapping[Path, bytes],
    wanted: Collection[Path],
    named: Mapping[Path, tuple[str, bool]] | None = None,
    through: Mapping[Path, ReadThrough] | None = None,
) -> dict[Path, tuple[Launch, ...]]:
    """For each file `wanted` of a run (`sources`: every file's bytes), the launches of its
    kernels in the run's other files (`Settings.launched_by_run`), where there are any.
    `named`: as `imported_by_run`'s; `through`: `read_through_run`'s answer, by which a launch
    reads `pltpu` from a compat module."""
    from semfix.analysis.run_launches import launched_by_run as launches_of

    named = named if named is not None else module_names(sources)
    kernels = {named[path][0]: path for path in wanted}
    modules = ((name, package, sources[path], str(path)) for path, (name, package) in named.items())
    read = {named[path][0]: answer for path, answer in (through or {}).items() if path in named}
    return {kernels[name]: launches for name, launches in launches_of(modules, kernels, read).items()}


def may_read_through_run(source: bytes, settings: Settings) -> bool:
    """Whether the file needs `read_through_run`'s answer for the migration: it is on (the
    run's imports are read), and the file imports and spells what an enabled rule looks for.
    The rules on catalog calls ask `reads_through_run` (the file's imports' bytes tell)."""
    return (
        drops_imports(settings)
        and b"import" in source
        and any(GATES[code].spelled_in(source) for code in settings.enabled)
    )


def reads_through_run(
    sources: Mapping[Path, bytes],
    wanted: Collection[Path],
    named: Mapping[Path, tuple[str, bool]] | None = None,
) -> set[Path]:
    """Of the files `wanted` of a run, those that may read `pl`, `pltpu` or a catalog function,
    or call a helper, through another module (`from ._compat import pl, pltpu`, `from .dma
    import fetch`: issue 43): they need `read_through_run`'s answer. `named`: as `imported_by_run`'s."""
    from semfix.analysis.run_imports import readers

    named = named if named is not None else module_names(sources)
    paths = {named[path][0]: path for path in wanted}
    chosen = readers(((name, package, sources[path]) for path, (name, package) in named.items()), paths)
    return {paths[name] for name in chosen}


def may_drop_imports(path: Path, source: bytes, settings: Settings) -> bool:
    """Whether a fix of this file may drop an import that another module of the run imports:
    an enabled rule that drops imports has its text gate spelled here, and the file is not a
    package's `__init__` (whose module-level imports stay for its importers anyway:
    `Request.exported`). Only such a file needs `imported_by_run`'s answer."""
    if path.name == "__init__.py":
        return False
    return any(GATES[code].drops_imports and GATES[code].spelled_in(source) for code in settings.enabled)


def drops_imports(settings: Settings) -> bool:
    """Whether an enabled rule's fix may drop an import: the CLI then reads which names the
    modules of a run import from each other (`names_imported`) for `Settings.imported_by_run`."""
    return any(GATES[code].drops_imports for code in settings.enabled)


def catalog_rules(settings: Settings) -> bool:
    """Whether a rule on catalog calls runs (one without a text gate): what the run's other
    modules give a file (`reads_through_run`, `launched_by_run`) is read only then."""
    return any(not GATES[code].text_gate for code in settings.enabled)
