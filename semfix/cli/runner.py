"""One run over files: discover, read, scan, fix in memory (in parallel), then write.

This is the layer between the CLI (which knows nothing of libcst) and the API (which knows
nothing of files). Output order never depends on the number of workers.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from semfix.api import (
    FixResult,
    catalog_rules,
    fix_notebook,
    fix_source,
    imported_by_run,
    launched_by_run,
    may_drop_imports,
    may_fire,
    may_read_through_run,
    read_through_run,
    reads_through_run,
    skims_clean,
)
from semfix.cache import Cache, Entry
from semfix.catalog import may_contain_calls
from semfix.cli.projects import Projects
from semfix.errors import SafetyError, SourceError
from semfix.files import FileError, discover, ignored_by_git, module_names, read_source, write_atomic
from semfix.findings import Finding
from semfix.git import UNSTAGED, UNTRACKED, dirty
from semfix.settings import ReadThrough, Settings, SettingsError, for_file

if TYPE_CHECKING:
    from semfix.cli.progress import ProgressBar

EXIT_CLEAN, EXIT_FOUND, EXIT_ERROR = 0, 1, 2
#: Seconds the pool itself costs to start and stop, its workers' forks apart (importing
#: multiprocessing and concurrent.futures, its threads and queues): 30 to 45 ms on a 2-core
#: Linux machine, about 75 ms on a sandboxed 13-core one, where each worker then costs a fork
#: more (2 ms and 15 ms). Counted in forks, as it was, a pool never paid where a fork is slow
#: (20 forks of 28 ms: 0.56 s).
_POOL_START = 0.08
#: The share of the time left a pool must end within: the rate is estimated from a few files,
#: and other work on the machine slows the workers too (on 2 loaded cores, a pool estimated at
#: 0.85 of the time lost to one process: benchmarks/startup.py --real).
_PAYS = 0.75
_SPAWN = 0.3  # a spawned worker's start: Python and the analysis's imports
_WRITERS = 8  # threads writing files: each mostly waits for the disk
_PROGRESS_FROM = 200  # files to parse before a progress bar is worth drawing


class FileOutcome:
    __slots__ = ("path", "findings", "old", "new", "error", "parsed", "given", "skipped")

    def __init__(
        self,
        path: Path,
        findings: tuple[Finding, ...] = (),
        old: bytes = b"",
        new: bytes = b"",
        error: str | None = None,
        parsed: bool = False,
        given: bool = False,  # the error is about a path as given (missing, no Python files), not a file
        skipped: bool = False,  # not a file to read (a device, a link leaving the project): a warning
    ) -> None:
        self.path, self.findings, self.old, self.new, self.error = path, findings, old, new, error
        self.parsed, self.given, self.skipped = parsed, given, skipped

    @property
    def changed(self) -> bool:
        return self.error is None and self.new != self.old


class RunOutcome:
    __slots__ = ("files", "scanned", "seconds", "written", "notes")

    def __init__(self, files: list[FileOutcome] | None = None, scanned: int = 0, written: bool = False) -> None:
        self.files = [] if files is None else files
        self.scanned, self.seconds, self.written = scanned, 0.0, written
        #: What the run says once, whatever the files: a floor declaration it cannot read.
        self.notes: list[str] = []

    @property
    def errors(self) -> list[FileOutcome]:
        return [f for f in self.files if f.error is not None and not (f.given and self.scanned or f.skipped)]

    @property
    def warnings(self) -> list[FileOutcome]:
        """Paths as given that were missing or empty, while something else was checked: as in
        ruff, a warning that does not fail the run (with nothing checked at all they are
        errors); and the files skipped, each with why."""
        return [f for f in self.files if f.error is not None and (f.given and self.scanned or f.skipped)]

    @property
    def parsed(self) -> int:
        return sum(1 for f in self.files if f.parsed)

    @property
    def findings(self) -> list[tuple[Path, Finding]]:
        """By path, then place (`analyse` orders each file's), as ruff prints them."""
        files = sorted(self.files, key=lambda f: f.path.as_posix())
        return [(f.path, finding) for f in files for finding in f.findings]

    @property
    def exit_code(self) -> int:
        return EXIT_ERROR if self.errors else EXIT_FOUND if self.findings else EXIT_CLEAN

    def fix_exit_code(self, *, non_zero_on_fix: bool) -> int:
        """`fix`'s status, as ruff's and black's: a fix written with nothing left is a success
        (0), unless `non_zero_on_fix` (pre-commit's hook), where a changed file is 1. A dry run
        fails on what it would fix, since nothing was fixed."""
        if self.errors or not self.written:
            return self.exit_code
        left = any(not finding.applied for _, finding in self.findings)
        changed = non_zero_on_fix and any(f.changed for f in self.files)
        return EXIT_FOUND if left or changed else EXIT_CLEAN


class _Task(NamedTuple):
    path: Path
    data: bytes
    settings: Settings
    apply_fixes: bool


def _analysis(task: _Task) -> FixResult[bytes]:
    if task.path.suffix == ".ipynb":
        return fix_notebook(task.data, task.settings, task.apply_fixes)
    settings = replace(task.settings, package_init=True) if task.path.name == "__init__.py" else task.settings
    return fix_source(task.data, settings=settings, apply_fixes=task.apply_fixes)


def _place(finding: Finding) -> tuple[int, int, int, str]:
    """Where a finding starts: the rules report in the order they run, not in the file's."""
    return (finding.cell or 0, finding.line, finding.column, finding.rule)


def analyse(task: _Task) -> FileOutcome:
    """Fix one file's bytes in memory; never raises (a failure is this file's error). The skim
    (in `fix_source`) clears most files unparsed: in the workers, where there are any, since it
    reads every byte of the file (it was a tenth of a run, serial, in the main process, and
    the file it did not clear was skimmed there again)."""
    outcome = FileOutcome(task.path, old=task.data, new=task.data, parsed=True)  # bytes dropped below
    try:
        result = _analysis(task)
        outcome.findings, outcome.new = tuple(sorted(result.findings, key=_place)), result.source
        outcome.parsed = result.parsed
    except SourceError as error:
        outcome.error = str(error)
    except SafetyError as error:
        outcome.error = f"internal error, file left unchanged: {error}"
        if task.apply_fixes:  # the rewrite failed its checks, not the findings: report them
            with suppress(Exception):  # a report-only pass writes nothing, so it has nothing to prove
                outcome.findings = tuple(sorted(_analysis(task._replace(apply_fixes=False)).findings, key=_place))
    except RecursionError:
        outcome.error = "too deeply nested to analyse"
    except Exception as error:  # noqa: BLE001 - a bug in semfix must not stop the other files
        outcome.error = f"internal error, file left unchanged: {type(error).__name__}: {error}"
    if outcome.error is not None or outcome.new == outcome.old:
        outcome.old = outcome.new = b""  # only a changed file's bytes are needed (diff, write)
    return outcome


def _analyse_all(
    tasks: Sequence[_Task],
    jobs: int | None,
    progress: bool,
    cache: Cache | None = None,
    keys: Sequence[str | None] | None = None,
) -> Iterator[FileOutcome]:
    """Results in task order, the same whatever the workers. The cache gives what an earlier run
    found in the same bytes under the same settings; what is left to analyse (the skim first,
    `analyse`) goes to `jobs` worker processes where given, else is
    analysed here, one file after another, until the rest, at the rate so far (by bytes), would
    end sooner spread over workers, their start included (`_workers`). Most runs (a pre-commit
    run, one file) never start one, nor load its modules (multiprocessing, concurrent.futures)."""
    bar: ProgressBar | None = None
    if progress and len(tasks) >= _PROGRESS_FROM:
        from semfix.cli.progress import ProgressBar

        bar = ProgressBar(len(tasks), sys.stderr)
        bar.__enter__()
    keys = keys if keys is not None else [_key(task, cache) for task in tasks]
    kept = [None if key is None or cache is None else cache.get(key, task.data) for task, key in zip(tasks, keys)]
    analysed = _analysed([task for task, entry in zip(tasks, kept) if entry is None], jobs)
    try:
        for task, key, entry in zip(tasks, keys, kept):
            if entry is not None:
                result = _from_cache(task, entry)
            else:
                result = next(analysed)
                if cache is not None and key is not None and result.error is None:
                    new = result.new if result.changed else task.data
                    cache.put(key, task.data, Entry(result.findings, new, result.parsed))
            if bar is not None:
                bar.update(1)
            yield result
    finally:
        analysed.close()  # a pool left behind (an interrupt) is shut down
        if bar is not None:
            bar.__exit__(None, None, None)


def _key(task: _Task, cache: Cache | None) -> str | None:
    return None if cache is None else cache.key(task.path, task.data, task.settings, task.apply_fixes)


def _from_cache(task: _Task, entry: Entry) -> FileOutcome:
    """The outcome `analyse` gave these bytes in an earlier run (only a change keeps its bytes)."""
    changed = entry.new != task.data
    old, new = (task.data, entry.new) if changed else (b"", b"")
    return FileOutcome(task.path, entry.findings, old=old, new=new, parsed=entry.parsed)


def _analysed(tasks: Sequence[_Task], jobs: int | None) -> Generator[FileOutcome, None, None]:
    """`analyse` over `tasks`, in order: in `jobs` workers where given, else here until workers
    pay. Given no more files than workers, the skim clears what it can here first: a pool for
    a file or two each buys nothing, and most such files (a pre-commit batch) are cleared."""
    if jobs is not None and jobs > 1 and 1 < len(tasks) <= jobs:
        cleared = [task.path.suffix == ".py" and skims_clean(task.data, task.settings) for task in tasks]
        pending = [task for task, clear in zip(tasks, cleared) if not clear]
        rest = _in_pool(pending, jobs) if len(pending) > 1 else map(analyse, pending)
        yield from (FileOutcome(task.path) if clear else next(rest) for task, clear in zip(tasks, cleared))
        return
    if jobs is not None and jobs > 1 and len(tasks) > 1:
        yield from _in_pool(tasks, jobs)
        return
    done, spent, read, fork = 0, 0.0, 0, 0.0
    while done < len(tasks):
        if jobs is None and read:
            rate, left = spent / read, [len(task.data) for task in tasks[done:]]
            if rate * sum(left) > 2 * _POOL_START:  # else no pool pays, nor a fork's measure
                fork = fork or _fork_cost()
                workers = _workers(rate * sum(left), rate * max(left), len(left), fork)
                if workers:
                    yield from _in_pool(tasks[done:], workers)
                    return
        started = time.perf_counter()
        yield analyse(tasks[done])
        if done:  # the first file also loads what the rules import lazily: it sets no rate
            spent += time.perf_counter() - started
            read += len(tasks[done].data)
        done += 1


def _workers(seconds: float, longest: float, files: int, fork: float) -> int:
    """How many workers to start for `seconds` of work left in `files` files, the longest
    `longest`, each worker costing `fork` to start and the pool `_POOL_START`; 0 where none
    pays. Spread over `n`, the work ends after max(seconds / n, longest) plus the starts,
    least near n = sqrt(seconds / fork)."""
    best = min(_cores(), files, int((seconds / fork) ** 0.5) if fork > 0 else files)
    if best < 2:
        return 0
    spread = max(seconds / best, longest) + _POOL_START + best * fork
    return best if spread < _PAYS * seconds else 0


def _cores() -> int:
    """The cores this process may run on (`taskset` limits them below `os.cpu_count()`) that
    the machine's other work leaves idle (its load over the last minute): on 2 cores busy with
    other work, 2 workers lost to one process (benchmarks/startup.py --real)."""
    total = os.cpu_count() or 1
    try:
        mine = len(os.sched_getaffinity(0))
    except AttributeError:  # not on macOS and Windows
        mine = total
    try:
        idle = total - os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average (Windows)
        idle = total
    return max(1, min(mine, round(idle)))


def _fork_cost() -> float:
    """Seconds to fork this process, now that the analysis is imported, and reap the child: what
    a worker costs to start. Where workers are spawned instead (not Linux), each starts Python
    and imports the analysis again: `_SPAWN` seconds."""
    if not sys.platform.startswith("linux"):
        return _SPAWN
    started = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return time.perf_counter() - started


def _worker_start(parent: int) -> None:
    """A worker leaves Ctrl-C to the main process, which stops the run and says so once; and it
    ends when that process does, even killed (SIGKILL runs no clean-up): else it lives on,
    holding the caller's stdout and stderr, and a CI step reading them never ends. On Linux the
    kernel sends it SIGKILL then (PR_SET_PDEATHSIG); elsewhere workers are spawned, and a
    spawned worker ends once its pipe to the parent closes."""
    import signal  # here, with the pool: a check of one file makes none

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by `_in_pool` to fork
    if sys.platform.startswith("linux"):
        import ctypes

        with suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the call above
            os._exit(1)


def _in_pool(tasks: Sequence[_Task], jobs: int) -> Iterator[FileOutcome]:
    """`analyse` over `tasks` in `jobs` worker processes, in order; if a worker dies (a crash
    in a native parser), the files it left are named."""
    import multiprocessing
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    context = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    workers = min(jobs, len(tasks))
    executor = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
    )
    done = 0
    try:
        # The workers are forked while the map is submitted. Ctrl-C between a fork and the
        # worker's `_worker_start` would raise in the child, in Python's own at-fork hooks, and
        # print their traceback: the signal waits, blocked, until every worker ignores it.
        masking = hasattr(signal, "pthread_sigmask")
        if masking:
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            results = executor.map(analyse, tasks, chunksize=max(1, min(16, len(tasks) // (workers * 8))))
        finally:
            if masking:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        for result in results:
            done += 1
            yield result
    except BrokenProcessPool:
        for task in tasks[done:]:
            yield FileOutcome(task.path, error="internal error: the worker analysing this file or a neighbour crashed")
    finally:
        executor.shutdown(cancel_futures=True)


def _may_read_through(data: bytes, settings: Settings) -> bool:
    """May a file the byte scan refuses be analysed for what it reads through the run's other
    modules: `pltpu` from a compat module, with no "pallas" spelled; a helper one defines,
    called where a kernel is launched but no catalog function is spelled (`from .dma import
    fetch`)? Kept until the run says."""
    return (
        b"import" in data
        and (b"pallas_call" in data or may_contain_calls(data, through_run=True))
        and catalog_rules(settings)
    )


def _with_importers(
    slots: list[FileOutcome | _Task], sources: dict[Path, bytes], named: dict[Path, tuple[str, bool]]
) -> list[FileOutcome | _Task]:
    """Each task told the names the run's other modules import from it, so that a fix keeps
    their imports (a sibling's `from .sync import DeviceIdType` must still find the name)."""
    wanted = [
        s.path
        for s in slots
        if isinstance(s, _Task) and s.path in sources and may_drop_imports(s.path, s.data, s.settings)
    ]
    imported = imported_by_run(sources, wanted, named) if wanted else {}
    readers = {  # with the migration on, a call through a sibling's JAX name is a catalog call too
        s.path for s in slots if isinstance(s, _Task) and s.path in sources and may_read_through_run(s.data, s.settings)
    }
    catalog = [s.path for s in slots if isinstance(s, _Task) and s.path in sources and catalog_rules(s.settings)]
    readers |= reads_through_run(sources, catalog, named) if catalog else set()
    through = read_through_run(sources, readers, named) if readers else {}
    kernels = [s.path for s in slots if isinstance(s, _Task) and s.path in sources]  # may define a kernel
    launched = launched_by_run(sources, kernels, named, through) if kernels else {}
    return [
        slot._replace(
            settings=replace(
                slot.settings,
                imported_by_run=imported.get(slot.path, frozenset()),
                read_through=through.get(slot.path, ReadThrough()),
                launched_by_run=launched.get(slot.path, ()),
            ),
        )
        if isinstance(slot, _Task) and (slot.path in imported or slot.path in through or slot.path in launched)
        else slot
        for slot in slots
    ]


def run(
    paths: Iterable[Path],
    *,
    projects: Projects,
    apply_fixes: bool,
    write: bool,
    jobs: int | None = None,
    force_exclude: bool = False,
    allow_dirty: bool = True,
    progress: bool = False,
    cache: Cache | None = None,
) -> RunOutcome:
    """Each file with its own project's settings and excludes (`projects`). `force_exclude`:
    the excludes apply to files named too, whatever the projects say. `jobs`: worker processes
    to start (None: as many as the work pays for, up to the cores). `progress`: draw a
    progress bar on stderr (a terminal) when many files need parsing. `cache`: where results
    are kept between runs (None: every file is analysed)."""
    started = time.perf_counter()
    paths = list(paths)
    forced = (lambda _: True) if force_exclude else projects.forced
    found = discover(paths, projects.excludes, force_exclude=forced)
    outcome = RunOutcome(scanned=len(found.files), written=write)
    outcome.files.extend(FileOutcome(path, error=reason, given=True) for path, reason in found.errors)
    outcome.files.extend(FileOutcome(path, error=reason, skipped=True) for path, reason in found.skipped)
    for folder in paths:
        if (
            folder.is_dir()
            and not any(f == folder or folder in f.parents for f in found.files)
            and not discover([folder]).files  # all excluded: nothing to do, as asked
        ):
            reason = (
                "its Python files are all ignored by git" if ignored_by_git(folder) else "no Python files found here"
            )
            outcome.files.append(FileOutcome(folder, error=reason, given=True))
    settings_of = {path: projects.of(path).settings for path in found.files}
    contents: list[tuple[Path, bytes | FileError]] = []  # each file's bytes, or why they could not be read
    for path in found.files:
        try:
            contents.append((path, read_source(path)))
        except FileError as error:
            contents.append((path, error))
    read = [(path, data, settings_of[path]) for path, data in contents if isinstance(data, bytes)]
    scan_key = None if cache is None else cache.scan_key(read)
    kept_scan = None if cache is None or scan_key is None else cache.get_scan(scan_key, len(read))
    scans: list[bool] = []  # each file read: whether the byte scan keeps it (`may_fire`, `_may_read_through`)
    slots: list[FileOutcome | _Task] = []
    sources: dict[Path, bytes] = {}  # every file's, for what the run's modules give each other
    for path, data in contents:
        if isinstance(data, FileError):
            slots.append(FileOutcome(path, error=str(data)))
            continue
        settings = settings_of[path]
        if path.suffix != ".ipynb":
            sources[path] = data
        binary = b"\0" in data
        if kept_scan is not None:
            scans.append(kept_scan[len(scans)])
        else:
            scans.append(not binary and (may_fire(data, settings) or _may_read_through(data, settings)))
        if binary:
            slots.append(FileOutcome(path, error="contains NUL bytes: a binary file, not Python source"))
        elif scans[-1]:
            try:
                slots.append(_Task(path, data, for_file(settings, path), apply_fixes))
            except SettingsError as error:  # the project's `target-jax` means nothing
                slots.append(FileOutcome(path, error=str(error)))
        else:  # the byte scan proves there is nothing to find: never parsed, nothing kept
            slots.append(FileOutcome(path))
    if cache is not None and scan_key is not None and kept_scan is None:
        cache.put_scan(scan_key, scans)
    named = module_names(sources, found.links) if sources else {}  # asked once, for every question of the run
    asked = [slot for slot in slots if isinstance(slot, _Task)]
    run_key = (
        None
        if cache is None
        else cache.run_key(sources, named, [(t.path, t.data, t.settings) for t in asked], apply_fixes)
    )
    kept = None if cache is None or run_key is None else _kept_run(asked, cache, run_key)
    if kept is not None:  # an unchanged run: its questions' answers and its files' analyses are kept
        outcomes = iter(kept)
        slots = [next(outcomes) or FileOutcome(slot.path) if isinstance(slot, _Task) else slot for slot in slots]
        outcome.notes = sorted({t.settings.target_unread for t, o in zip(asked, kept) if o is not None} - {""})
    elif sources:  # a task kept only for what it may read through the run: cleared where it reads nothing so
        slots = [  # (a run of one module has no other to read through, import from it or launch it)
            s if not isinstance(s, _Task) or may_fire(s.data, s.settings) else FileOutcome(s.path)
            for s in (_with_importers(slots, sources, named) if len(sources) > 1 else slots)
        ]
    tasks = [slot for slot in slots if isinstance(slot, _Task)]
    if kept is None:
        outcome.notes = sorted({task.settings.target_unread for task in tasks} - {""})
    keys = [_key(task, cache) for task in tasks]
    said: dict[Path, str | None] = {}  # each analysed file's error, as its analysis said it
    analysed = _errors(_analyse_all(tasks, jobs, progress, cache, keys), said)
    if not write:
        outcome.files.extend(next(analysed) if isinstance(slot, _Task) else slot for slot in slots)
    else:
        outcome.files.extend(_write_all(slots, analysed, allow_dirty))
    if cache is not None and run_key is not None and kept is None:
        if (entry := _run_entry(asked, dict(zip((task.path for task in tasks), keys)), said)) is not None:
            cache.put_run(run_key, entry)
    outcome.seconds = time.perf_counter() - started
    return outcome


def _errors(outcomes: Iterable[FileOutcome], said: dict[Path, str | None]) -> Iterator[FileOutcome]:
    """`outcomes`, each error noted in `said` as the analysis gave it (before any write's), or
    None where it may not last: a bug's, a worker's crash, or one beside findings."""
    for result in outcomes:
        if result.error is not None:
            lasting = not result.error.startswith("internal error") and not result.findings
            said[result.path] = result.error if lasting else None
        yield result


def _run_entry(asked: list[_Task], keys: dict[Path, str | None], said: dict[Path, str | None]) -> list[str] | None:
    """What the cache keeps of a run for each of `asked`: "" where it was cleared unanalysed, its
    key, or "!" and the error its analysis gave (a file that does not parse); None where an
    error may not last (`_errors`)."""
    entry = []
    for task in asked:
        key = keys.get(task.path, "")
        if task.path not in said:
            entry.append(key or "")
        elif (error := said[task.path]) is None:
            return None
        else:
            entry.append(f"!{error}")
    return entry


def _kept_run(asked: list[_Task], cache: Cache, run_key: str) -> list[FileOutcome | None] | None:
    """What the run of `run_key` left in the cache for each of `asked`: its outcome, or None
    where it was cleared unanalysed; None where the run, or any file's entry, is missing (the
    run then asks its questions again)."""
    keys = cache.get_run(run_key)
    if keys is None or len(keys) != len(asked):
        return None
    kept: list[FileOutcome | None] = []
    for task, key in zip(asked, keys):
        if key.startswith("!"):
            kept.append(FileOutcome(task.path, error=key[1:], parsed=True))  # as `analyse` gave it
            continue
        entry = cache.get(key, task.data) if key else None
        if key and entry is None:
            return None
        kept.append(_from_cache(task, entry) if entry is not None else None)
    return kept


def _write_all(
    slots: list[FileOutcome | _Task], analysed: Iterator[FileOutcome], allow_dirty: bool
) -> list[FileOutcome]:
    """Each slot's outcome, its file written if changed (and not dirty, unless `allow_dirty`).
    A few threads write, since each waits for its fsync. With nothing to check first, each
    file is written while the others are still analysed; else once git has seen them all."""
    from concurrent.futures import ThreadPoolExecutor  # only a run that writes needs the writers

    results: list[FileOutcome] = []
    with ThreadPoolExecutor(max_workers=_WRITERS) as writers:
        writes = []
        for slot in slots:
            results.append(next(analysed) if isinstance(slot, _Task) else slot)
            if allow_dirty and results[-1].changed:
                writes.append(writers.submit(_write_one, results[-1]))
        if not allow_dirty:
            changed = [r for r in results if r.changed]
            refused = dirty_refusals([r.path for r in changed])
            for result in changed:
                if result.path in refused:
                    result.error = refused[result.path]
                else:
                    writes.append(writers.submit(_write_one, result))
        for write_done in writes:
            write_done.result()  # a failure other than the file's own error is not swallowed
    return results


_REFUSED = {
    UNTRACKED: "is not tracked by git, so semfix's edits could not be reviewed apart from the file; "
    "not rewritten: `git add` it first",
    UNSTAGED: "has unstaged changes, so semfix's edits could not be reviewed apart from them; "
    "not rewritten: stage or commit them first",
}


def dirty_refusals(paths: list[Path]) -> dict[Path, str]:
    """Of `paths`, those git says have edits of their own, or that git will not answer for,
    and why each is not rewritten.

    `fix` and `explain --fix` refuse them alike, unless --allow-dirty.
    """
    unknown = "git cannot say whether it has edits of its own ({}); not rewritten: see `git status`"
    return {
        path: f"{_REFUSED.get(state) or unknown.format(state)}, or pass --allow-dirty"
        for path, state in dirty(paths).items()
    }


def _write_one(result: FileOutcome) -> None:
    try:
        write_atomic(result.path, result.new, expected=result.old)
    except FileError as error:
        result.error = str(error)


def run_stdin(
    name: Path,
    data: bytes,
    *,
    projects: Projects,
    apply_fixes: bool,
) -> RunOutcome:
    """Source that came on stdin, as the file `name` (its suffix, its project's settings, and
    its excludes under `force_exclude`, as for a file named on the command line). Nothing is
    written."""
    started = time.perf_counter()
    project = projects.of(name)
    if project.force_exclude and project.excludes(name):
        return RunOutcome([FileOutcome(name)])  # nothing scanned, nothing found
    settings = project.settings if name == Path("-") else for_file(project.settings, name)
    outcome = RunOutcome([analyse(_Task(name, data, settings, apply_fixes))], scanned=1)
    outcome.notes = [settings.target_unread] if settings.target_unread else []
    outcome.seconds = time.perf_counter() - started
    return outcome
