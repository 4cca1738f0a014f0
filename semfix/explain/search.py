"""`semfix explain`: from a JAX traceback to the argument that caused it, and its fix.

This module reads what the error says and finds the file (or the notebook's cell) it points
into, through semfix/files.py, as the CLI and the server read theirs; which arguments are to
blame and which fixes to make is blame.py's. The fixes are made and the file checked again the
way `semfix.api.fix_source` does (semfix/engine/fix.py), so nothing here needs the API.

A log is untrusted text (a CI log of someone else's pull request): only files under `--root`
are read for a fix or written. Reading the log is logs.py's.
"""

from __future__ import annotations

import ast
import functools
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from semfix.analysis.run_imports import names_read_through
from semfix.analysis.run_launches import launched_by_run
from semfix.engine.fix import fix_notebook, fix_source
from semfix.errors import SafetyError, SourceError
from semfix.explain.blame import LISTING, Blame, Through, blame, migrate, proven_next, said_fix, settings_for
from semfix.explain.errors import JaxError, read_shape, recognise, recognise_start, said, values_shown
from semfix.explain.logs import Failure, Frame
from semfix.explain.relocate import find_line
from semfix.files import EXCLUDED_DIRS, Excludes, FileError, module_names, read_source
from semfix.findings import Finding
from semfix.messages import plural
from semfix.notebook import Joined, join_cells
from semfix.selection import build_settings, load_settings
from semfix.settings import Launch, ReadThrough, Settings, SettingsError, find_pyproject, for_file, load_excludes

#: Folders pip installs packages into: a frame there is never matched to the checkout by name.
_INSTALLED = {"site-packages", "dist-packages"}
#: How many folders the search for a traceback's file visits before it gives up (see `locate`).
SEARCH_LIMIT = 10_000


@dataclass
class Explanation:
    """What one traceback says, where it points, and the fix (if semfix can make one)."""

    failure: Failure
    kind: str | None = None
    lines: list[str] = field(default_factory=list)
    path: Path | None = None
    name: Path | None = None  # the file relative to --root: for messages and diff headers
    old: bytes = b""
    blame: Blame = field(default_factory=Blame)  # the lines after the first two, the fixes
    notebook: bool = False  # `path` is a notebook: the fixes are at lines of its cells joined


def locate(path: str, root: Path) -> tuple[list[Path], bool, bool]:
    """The files on this machine `path` may name, whether the search stopped early, and whether
    they match only by the file's name.

    The path itself (relative ones under `root`), else the files under `root` with the longest
    matching path suffix: one, several equally good, or none. The search visits at most
    SEARCH_LIMIT folders, so that a log pasted at `/` does not walk the whole machine. The
    caller checks the file is under `root`.
    """
    direct = root / path
    if direct.is_file():
        return [direct], False, False
    wanted = Path(path.replace("\\", "/")).parts
    best: list[Path] = []
    best_score = 0
    for folder, files in _walk(root):
        if folder is None:
            return best, True, best_score == 1 < len(wanted)
        if wanted[-1] not in files:
            continue
        candidate = Path(folder, wanted[-1])
        parts = candidate.resolve().parts
        score = 0
        while score < min(len(parts), len(wanted)) and parts[-1 - score] == wanted[-1 - score]:
            score += 1
        if score > best_score:
            best, best_score = [candidate], score
        elif score == best_score:
            best.append(candidate)
    return best, False, best_score == 1 < len(wanted)


def _walk(root: Path) -> Iterator[tuple[str | None, list[str]]]:
    """(folder, its files) under `root`, skipping what `_skipped` skips; (None, []) when the
    search has visited SEARCH_LIMIT folders and stops."""
    for visited, (folder, dirs, files) in enumerate(os.walk(root)):
        if visited == SEARCH_LIMIT:
            yield None, []
            return
        dirs[:] = [d for d in dirs if not _skipped(folder, d)]
        yield folder, files


def _skipped(folder: str, name: str) -> bool:
    """Folders a traceback of the user's own code does not point into: tools' caches, hidden
    folders, installed packages, virtual environments (whatever their name), and the kernel's."""
    full = os.path.join(folder, name)
    return (
        name in EXCLUDED_DIRS
        or name in ("build", "dist-packages")
        or name.startswith(".")
        or full in ("/proc", "/sys", "/dev")
        or os.path.isfile(os.path.join(full, "pyvenv.cfg"))
    )


def _not_found(frame: Frame, root: Path, found: list[Path], stopped: bool) -> str | None:
    """Why the frame's file cannot be chosen, if it cannot: none, several, or a search cut short."""
    names = ", ".join(sorted(os.path.relpath(p, root) for p in found))
    if stopped:
        so_far = f" (the best so far: {names})" if found else ""
        return (
            f"Cannot say where {frame.path} is: the search stopped early, after {SEARCH_LIMIT} folders"
            f" under {os.path.abspath(root)}{so_far}; pass --root closer to the code."
        )
    if len(found) > 1:
        return f"{frame.path} is ambiguous: {names} match its path equally well; pass --root to choose."
    if not found:
        return f"Cannot find {frame.path} here (looked under {root}, by the longest matching path suffix)."
    return None


def explain(failure: Failure, root: Path) -> Explanation:
    result = Explanation(failure)
    if failure.cut:
        return _explain_cut(result)
    recognised = recognise(failure.message)
    if recognised is None:
        return result
    known, match = recognised
    result.kind = known.key
    result.lines.append(said(known, match))
    known = _narrowed(known, failure, result)
    frame = next((f for f in reversed(failure.frames) if not f.in_jax), None)
    if frame is None:
        result.lines.append(
            "pytest --tb=line prints only the line that raised it, in JAX's own files: run pytest with --tb=short"
            " (or without --tb) and paste that."
            if failure.tb_line
            else "No frame outside JAX's own files: run with JAX_TRACEBACK_FILTERING=off and try again."
            if failure.frames
            else "The text holds JAX's error but no frame of the code that raised it: paste the whole traceback."
        )
        return result
    callers = [f for f in reversed(failure.frames[: failure.frames.index(frame)]) if not f.in_jax]
    verb, through = "raised from", None
    while True:
        installed = _installed(frame, root)
        outer = failure.frames[failure.frames.index(frame) - 1] if failure.frames.index(frame) else None
        traced = outer is not None and outer.jax  # a kernel: JAX called it, with the Refs it allocated
        if installed and callers and outer is callers[0]:  # called from the checkout: blamed, through what it passed on
            result.lines.append(f"{installed}: its caller is blamed.")
            through = _passed_by_package(frame, known, through)
        else:
            if frame.cell:  # a notebook's helper cell passes on to the cell that called it
                _explain_cell(result, frame, root, known, read_shape(match), verb, through, traced)
            else:
                run = _run_of(frame, failure, root)
                _explain_frame(result, frame, root, known, read_shape(match), verb, through, traced, run)
            through = result.blame.passed_on  # a helper passed on what its caller gave it
            if through is None:
                return result
        if not callers:
            return result
        frame, verb = callers.pop(0), "called at"
        result.blame = Blame()


def _narrowed(known: JaxError, failure: Failure, result: Explanation) -> JaxError:
    """The error, about the DMA operands that pytest's long traceback shows JAX's check got a
    value for (its frame's `args`): direct evidence, where the message names several."""
    shown = next((f.shown for f in reversed(failure.frames) if {"tree", "args"} <= set(f.shown)), None)
    swapped = any(f.function == "wait_send" for f in failure.frames)
    values = (values_shown(shown, swapped) or frozenset()) & (known.suspects or frozenset()) if shown else None
    if not values:
        return known
    result.lines.append(
        f"pytest prints the operands JAX checked: {' and '.join(sorted(values))} got a value; the others, Refs."
    )
    return replace(known, suspects=values)


def _explain_cut(result: Explanation) -> Explanation:
    """pytest's summary line alone: JAX's message cut short, and no frame. It is known by how it
    begins, and nothing can be fixed until the traceback is pasted (exit 1, never "no error")."""
    candidates = recognise_start(result.failure.message.removesuffix("..."))
    if candidates:
        result.kind = candidates[0][0].key
        begins = " or ".join(f"`{words}`" for _, words in candidates)
        result.lines += [
            f"pytest's summary line cuts the message short: it begins as JAX's {begins}.",
            "It names no frame of the code that raised it: paste the whole traceback (pytest prints it with"
            " --tb=auto, its default, long or short; not with --tb=no or --tb=line).",
        ]
    return result


def _passed_by_package(frame: Frame, known: JaxError, through: Through | None) -> Through:
    """What an installed package's function at `frame` passed on, read from its file where that
    is on this machine (never written); else as far as the log shows it (`_passed_by_log`)."""
    unknown = Through(frame.function.rsplit(".", 1)[-1], None)
    path = Path(frame.path)
    if path.suffix != ".py" or not path.is_file():
        return _passed_by_log(frame, known, through) or unknown
    try:
        source = read_source(path)
        line, _ = find_line(source, frame.line, frame.source or "", frame.function)
        passed = blame(source, line, known.suspects, through=through, viewed=known.viewed).passed_on if line else None
    except (SourceError, FileError):
        return unknown
    return passed or unknown


#: How a helper's source in a log is read where the log prints no import: JAX's documented aliases.
_ALIASES = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"


def _passed_by_log(frame: Frame, known: JaxError, through: Through | None) -> Through | None:
    """What an installed helper whose source is not on this machine passed on, as far as the log
    prints it: pytest's long listing of it (from its def, so each parameter's position; a
    method's `self` makes the positions unknown), else the line it raised at, whose names are
    taken for keyword-only parameters (only a caller's keyword maps one). None: nothing shown."""
    name = frame.function.rsplit(".", 1)[-1]
    if frame.listing:
        (body, line), seen = frame.listing, LISTING
    elif frame.source:
        try:
            names = sorted(
                {n.id for n in ast.walk(ast.parse(frame.source)) if isinstance(n, ast.Name)} - {"pl", "pltpu"}
            )
        except SyntaxError:  # a line of a statement printed alone (`copy = make_async_copy(`)
            return None
        body, line, seen = f"def {name}(*, {', '.join(names)}):\n    {frame.source}\n", 2, "only its line"
        if not names:
            return None
    else:
        return None
    try:
        passed = blame(
            (_ALIASES + body).encode(), line + 2, known.suspects, through=through, viewed=known.viewed
        ).passed_on
    except SourceError:
        return None
    if passed is None or passed.function != name:
        return None
    method = re.match(rf"(?:async\s+)?def\s+{name}\s*\(\s*(?:self|cls)\b", body, re.MULTILINE)
    return replace(
        passed, params=tuple((p, None) for p, _ in passed.params or ()) if method else passed.params, seen=seen
    )


def _explain_frame(
    result: Explanation,
    frame: Frame,
    root: Path,
    known: JaxError,
    shape: str | None,
    verb: str,
    through: Through | None,
    traced: bool = False,
    run: tuple[tuple[Launch, ...], ReadThrough] = ((), ReadThrough()),
) -> None:
    """Blame the line of one frame of the traceback, in the file here it names (`through`:
    it calls the function of the frame after, which passed on what it was given; `run`: what
    the modules beside it and the traceback's give it, `_run_of`)."""
    found, problem = _the_file(frame, root)
    if problem:
        result.lines.append(problem)
        return
    real, top = Path(os.path.realpath(found)), Path(os.path.realpath(root))
    if not real.is_relative_to(top):
        result.lines.append(f"{frame.path} is outside --root, not touched (--root is {root}).")
        return
    result.path, result.name = real, real.relative_to(top)
    try:
        result.old = read_source(real)
        line = _confirmed(result, frame, result.old)
        if line is not None:
            result.lines.append(f"It was {verb} {result.name}:{line}, in {frame.function}.")
            settings, refused = _project(real, known.rules if known.migration else ())
            result.blame = (
                migrate(result.old, line, known.rules, settings or build_settings())
                if known.migration
                else blame(
                    result.old,
                    line,
                    known.suspects,
                    wrong_kind=known.wrong_kind,
                    shape=shape,
                    through=through,
                    enabled=settings.enabled if settings else None,
                    traced=traced,
                    viewed=known.viewed,
                    run=run,
                )
            )
            result.blame = _unless(refused, result.blame)
    except (SourceError, FileError) as error:
        result.lines.append(f"Cannot fix it: {error}")
    result.lines += result.blame.lines


def _run_of(frame: Frame, failure: Failure, root: Path) -> tuple[tuple[Launch, ...], ReadThrough]:
    """What a run of the frame's module, the modules beside it and those the traceback names
    gives it: the launches of its kernels in the others (JAX traces a kernel inside its
    `pallas_call`, so the launching module is a frame of the traceback too: `kern/api.py`
    launching `kern/ops.py`'s kernel; a module beside them reaching the kernel another way
    proves nothing, `run_launches`), and what it reads through them (`pl`, `pltpu` from a compat
    module), as `semfix fix` of those files reads them."""
    path, problem = _the_file(frame, root)
    if problem or not path.is_file():
        return (), ReadThrough()
    path = Path(os.path.realpath(path))
    files = {path, *(p for p in path.parent.glob("*.py") if p.is_file())}
    for other in failure.frames:
        if other is not frame and not other.in_jax and not other.cell and other.path.endswith(".py"):
            found, problem = _the_file(other, root)
            if problem is None and found.is_file():
                files.add(Path(os.path.realpath(found)))
    sources = {}
    for file in files:
        try:
            sources[file] = read_source(file)
        except FileError:
            continue
    named = module_names(sources)
    if path not in named:
        return (), ReadThrough()
    read = names_read_through(
        ((name, package, sources[file]) for file, (name, package) in named.items()),
        {name for name, _ in named.values()},
    )
    modules = ((name, package, sources[file], str(file)) for file, (name, package) in named.items())
    name = named[path][0]
    return launched_by_run(modules, [name], read).get(name, ()), read.get(name, ReadThrough())


def _project(path: Path, rules: Iterable[str] = ()) -> tuple[Settings | None, str | None]:
    """The project's settings for the file, as `fix` reads them (`select`, `ignore`,
    `per-file-ignores`, the JAX floor), and why explain must not write it, if it must not: its
    `extend-exclude` covers it (a file a log names is written only where `semfix fix .` would
    write it), or the settings cannot be read. `rules` are run too (a migration's: its floor is read)."""
    try:
        pyproject = find_pyproject([path])
        loaded = load_settings(pyproject)
        settings = for_file(replace(loaded, enabled=loaded.enabled | set(rules)), path)
        excluded = Excludes(load_excludes(pyproject), pyproject.parent if pyproject else Path())(path)
    except SettingsError as error:
        return None, f"the project's settings cannot be read ({error})"
    return settings, f"{pyproject} excludes the file (extend-exclude)" if excluded else None


def _unless(refused: str | None, blame: Blame) -> Blame:
    """The blame, its fixes dropped and why said, where the project's settings refuse the file."""
    if not (refused and blame.chosen):
        return blame
    return replace(blame, chosen=[], fixed=False, lines=[*blame.lines, f"Not fixed: {refused}."])


def _the_file(frame: Frame, root: Path) -> tuple[Path, str | None]:
    """The one file here the frame's path names, or why there is none.

    A file of an installed package is the checkout's only when it is installed from it: its
    path, links followed, leads out of the installed packages and under --root (a package linked
    in from the checkout; an editable install's frames name the checkout's files themselves).
    A copy installed into a virtual environment under --root is not the checkout's. Never by a
    matching name. A match by the file's name alone needs the printed source to confirm it.
    """
    if installed := _installed(frame, root):
        return Path(frame.path), (
            f"{installed}. Fix the package's own source, or install it from this checkout (`pip install -e .`),"
            " run again, and explain the new traceback."
        )
    if _INSTALLED & set(Path(frame.path.replace("\\", "/")).parts):
        return Path(frame.path), None  # installed from the checkout
    found, stopped, name_only = locate(frame.path, root)
    problem = _not_found(frame, root, found, stopped)
    if problem is None and name_only and frame.source is None:
        problem = (
            f"{frame.path} matches {os.path.relpath(found[0], root)} here only by the file's name, and the"
            " traceback prints no source line to confirm it is that file; pass --root closer to the code."
        )
    return (found[0] if found else Path(frame.path)), problem


def _installed(frame: Frame, root: Path) -> str | None:
    """Why the frame's file is an installed package's and not the checkout's, if it is: its path,
    links followed, stays among the installed packages or leads out of --root."""
    if not _INSTALLED & set(Path(frame.path.replace("\\", "/")).parts):
        return None
    here = Path(frame.path)
    real = Path(os.path.realpath(here))
    if here.is_file() and real.is_relative_to(os.path.realpath(root)) and not _INSTALLED & set(real.parts):
        return None
    return (
        f"{frame.path} is in an installed package, not in this checkout (--root is {root}): semfix does not"
        " match it to a file here by name"
    )


def _confirmed(result: Explanation, frame: Frame, source: bytes) -> int | None:
    """The line of `source` the frame means: its line number where the printed source is still
    there, else the one line that holds it (the file changed since the run), else None (said why)."""
    if frame.source is None:  # a log without source lines (the file was not there at the run)
        result.lines.append(f"The traceback prints no source line for it: line {frame.line} is taken as it is.")
        return frame.line
    line, note = find_line(source, frame.line, frame.source, frame.function, str(result.name))
    if note:
        result.lines.append(note)
    return line


def _explain_cell(
    result: Explanation,
    frame: Frame,
    root: Path,
    known: JaxError,
    shape: str | None,
    verb: str,
    through: Through | None,
    traced: bool,
) -> None:
    """An error raised in IPython or a Jupyter notebook (or a call there, `verb` and `through`
    as for a file's frame): `Cell In[2]` counts runs, not cells, so the cell is the one code
    cell of a notebook under --root that holds the lines the traceback prints (the line that
    raised, and those around it)."""
    matches, stopped = _cells_holding(frame, root)
    where = f"line {frame.line} (`{frame.source}`)"
    if stopped or len(matches) != 1:
        cells = ", ".join(f"{name} cell {number}" for _, name, _, _, number, _ in matches)
        result.lines.append(
            f"Cannot find the notebook of {frame.path}: the search stopped after {SEARCH_LIMIT} folders;"
            " pass --root closer to the notebook."
            if stopped
            else f"Cannot tell which notebook cell {frame.path} was: {cells} all hold {where}; fix it by hand."
            if matches
            else f"Cannot find {frame.path} in a notebook under {root}: no code cell holds {where} and the lines"
            " printed around it (a cell typed into IPython, or a notebook changed or not saved since the run)."
        )
        return
    result.path, result.name, result.old, notebook, number, start = matches[0]
    result.notebook = True
    line = start + frame.line - 1
    cell, at = _cell_line(notebook, line).split(", ")
    result.lines.append(f"It was {verb} {result.name}, {cell} ({frame.path}), {at}, in {frame.function}.")
    settings, refused = _project(result.path)
    try:
        result.blame = blame(
            notebook.module.encode("utf-8"),
            line,
            known.suspects,
            where=lambda line: _cell_line(notebook, line),
            wrong_kind=known.wrong_kind,
            shape=shape,
            through=through,
            enabled=settings.enabled if settings else None,
            traced=traced,
            viewed=known.viewed,
        )
        result.blame = _unless(refused, result.blame)
    except SourceError as error:
        result.lines.append(f"Cannot fix it: {error}")
    result.lines += result.blame.lines


_Cell = tuple[Path, Path, bytes, Joined, int, int]


def _cells_holding(frame: Frame, root: Path) -> tuple[list[_Cell], bool]:
    """The code cells of notebooks under --root that hold what the traceback printed of the
    frame: (path, name, bytes, the notebook's cells joined, cell number, its first line there);
    and whether the search stopped early. Files that are not readable notebooks hold none."""
    top = Path(os.path.realpath(root))
    matches: list[_Cell] = []
    for folder, files in _walk(root):
        if folder is None:
            return matches, True
        for name in sorted(f for f in files if f.endswith(".ipynb")):
            path = Path(os.path.realpath(os.path.join(folder, name)))
            if not path.is_relative_to(top):
                continue  # a link out of --root: never read for a fix
            try:
                data = read_source(path)
                notebook = join_cells(data)
            except (SourceError, FileError):
                continue
            if notebook is not None:
                for number, start, lines in notebook.cells_by_number():
                    blank = len(lines) - len(list(itertools.dropwhile(lambda text: not text.strip(), lines)))
                    # IPython runs a cell without its leading blank lines, and counts from there
                    skip = next((skip for skip in dict.fromkeys((0, blank)) if _holds(lines[skip:], frame)), None)
                    if skip is not None:
                        matches.append((path, path.relative_to(top), data, notebook, number, start + skip))
    return matches, False


def _holds(lines: list[str], frame: Frame) -> bool:
    """Does a cell hold what the traceback printed of it: the line that raised, and its context?"""
    printed = {frame.line: frame.source or "", **frame.context}
    return all(1 <= number <= len(lines) and lines[number - 1].strip() == text for number, text in printed.items())


def _cell_line(notebook: Joined, line: int) -> str:
    """A line of the joined module as the user counts it: the cell, and the line within it."""
    number, start, _ = max((cell for cell in notebook.cells_by_number() if cell[1] <= line), key=lambda c: c[1])
    return f"cell {number}, line {line - start + 1}"


@dataclass
class FileFix:
    """The fixes of every traceback that points into one file, made by the engine: the new
    bytes, or why they cannot be written (`error`)."""

    path: Path
    name: Path
    old: bytes
    new: bytes = b""
    error: str | None = None
    notebook: bool = False
    then: list[str] = field(default_factory=list)  # the fixes the file proves once the log's are written, said


def merged_fixes(explanations: list[Explanation]) -> list[FileFix]:
    """One rewrite per file, however many tracebacks point into it, proven as `fix` proves its own."""
    by_path: dict[Path, list[Explanation]] = {}
    for item in explanations:
        if item.blame.chosen and item.path is not None:
            by_path.setdefault(item.path, []).append(item)
    merged = []
    for path, items in by_path.items():
        first = items[0]
        findings = {(f.line, f.column, f.end_line, f.end_column): f for item in items for f in item.blame.chosen}
        fix = FileFix(path, first.name or path, first.old, notebook=first.notebook)
        settings = settings_for(findings.values(), next((i.blame.settings for i in items if i.blame.settings), None))
        try:
            fix.new = (
                fix_notebook(first.old, settings, True) if first.notebook else fix_source(first.old, settings=settings)
            ).source
            _then(fix, list(findings.values()))
        except (SourceError, SafetyError) as error:
            fix.error = f"the rewrite fails semfix's checks ({error}); nothing written"
        merged.append(fix)
    return merged


def _then(fix: FileFix, chosen: list[Finding]) -> None:
    """The engine's safe fixes the file proves once the log's are written (`proven_next`), made
    too, each said: a kernel that signals and then waits on `sems[slot]` fails at the wait
    next, and `sems.at[slot]` at the signal proves the wait's fix. Until nothing more is proven.
    A notebook's cells are read joined, as its fixes were found, and each fix said at its cell's line."""
    settings, refused = _project(fix.path)
    for _ in range(3) if refused is None else ():
        notebook = join_cells(fix.new) if fix.notebook else None
        text = notebook.module.encode("utf-8") if notebook else fix.new
        found = proven_next(text, chosen, settings.enabled if settings else None)
        if not found:
            return
        made = settings_for(found)
        fix.new = (fix_notebook(fix.new, made, True) if notebook else fix_source(fix.new, settings=made)).source
        where = functools.partial(_cell_line, notebook) if notebook else "line {}".format
        fix.then += [f"Once that is written, {fix.name} proves the same fix of the same Ref elsewhere:"]
        fix.then += [f"  {said_fix(finding, where)}" for finding in found]
        chosen = found


def left_after(fix: FileFix) -> list[str]:
    """What `semfix check` (under the file's settings) still finds in the file once explain's
    fixes are made, and the commands that fix what they can: the next run would fail on it."""
    try:
        settings = replace(for_file(load_settings(find_pyproject([fix.path])), fix.path), unsafe_fixes=True)
    except SettingsError:
        settings = build_settings(unsafe_fixes=True)
    try:
        found = (
            fix_notebook(fix.new, settings, False)
            if fix.notebook
            else fix_source(fix.new, settings=settings, apply_fixes=False)
        ).findings
    except (SourceError, SafetyError):
        return []
    if not found:
        return []
    rel = os.path.relpath(fix.path, os.path.realpath(os.getcwd()))
    path = str(fix.path) if rel.startswith("..") else rel
    where = [f"line {f.line}" if f.cell is None else f"cell {f.cell}, line {f.line}" for f in found]
    safe = sum(f.fixable and f.safety == "safe" for f in found)
    unsafe = sum(f.fixable and f.safety == "unsafe" for f in found)
    commands = [f"`semfix fix {path}` fixes {safe}"] if safe else []
    more = " more" if safe else ""
    commands += [f"`semfix fix --unsafe-fixes {path}` fixes {unsafe}{more} (unsafe: read each first)"] if unsafe else []
    commands += [f"{len(found) - safe - unsafe} to fix by hand"] if len(found) > safe + unsafe else []
    return [
        f"`semfix check` still finds {plural(len(found), 'problem')} in {fix.name}; a later run may fail on them:",
        *(f"  {at}: {f.rule} {f.message}" for at, f in zip(where, found)),
        "; ".join(commands) + ".",
    ]
