"""The migration's judgement (issue 36): JAX runs each generated project before and after
`semfix fix --extend-select SEM1`, on the floor the project declares and on the newest JAX.

1. Every module of the project imports, and its kernel runs right (`expected()`), on the JAX of
   the declared floor (0.6.2, the oldest the oracle has, for a floor below it or none): else
   the generator is wrong.
2. `python -m semfix fix --extend-select SEM1 <project>` runs as a user runs it, with its JSON
   report: what changed, and what was left (held back), with semfix's reason. It is this
   checkout's semfix, or the one at $SEMFIX_UNDER_TEST (another branch's worktree).
3. When anything changed, every module must still import and run right on the floor's JAX,
   its memory-space constants still the objects the old spellings give there: else a WRONG
   MIGRATION.
4. `semfix check --show-settings` on the kernel's module: the floor semfix reads must not be
   above the one the generator declared (floors.py: the oldest JAX any environment of the
   project installs, computed as it writes the declaration): else a FLOOR ABOVE TRUTH. Below it
   is counted (an unreadable line, a pin a test group adds: the floor taken lower, never wrong).
5. On the newest JAX with the Pallas family's deprecations as errors, a module must run right
   unless semfix left a finding in it or in a project module it imports (held back): else a
   WRONG MIGRATION when semfix changed one of them and the error is about a name on a line it
   changed, a MISS when it is about a name semfix neither changed nor reported.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from jax_env import REPO, Worker, jax_python

from semfix.jax_versions import RELEASES, parse

from .floors import NEWEST
from .judge import TWO_DEVICES
from .migration import Module, Project

FAILURES = ("wrong migration", "floor above truth", "miss", "semfix error")
INFO = ("projects", "modules", "changed projects", "changed modules", "ran on newest", "held back on newest")
INFO += ("fails through an import", "judged below the floor", "no floor declared", "generator error")
INFO += ("floor read as declared", "floor read below truth")

DRIVER = """\
import importlib, sys, warnings
sys.dont_write_bytecode = True
ROOT, BASE, NAME, CHECKS = {root!r}, {base!r}, {name!r}, {checks!r}
sys.path[:] = [p for p in sys.path if not p.startswith(BASE)]
sys.path.insert(0, ROOT)
for key, loaded in list(sys.modules.items()):
    if BASE in str(getattr(loaded, "__file__", None) or getattr(loaded, "__path__", "")):
        del sys.modules[key]
importlib.invalidate_caches()
module = importlib.import_module(NAME)
for attr, old in CHECKS:
    import jax.experimental.pallas.tpu as tpu
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            was = tpu
            for part in old.split("."):
                was = getattr(was, part)
        except AttributeError:
            was = None
    if was is not None and getattr(module, attr) is not was:
        now = getattr(module, attr)
        raise AssertionError(
            f"{{NAME}}.{{attr}} is {{type(now).__module__}}.{{now!r}}, not pltpu.{{old}}, "
            f"{{type(was).__module__}}.{{was!r}}, on this JAX"
        )
run = getattr(module, "run", lambda: 0)
expected = getattr(module, "expected", lambda: 0)
"""


@dataclass
class Failure:
    """One module that fails after the migration: where, why, and what semfix wrote."""

    kind: str
    seed: int
    module: str
    jax: str
    declared: str
    error: str
    diff: str

    def key(self) -> tuple[str, str, str, str]:
        """What the shrinker keeps: the class, where it failed, the error's type, the name it names."""
        if self.kind == "floor above truth":  # by the declaration's form: its words, releases left out
            return self.kind, "", "", re.sub(r"\d+(\.\d+)+", "V", self.declared)
        kind = self.error.split(":")[0].split()[-1] if self.error else ""
        return self.kind, (self.jax.split() or [""])[0], kind, named(self.error)

    def text(self) -> str:
        return (
            f"{self.kind.upper()} seed {self.seed}: {self.module} on JAX {self.jax}\n"
            f"  floor declared: {self.declared}\n  error: {self.error[:500]}\n{self.diff}"
        )


@dataclass
class Verdict:
    counts: Counter[str] = field(default_factory=Counter)
    held: Counter[str] = field(default_factory=Counter)  # findings left, by rule and reason
    failures: list[Failure] = field(default_factory=list)
    broken: str = ""  # the generator wrote a project that does not run on its floor

    def add(self, other: Verdict) -> None:
        self.counts.update(other.counts)
        self.held.update(other.held)
        self.failures += other.failures


def named(error: str) -> str:
    """The name an ImportError, AttributeError, NameError or a call's TypeError (`unexpected keyword
    argument 'dec'`) is about ("" for another error)."""
    found = re.search(
        r"(?:import name|has no attribute|name|keyword argument) '(\w+)'|(\w+) (?:was|is) deprecated", error
    )
    return (found.group(1) or found.group(2)) if found else ""


def caused(error: str, diff: str) -> bool:
    """Did semfix's edit cause this failure on the newest JAX? Yes when the name the error is
    about is on a line semfix changed, as it was or as semfix wrote it (a rename that left the old
    name's import, an import dropped that a sibling reads, a keyword it wrote) or is not known; no
    when it names a name on lines semfix left as they were (a reference it never saw: a miss)."""
    name = named(error)
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("---", "+++"))]
    return not name or any(re.search(rf"\b{re.escape(name)}\b", line) for line in changed)


def reason(finding: dict[str, object]) -> str:
    """A finding semfix left, as a class: its rule and why it was not fixed, names and releases
    left out (`SEM101 needs JAX V above the floor`)."""
    message = str(finding["message"])
    why = message.partition("(not fixed: ")[2] or message
    why = re.sub(r"`[^`]*`", "N", why)
    why = re.sub(r"\d+\.\d+(\.\d+)*", "V", why)
    why = re.sub(r" from N in [^\s;]+| from V", "", why)  # where the floor was read
    why = re.split(r"[;(]", why)[0].strip(" ,.)")
    return f"{finding['rule']} {why}"


class MigrationJudge:
    """Judges projects with a Worker per JAX (started when first needed), in a scratch folder."""

    def __init__(self, timeout: float = 60) -> None:
        self.timeout = timeout
        self.workers: dict[str, Worker] = {}
        self.folder = Path(tempfile.mkdtemp(prefix="semfix-migration-"))
        self.count = 0

    def close(self) -> None:
        for worker in self.workers.values():
            worker.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def worker(self, release: str) -> Worker:
        if release not in self.workers:
            self.workers[release] = Worker(jax_python(release), timeout=self.timeout, env=TWO_DEVICES)
        return self.workers[release]

    def run(self, project: Project, root: Path, module: Module, release: str, strict: bool = False) -> str:
        """ "ok <digest>", "error ..." or "hang": the module imported and its kernel run."""
        checks = [] if strict else module.checks
        where = str(root / project.import_root) if project.import_root else str(root)
        source = DRIVER.format(root=where, base=str(self.folder), name=module.name, checks=checks)
        return self.worker(release).run(source, check=True, strict=strict)

    def write(self, project: Project, label: str) -> Path:
        root = self.folder / f"p{self.count}" / label
        for path, text in project.files().items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        return root

    def migrate(self, root: Path) -> dict[str, object]:
        """`python -m semfix fix --extend-select SEM1 <root>`, as a user runs it; its JSON report."""
        report = root.parent / "report.json"
        command = [sys.executable, "-m", "semfix", "fix", "--extend-select", "SEM1", "--exit-zero", "-j", "1"]
        env = {**os.environ, "PYTHONPATH": os.environ.get("SEMFIX_UNDER_TEST", str(REPO))}
        done = subprocess.run(
            [*command, "--report", str(report), str(root)],
            capture_output=True, text=True, env=env, cwd=root.parent, timeout=300,
        )  # fmt: skip
        said = f"exit {done.returncode}: {(done.stderr or done.stdout)[-800:]}"
        if not report.exists():
            return {"error": said, "files": []}
        data: dict[str, object] = json.loads(report.read_text())
        if done.returncode != 0:  # a file it could not fix (its proof refused): the others are judged
            data["error"] = said
        return data

    def floor_read(self, root: Path, module: Module) -> str:
        """The floor `semfix check --show-settings` says the module takes (its first word:
        `0.7.2, from pyproject.toml:5 ...`), or what semfix said where it says none."""
        command = [sys.executable, "-m", "semfix", "check", "--show-settings", str(root / module.path)]
        env = {**os.environ, "PYTHONPATH": os.environ.get("SEMFIX_UNDER_TEST", str(REPO))}
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=root.parent, timeout=120)
        found = re.search(r"^  target-jax: ([\w.]+),", done.stdout, re.MULTILINE)
        return found.group(1) if found else f"exit {done.returncode}: {(done.stderr or done.stdout)[-500:]}"

    def _floor(self, project: Project, root: Path, verdict: Verdict) -> None:
        """The floor semfix reads for the kernel's module, against the declared (true) one."""
        kernel = next(m for m in project.modules if m.kernel)
        read, truth = self.floor_read(root, kernel), project.declaration.floor or RELEASES[0]
        if not re.fullmatch(r"\d+(\.\d+)+", read):
            verdict.failures.append(
                Failure("semfix error", project.seed, kernel.name, "", project.declaration.said, read, "")
            )
        elif parse(read) > parse(truth):
            error = f"semfix reads the floor {read}; the project admits JAX {truth}"
            verdict.failures.append(
                Failure("floor above truth", project.seed, kernel.name, "", project.declaration.said, error, "")
            )
        else:
            verdict.counts["floor read as declared" if parse(read) == parse(truth) else "floor read below truth"] += 1

    def judge(self, project: Project) -> Verdict:
        verdict = Verdict()
        self.count += 1
        declared = project.declaration
        floor = declared.runs_on
        before = self.write(project, "before")
        for module in project.modules:
            outcome = self.run(project, before, module, floor)
            if not outcome.startswith("ok"):
                verdict.broken = f"{module.name} on JAX {floor}: {outcome}"
                verdict.counts["generator error"] += 1
                return verdict
        verdict.counts["projects"] += 1
        verdict.counts["modules"] += len(project.modules)
        self._floor(project, before, verdict)
        if declared.floor is None:
            verdict.counts["no floor declared"] += 1
        elif declared.note:
            verdict.counts["judged below the floor"] += 1
        after = before.parent / "after"
        shutil.copytree(before, after)
        report = self.migrate(after)
        if "error" in report:
            verdict.failures.append(
                Failure("semfix error", project.seed, "", "", declared.said, str(report["error"]), "")
            )
        files = {str(f["path"]).replace(os.sep, "/"): f for f in report.get("files", [])}  # type: ignore[union-attr]
        left: set[str] = set()
        changed: set[str] = set()
        for module in project.modules:
            entry = files.get(module.path) or files.get(f"after/{module.path}") or _by_suffix(files, module.path)
            if not entry:
                continue
            if entry.get("changed"):
                changed.add(module.name)
            for finding in entry.get("findings", []):
                if not finding.get("applied"):
                    left.add(module.name)
                    verdict.held[reason(finding)] += 1
        if changed:
            verdict.counts["changed projects"] += 1
            verdict.counts["changed modules"] += len(changed)
        diff = _diff(before, after, project)
        failed: set[str] = set()
        for module in project.modules:  # each after the modules it imports
            closure = project.closure(module.name)
            if (closure - {module.name}) & failed:
                failed.add(module.name)
                verdict.counts["fails through an import"] += 1
                continue
            failures = len(verdict.failures)
            self._module(project, module, before, after, changed, left, diff, verdict)
            if len(verdict.failures) > failures:
                failed.add(module.name)
        return verdict

    def _module(
        self,
        project: Project,
        module: Module,
        before: Path,
        after: Path,
        changed: set[str],
        left: set[str],
        diff: str,
        verdict: Verdict,
    ) -> None:
        """Judge one module after the migration, on the floor's JAX and on the newest."""
        declared = project.declaration
        floor = declared.runs_on
        closure = project.closure(module.name)
        if changed:
            outcome = self.run(project, after, module, floor)
            if not outcome.startswith("ok"):
                where = f"{floor} (the floor{'; ' + declared.note if declared.note else ''})"
                failure = Failure("wrong migration", project.seed, module.name, where, declared.said, outcome, diff)
                verdict.failures.append(failure)
                return
        outcome = self.run(project, after, module, NEWEST, strict=True)
        if outcome.startswith("ok"):
            verdict.counts["ran on newest"] += 1
        elif closure & left:
            verdict.counts["held back on newest"] += 1
        else:
            kind = "wrong migration" if closure & changed and caused(outcome, diff) else "miss"
            where = f"{NEWEST} strict (nothing left reported)"
            verdict.failures.append(Failure(kind, project.seed, module.name, where, declared.said, outcome, diff))


def _by_suffix(files: dict[str, dict[str, object]], path: str) -> dict[str, object] | None:
    return next((entry for name, entry in files.items() if name.endswith("/" + path)), None)


def _diff(before: Path, after: Path, project: Project) -> str:
    """The unified diff of what semfix changed, file by file."""
    out = []
    for path in project.files():
        old, new = (before / path).read_text(), (after / path).read_text()
        if old != new:
            lines = difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}")
            out.append("".join(lines))
    return "".join(out)
