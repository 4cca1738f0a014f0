"""The judgement of one case, as issue 35 §1 orders it, with JAX (interpret mode) as the oracle.

1. The correct kernel runs: that gives the expected result (`expected()` holds it to it).
2. `check` on it must be silent, else a FALSE REPORT.
3. Each mutant runs, from a file on disk; it is kept only if JAX rejects it, hangs, leaves a
   semaphore count, or computes a wrong result.
4. `check` on a kept mutant must find something, else a MISS.
5. `fix` on it, if it writes anything, must run right, else a WRONG SAFE FIX; `--unsafe-fixes`
   results are judged apart (WRONG UNSAFE FIX). `semfix fix` on the mutant's file, written with
   CRLF, an encoding cookie or a BOM, must write those bytes of the same text, else a WRONG WRITE.
6. `explain LOG --fix` on the mutant's real traceback (the command, in-process) must exit 1 with
   the file unchanged, or write a file that runs right, else an EXPLAIN WRONG FIX. A site
   planted at two places (a signal and its wait) fails at the first, the one the log names:
   explain's rewrite is judged with the copies it did not touch put back. An exception out of
   explain is a SEMFIX ERROR, not explain giving up.

A package case (grammar.LAYOUTS: the kernel's launch in a sibling module, `pl`/`pltpu` read
through a `_compat` module) runs as the package `kern`, and semfix judges each of its modules
with the settings the CLI's run gives it (`runner._with_importers` over the package's sources);
`semfix fix` is given the package folder.

check and fix run every rule (`select=ALL`). Counts that are not failures say what the run did:
kept mutants, fixes made only with --unsafe-fixes, explain giving up or not recognising the error.
"""

from __future__ import annotations

import difflib
import random
import re
import shutil
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner
from jax_env import Worker

from semfix import fix_source
from semfix.api import may_fire
from semfix.cli.runner import _analysis, _may_read_through, _Task, _with_importers
from semfix.errors import SafetyError, SourceError
from semfix.files import module_names
from semfix.findings import Finding
from semfix.selection import build_settings
from semfix.settings import Settings, for_file

from .grammar import MODULE, Case, modules

FAILURES = (
    "false report",
    "miss",
    "wrong safe fix",
    "wrong unsafe fix",
    "explain wrong fix",
    "wrong write",
    "semfix error",
)
INFO = (
    "cases",
    "package cases",
    "mutants run",
    "kept",
    "safe fixed",
    "unsafe only",
    "explain fixed",
    "explain gave up",
)
INFO += ("explain left a copy", "explain gave up, fix fixed", "explain unrecognised")
SAFE = build_settings(select=["ALL"])
UNSAFE = build_settings(select=["ALL"], unsafe_fixes=True)
TWO_DEVICES = {"XLA_FLAGS": "--xla_force_host_platform_device_count=2"}  # remote copies and signals


@dataclass
class Failure:
    """One failure: its class, where it was planted, and what was seen."""

    kind: str
    seed: int
    site: int  # -1: the correct kernel
    role: str  # the site's: sem, view, buffer, helper-arg, alloc ("" for the correct kernel)
    mutation: str
    detail: str
    source: str  # the kernel the failure is about (the mutant, or the correct kernel)
    written: str = ""  # what semfix wrote, for a wrong fix

    def key(self) -> tuple[str, str, str, tuple[str, ...]]:
        """What the shrinker keeps: the class, where and what was planted, the rules involved."""
        rules = tuple(sorted(set(re.findall(r"SEM\d+", self.detail.partition(" JAX: ")[0]))))
        return self.kind, self.role, self.mutation, rules


@dataclass
class Verdict:
    counts: Counter[str] = field(default_factory=Counter)
    #: (what happened, the mutation class): kept, miss, fixed (by `fix` or `explain --fix`, running right),
    #: explain fixed
    classes: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    notes: list[Failure] = field(default_factory=list)  # not failures: fixed only unsafe, explain gave up
    broken: str = ""  # the generator wrote a kernel that does not run: a bug in the generator

    def add(self, other: Verdict) -> None:
        self.counts.update(other.counts)
        self.classes.update(other.classes)
        self.failures += other.failures
        self.notes += other.notes


def mutation_class(case: Case, site: int, mutation: str) -> str:
    """A mutant's class: `role mutation`, marked where the allocation has two indices or more
    (a dropped one leaves a row) and where the file does not show its rank."""
    alloc = case.sites[site].alloc
    deep = " rank>=2" if alloc is not None and alloc.rank >= 2 else ""
    unshown = " rank-unshown" if alloc is not None and alloc.unshown else ""
    return f"{case.sites[site].role} {mutation}{deep}{unshown}"


@dataclass
class Fixed:
    """semfix's result on a case's text: the text fixed, the findings (each with its file's
    name and text), the fixes applied."""

    source: str
    findings: list[tuple[str, str, Finding]]
    applied: list[Finding]


def files(path: Path, text: str) -> dict[Path, str]:
    """Where a case's text lies on disk: `path` itself (a one-module case), or the modules of
    the package folder `path`."""
    parts = modules(text)
    return {path / f"{name}.py": part for name, part in parts.items()} if parts else {path: text}


def read_back(path: Path, text: str) -> str:
    """The case's text as the files of `files(path, text)` now hold it."""
    parts = modules(text)
    return (
        "".join(MODULE.format(name) + (path / f"{name}.py").read_text() for name in parts)
        if parts
        else path.read_text()
    )


def write_case(folder: Path, text: str) -> Path:
    """The case written in `folder`: `kernel.py`, or the package `kern` (its `__init__.py` empty)."""
    path = folder / ("kern" if modules(text) else "kernel.py")
    if modules(text):
        path.mkdir(parents=True)
        (path / "__init__.py").write_text("")
    for file, part in files(path, text).items():
        file.write_text(part)
    return path


def run_semfix(text: str, settings: Settings, folder: Callable[[], Path], apply_fixes: bool = True) -> Fixed:
    """`fix_source` on a one-module case; on a package (written in a new `folder()`), each
    module the CLI would analyse, with the settings its run gives it (`_with_importers`: the launches, the
    names read through `_compat`, the names imported by siblings)."""
    if not modules(text):
        result = fix_source(text, settings=settings, apply_fixes=apply_fixes)
        return Fixed(result.source, [("", text, f) for f in result.findings], list(result.applied))
    package = write_case(folder(), text)
    sources = {path: path.read_bytes() for path in sorted(package.glob("*.py"))}
    tasks = [
        _Task(path, data, for_file(settings, path), apply_fixes)
        for path, data in sources.items()
        if may_fire(data, settings) or _may_read_through(data, settings)
    ]
    chosen = [
        t
        for t in _with_importers(tasks, sources, module_names(sources))
        if isinstance(t, _Task) and may_fire(t.data, t.settings)
    ]
    results = {task.path: _analysis(task) for task in chosen}
    out, found, applied = "", [], []
    for path, part in files(package, text).items():
        result = results.get(path)
        out += MODULE.format(path.stem) + (result.source.decode() if result else part)
        found += [(f"kern/{path.name}", part, f) for f in (result.findings if result else ())]
        applied += list(result.applied) if result else []
    return Fixed(out, found, applied)


def _findings(source: str, folder: Callable[[], Path]) -> list[str]:
    found = run_semfix(source, SAFE, folder, apply_fixes=False).findings
    return [f"{name}:{f.line}:{f.column} {f.rule}: {text.splitlines()[f.line - 1].strip()}" for name, text, f in found]


class Judge:
    """Judges cases with one JAX (a Worker on its Python), in a scratch folder of mutant files."""

    def __init__(self, worker: Worker, mutants: int = 4) -> None:
        self.worker = worker
        self.mutants = mutants
        self.folder = Path(tempfile.mkdtemp(prefix="semfix-oracle-"))
        self.count = 0

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def choose(self, case: Case) -> list[tuple[int, str, str]]:
        """The mutants judged for a case: up to `self.mutants` (site, mutation, text), by seed."""
        every = [(n, m, t) for n, site in enumerate(case.sites) for m, t in site.mutants]
        random.Random(case.seed).shuffle(every)
        return every[: self.mutants] if self.mutants else every

    def judge(self, case: Case, only: list[tuple[int, str, str]] | None = None) -> Verdict:
        verdict = Verdict()
        correct = case.correct()
        parts = modules(correct)
        expected = self.worker.run_package(parts, _entry(parts))[0] if parts else self.worker.run(correct, check=True)
        if not expected.startswith("ok"):
            verdict.broken = expected
            return verdict
        verdict.counts["cases"] += 1
        verdict.counts["package cases"] += bool(parts)
        try:
            found = _findings(correct, self._folder)
        except Exception as error:  # noqa: BLE001 - any exception out of semfix is a failure to report
            found = [f"semfix error: {type(error).__name__}: {error}"]
        for finding in found:
            verdict.failures.append(Failure("false report", case.seed, -1, "", "none", finding, correct))
        for site, mutation, text in self.choose(case) if only is None else only:
            self._mutant(case, site, mutation, text, expected, verdict)
        return verdict

    def _folder(self) -> Path:
        self.count += 1
        folder = self.folder / f"m{self.count}"
        folder.mkdir()
        return folder

    def _runs_right(self, source: str, expected: str) -> str:
        parts = modules(source)
        outcome = self.worker.run_package(parts, _entry(parts))[0] if parts else self.worker.run(source, check=True)
        return "" if outcome == expected else outcome

    def _mutant(self, case: Case, site: int, mutation: str, text: str, expected: str, verdict: Verdict) -> None:
        verdict.counts["mutants run"] += 1
        source = case.mutant(site, text)
        path, parts = write_case(self._folder(), source), modules(source)
        if parts:
            outcome, log = self.worker.run_package(parts, _entry(parts), path)
        else:
            outcome, log = self.worker.run_file(path, check=True)
        if outcome == expected:
            return  # JAX accepts it and computes the same: not a mistake
        verdict.counts["kept"] += 1
        name = mutation_class(case, site, mutation)
        verdict.classes["kept", name] += 1
        planted = source_line(case.correct(), source)

        def fail(kind: str, detail: str, written: str = "") -> None:
            where = f"{case.sites[site].role}, {mutation}: {planted}"
            role = case.sites[site].role
            failure = Failure(
                kind, case.seed, site, role, mutation, f"{detail} [{where}] JAX: {outcome}", source, written
            )
            (verdict.failures if kind in FAILURES else verdict.notes).append(failure)

        try:
            if not _findings(source, self._folder):
                verdict.classes["miss", name] += 1
                fail("miss", "check is silent")
            safe = run_semfix(source, SAFE, self._folder)
            unsafe = run_semfix(source, UNSAFE, self._folder)
        except (SafetyError, SourceError) as error:
            fail("semfix error", str(error))
            return
        except Exception as error:  # noqa: BLE001 - a crash, reported with the case rather than ending the run
            fail("semfix error", f"{type(error).__name__}: {error}")
            return
        fixed = False
        if safe.source != source:
            verdict.counts["safe fixed"] += 1
            if wrong := self._runs_right(safe.source, expected):
                fail("wrong safe fix", f"{_applied(safe)}: {wrong}", safe.source)
            else:
                fixed = True
                verdict.classes["fixed", name] += 1
            if problem := _written_by_the_cli(path, source, safe.source, random.Random(case.seed * 31 + site)):
                fail("wrong write", problem)
        if unsafe.source not in (source, safe.source):
            verdict.counts["unsafe only" if safe.source == source else "unsafe fixed more"] += 1
            if safe.source == source:
                fail("unsafe only", _applied(unsafe))
            if wrong := self._runs_right(unsafe.source, expected):
                fail("wrong unsafe fix", f"{_applied(unsafe)}: {wrong}", unsafe.source)
        if log:
            for file, part in files(path, source).items():
                file.write_text(part)
            if self._explain(path, log, (case, site, text), expected, fail, verdict, fixed):
                verdict.classes["explain fixed", name] += 1
                verdict.classes["fixed", name] += not fixed

    def _explain(
        self,
        path: Path,
        log: str,
        planted: tuple[Case, int, str],
        expected: str,
        fail: object,
        verdict: Verdict,
        fixed: bool,
    ) -> bool:
        """Judge `explain LOG --fix` on the mutant (`planted`: the case, the site, its text).
        A site planted at two places fails at the first, which the log names: explain's
        rewrite is judged with the copies it left (lines it did not touch) put back. An
        exception out of the command is a semfix error, not explain giving up. True where
        explain wrote a kernel that runs right."""
        source = planted[0].mutant(*planted[1:])
        from semfix.cli.main import main

        (path.parent / "error.log").write_text(log)
        result = CliRunner().invoke(
            main, ["explain", str(path.parent / "error.log"), "--root", str(path.parent), "--fix"]
        )
        written = read_back(path, source)
        said = " ".join(result.output.split())[:300]
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            crash = "".join(traceback.format_exception(result.exception)[-3:])
            fail("semfix error", f"explain crashed: {crash}")  # type: ignore[operator]
            return False
        if written != source:
            verdict.counts["explain fixed"] += 1
            wrong = self._runs_right(written, expected)
            if wrong and (alone := _copies_put_back(*planted, written)):
                verdict.counts["explain left a copy"] += 1
                wrong = self._runs_right(alone, expected)
            if wrong:
                fail("explain wrong fix", f"explain wrote a kernel that fails ({said}): {wrong}", written)  # type: ignore[operator]
            return not wrong
        if result.exit_code == 1:
            verdict.counts["explain gave up"] += 1
            if fixed:
                verdict.counts["explain gave up, fix fixed"] += 1
                fail("explain gave up, fix fixed", said)  # type: ignore[operator]
        elif result.exit_code == 2 and "no JAX semaphore or DMA error" in result.output:
            verdict.counts["explain unrecognised"] += 1
        else:
            fail("explain wrong fix", f"explain exit {result.exit_code}, nothing written ({said})")  # type: ignore[operator]
        return False


#: The forms a file on disk takes that `fix_source`'s text does not: (name, how the text is written).
WRITTEN: tuple[tuple[str, object], ...] = (
    ("CRLF", lambda text: text.replace("\n", "\r\n").encode()),
    ("latin-1 cookie", lambda text: ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + text).encode("latin-1")),
    ("BOM", lambda text: b"\xef\xbb\xbf" + text.encode()),
    ("CRLF, utf-8 cookie", lambda text: ("# coding: utf-8 \u2014 \u00fc\n" + text).replace("\n", "\r\n").encode()),
)


def _written_by_the_cli(path: Path, source: str, fixed: str, rng: random.Random) -> str:
    """`semfix fix` on the mutant written in one of the WRITTEN forms must write exactly
    `fix_source`'s proven text in that form (its line endings, encoding and cookie kept);
    what it did instead, in words, else ""."""
    from semfix.cli.main import main

    form, write = rng.choice(WRITTEN)
    wanted = {file: write(text) for file, text in files(path, fixed).items()}  # type: ignore[operator]
    for file, text in files(path, source).items():
        file.write_bytes(write(text))  # type: ignore[operator]
    result = CliRunner().invoke(main, ["fix", str(path), "--no-cache", "--select", "ALL"])
    written = {file: file.read_bytes() for file in wanted}
    for file, text in files(path, source).items():
        file.write_text(text)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"semfix fix ({form}) crashed: {''.join(traceback.format_exception(result.exception)[-3:])}"
    if written != wanted:
        said = " ".join(result.output.split())[:200]
        return f"semfix fix ({form}, exit {result.exit_code}: {said}) wrote other bytes than fix_source: " + "; ".join(
            f"{file.name}: {data[:300]!r}" for file, data in written.items() if data != wanted[file]
        )
    return ""


def _copies_put_back(case: Case, site: int, text: str, written: str) -> str:
    """`written` with each copy of the planted text (a site rendered at two places) that
    explain left alone put back as the correct kernel has it; "" where there is none."""
    mutant, correct = case.mutant(site, text), case._text(site, {})
    matcher = difflib.SequenceMatcher(None, mutant, written, autojunk=False)
    edits = [(i1, i2, written[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]
    left = [(a, b, correct) for a, b in case.copies(site, text) if not any(a <= e[1] and e[0] <= b for e in edits)]
    if not left or len(left) == len(case.copies(site, text)):
        return ""  # explain rewrote no copy: judged as it is
    out, at = [], 0
    for start, end, new in sorted(edits + left):
        out += [mutant[at:start], new]
        at = end
    return "".join(out) + mutant[at:]


def _entry(parts: dict[str, str]) -> str:
    """The module of a package case that holds `run()`."""
    return next(name for name, text in parts.items() if "\ndef run():" in text)


def _applied(result: object) -> str:
    return "; ".join(f"{f.line} {f.rule} {f.original.strip()!r} -> {f.replacement!r}" for f in result.applied)  # type: ignore[attr-defined]


def source_line(old: str, new: str) -> str:
    """The first line where `new` differs from the correct kernel's rendering (for the report)."""
    return next((b.strip() for a, b in zip(old.splitlines(), new.splitlines()) if a != b), "")
