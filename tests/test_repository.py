"""Running over a repository: git-aware discovery, excludes, parallel runs, reports, dirty files."""

from __future__ import annotations

import concurrent.futures
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import semfix.cli.runner
from semfix.cli.projects import Projects
from semfix.files import discover
from semfix.selection import build_settings

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"
FIXED = BUGGY.replace("sem[...]", "sem")

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False)


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True, capture_output=True
    )


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@needs_git
def test_gitignore_files_nested_too_are_skipped(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    _tree(
        tmp_path,
        {
            ".gitignore": "generated/\n",
            "pkg/.gitignore": "scratch_*.py\n",
            "pkg/kernel.py": BUGGY,
            "pkg/scratch_1.py": BUGGY,
            "generated/out.py": BUGGY,
            "notebooks/demo.ipynb": "{}",
        },
    )
    found = [p.relative_to(tmp_path).as_posix() for p in discover([tmp_path]).files]
    assert found == ["notebooks/demo.ipynb", "pkg/kernel.py"]


def test_excludes_from_the_command_line_and_pyproject(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.semfix]\nextend-exclude = ["legacy"]\n',
            "src/kernel.py": BUGGY,
            "src/kernel_test.py": BUGGY,
            "legacy/old.py": BUGGY,
        },
    )
    result = cli("check", ".", "--exclude", "*_test.py", cwd=tmp_path)
    assert [line.split(":")[0] for line in result.stdout.splitlines()] == ["src/kernel.py"]
    named = cli("check", "legacy/old.py", cwd=tmp_path)
    assert named.stdout.startswith("legacy/old.py:")  # a file named explicitly is taken...
    forced = cli("check", "legacy/old.py", "--force-exclude", cwd=tmp_path)
    assert forced.stdout == "" and forced.returncode == 0  # ...unless --force-exclude


def test_a_glob_is_read_from_its_projects_folder_wherever_semfix_runs(tmp_path: Path) -> None:
    """`extend-exclude` names paths from its pyproject's folder, as ruff reads it: a member of a
    monorepo excludes `gen/*` and pre-commit, at the repository root, names `pkg/gen/k.py`; a
    folder given below the project, or a run from inside it, skips the same files; and a glob
    never matches the folders above the project (a checkout under `~/build/`)."""
    _tree(
        tmp_path,
        {
            "build/repo/pkg/pyproject.toml": '[tool.semfix]\nextend-exclude = ["gen/*", "build"]\n',
            "build/repo/pkg/gen/k.py": BUGGY,
            "build/repo/pkg/src/k.py": BUGGY,
        },
    )
    repo, member = tmp_path / "build/repo", tmp_path / "build/repo/pkg"
    named = cli("check", "--force-exclude", "pkg/gen/k.py", "pkg/src/k.py", cwd=repo).stdout
    assert [line.split(":")[0] for line in named.splitlines()] == ["pkg/src/k.py"]
    for cwd, given in ((repo, "pkg/gen"), (member / "gen", "."), (member / "gen", "k.py")):
        ran = cli("check", "--force-exclude", given, cwd=cwd)
        assert ran.stdout == "" and ran.returncode == 0, (cwd, given, ran.stdout, ran.stderr)
    assert cli("check", ".", cwd=member).stdout.startswith("src/k.py:")


def _hooks() -> dict[str, list[str]]:
    """Each hook of .pre-commit-hooks.yaml: its command line before the file names, as pre-commit
    makes it (`entry`, then `args`)."""
    hooks: dict[str, list[str]] = {}
    for block in (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text().split("- id: ")[1:]:
        fields = dict(line.strip().split(": ", 1) for line in block.splitlines()[1:] if ": " in line)
        args = fields.get("args", "[]").strip("[]").split(", ")
        hooks[block.split()[0]] = [*fields["entry"].split(), *(a for a in args if a)]
    return hooks


def test_the_hooks_and_force_exclude_keep_the_excludes_for_files_named(tmp_path: Path) -> None:
    """pre-commit names every staged file: the hooks pass --force-exclude, so a vendored file under
    `extend-exclude` is neither rewritten nor reported; `force-exclude = true` does the same."""
    _tree(
        tmp_path,
        {"pyproject.toml": '[tool.semfix]\nextend-exclude = ["vendor"]\n', "vendor/lib.py": BUGGY, "k.py": BUGGY},
    )
    hooks = _hooks()
    assert set(hooks) == {"semfix", "semfix-check"}
    for name, command in hooks.items():
        assert command[0] == "semfix"
        (tmp_path / "k.py").write_text(BUGGY)
        ran = cli(*command[1:], "vendor/lib.py", "k.py", cwd=tmp_path)
        assert ran.returncode == 1 and "vendor" not in ran.stdout + ran.stderr, (name, ran.stdout, ran.stderr)
        assert (tmp_path / "vendor/lib.py").read_text() == BUGGY
        assert (tmp_path / "k.py").read_text() == (FIXED if name == "semfix" else BUGGY)
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nextend-exclude = ["vendor"]\nforce-exclude = true\n')
    assert cli("check", "vendor/lib.py", cwd=tmp_path).stdout == ""
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nforce-exclude = "yes"\n')
    refused = cli("check", "vendor/lib.py", cwd=tmp_path)
    assert refused.returncode == 2 and "force-exclude must be true or false" in refused.stderr


def test_parallel_output_is_identical_to_serial(tmp_path: Path) -> None:
    for index in range(12):
        body = BUGGY if index % 3 else "import numpy\n"
        (tmp_path / f"k{index:02}.py").write_text(body.replace("kernel", f"kernel{index}"))
    (tmp_path / "bad.py").write_text("from jax.experimental import pallas as pl\npl.semaphore_wait(\n")
    serial = cli("fix", "--diff", "-j", "1", ".", cwd=tmp_path)
    parallel = cli("fix", "--diff", "-j", "2", ".", cwd=tmp_path)
    assert serial.stdout == parallel.stdout and serial.stdout.count("+++ b/") == 8
    strip = lambda text: text.rsplit(", ", 1)[0]  # noqa: E731 - the timing differs
    assert strip(serial.stderr) == strip(parallel.stderr)
    assert serial.returncode == parallel.returncode == 2


def test_no_process_pool_when_nothing_needs_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(5):
        (tmp_path / f"plain{index}.py").write_text("import numpy\n")

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)  # imported where a pool starts
    outcome = semfix.cli.runner.run([tmp_path], projects=Projects(), apply_fixes=False, write=False, jobs=4)
    assert outcome.scanned == 5 and outcome.parsed == 0 and outcome.exit_code == 0


def test_a_pool_starts_only_for_the_work_it_pays_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A few kernels are analysed in one process unless -j asks for workers; where the work
    left, spread over workers, ends sooner than in one process with their start (a fork,
    measured), the rest goes to a pool. The results are the same, in the same order."""
    for index in range(12):
        (tmp_path / f"k{index:02}.py").write_text(BUGGY.replace("kernel", f"kernel{index}"))
    started: list[int] = []
    real_pool = concurrent.futures.ProcessPoolExecutor

    def counted(*args: object, **kwargs: Any) -> concurrent.futures.ProcessPoolExecutor:
        started.append(kwargs["max_workers"])
        return real_pool(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counted)  # imported where a pool starts

    def findings(jobs: int | None) -> list[tuple[str, int, str]]:
        outcome = semfix.cli.runner.run([tmp_path], projects=Projects(), apply_fixes=False, write=False, jobs=jobs)
        return [(path.name, f.line, f.rule) for path, f in outcome.findings]

    serial = findings(1)
    assert len(serial) == 12 and started == []
    assert findings(None) == serial and started == []  # milliseconds of work: forks do not pay
    assert findings(3) == serial and started == [3]  # -j 3: three workers
    monkeypatch.setattr(semfix.cli.runner, "_fork_cost", lambda: 1e-9)  # forks all but free
    monkeypatch.setattr(semfix.cli.runner, "_POOL_START", 1e-9)
    monkeypatch.setattr(semfix.cli.runner, "_cores", lambda: 4)
    assert findings(None) == serial and started == [3, 4]  # after two files, 10 left for 4 workers


def test_a_pool_pays_where_forks_are_slow_and_the_work_is_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """The device's figures (a sandboxed 13-core machine: a fork 28 ms, 0.68 s of kernels left
    in 45 files, the longest 0.05 s): a few workers pay, where the pool's start counted in
    forks (20 of them) started none, and 13 cores ran as one. Milliseconds of work start none."""
    monkeypatch.setattr(semfix.cli.runner, "_cores", lambda: 13)
    assert semfix.cli.runner._workers(0.68, 0.05, 45, 0.028) == 4
    assert semfix.cli.runner._workers(0.68, 0.05, 45, 0.002) == 13
    assert semfix.cli.runner._workers(0.1, 0.05, 45, 0.002) == 0


CORRECT_KERNEL = (
    "from jax.experimental import pallas as pl\n\n\ndef kernel(sem, sems):\n"
    "    pl.semaphore_signal(sems.at[0], 1)\n    pl.semaphore_wait(sem, 1)\n"
)


def test_correct_kernels_are_skimmed_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for index in range(3):
        (tmp_path / f"kernel{index}.py").write_text(CORRECT_KERNEL)

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process pool was started")

    with monkeypatch.context() as patch:  # a few files: skimmed in the main process
        patch.setattr(concurrent.futures, "ProcessPoolExecutor", no_pool)  # imported where a pool starts
        outcome = semfix.cli.runner.run([tmp_path], projects=Projects(), apply_fixes=False, write=False, jobs=4)
        assert outcome.scanned == 3 and outcome.parsed == 0 and outcome.exit_code == 0
    for index in range(3, 20):  # many: skimmed where they are analysed, and still none parsed
        (tmp_path / f"kernel{index}.py").write_text(CORRECT_KERNEL)
    (tmp_path / "buggy.py").write_text(CORRECT_KERNEL.replace("(sem, 1)", "(sem[...], 1)"))
    outcome = semfix.cli.runner.run([tmp_path], projects=Projects(), apply_fixes=False, write=False, jobs=2)
    assert outcome.scanned == 21 and outcome.parsed == 1 and len(outcome.findings) == 1


def test_json_report(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "a.py": BUGGY,
            "b.py": "import numpy\n",
            "c.py": "from jax.experimental import pallas as pl\nx = pl.semaphore_wait(\n",
        },
    )
    result = cli("fix", ".", "--report", "report.json", cwd=tmp_path)
    assert result.returncode == 2
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["totals"] == {
        "files_scanned": 3,
        "files_parsed": 2,
        "files_changed": 1,
        "fixes_applied": 1,
        "findings_left": 0,
        "errors": 1,
        "seconds": report["totals"]["seconds"],
    }
    by_path = {entry["path"]: entry for entry in report["files"]}
    assert sorted(by_path) == ["a.py", "c.py"]
    [finding] = by_path["a.py"]["findings"]
    assert (finding["rule"], finding["line"], finding["column"], finding["applied"]) == ("SEM001", 5, 23, True)
    assert by_path["c.py"]["error"].startswith("syntax error at line 2")


@needs_git
def test_unstaged_edits_block_the_rewrite_unless_allowed(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    _tree(tmp_path, {"clean.py": BUGGY, "edited.py": BUGGY, "staged.py": BUGGY})
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "kernels")
    (tmp_path / "edited.py").write_text(BUGGY + "# work in progress\n")
    (tmp_path / "staged.py").write_text(BUGGY + "# staged edit\n")
    git(tmp_path, "add", "staged.py")
    (tmp_path / "untracked.py").write_text(BUGGY)
    result = cli("fix", ".", cwd=tmp_path)
    assert result.returncode == 2
    refused = sorted(line.split(": ")[1] for line in result.stderr.splitlines() if "--allow-dirty" in line)
    assert refused == ["edited.py", "untracked.py"]
    assert (tmp_path / "clean.py").read_text() == FIXED
    assert (tmp_path / "staged.py").read_text() == FIXED + "# staged edit\n"
    assert (tmp_path / "edited.py").read_text() == BUGGY + "# work in progress\n"
    allowed = cli("fix", ".", "--allow-dirty", cwd=tmp_path)
    assert allowed.returncode == 0  # everything fixed
    assert (tmp_path / "edited.py").read_text() == FIXED + "# work in progress\n"


def test_progress_bar_only_for_long_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from semfix.cli.runner import _analyse_all, _Task

    def tasks(count: int) -> list[_Task]:
        return [_Task(Path(f"{i}.py"), b"", build_settings(), False) for i in range(count)]

    assert len(list(_analyse_all(tasks(10), 1, progress=True))) == 10
    assert capsys.readouterr().err == ""
    assert len(list(_analyse_all(tasks(250), 1, progress=False))) == 250
    assert capsys.readouterr().err == ""
    assert len(list(_analyse_all(tasks(250), 1, progress=True))) == 250
    assert "semfix" in capsys.readouterr().err


@needs_git
def test_a_refusal_names_its_cause_and_does_not_send_the_user_back_to_fix(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    _tree(tmp_path, {"edited.py": BUGGY})
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "kernels")
    (tmp_path / "edited.py").write_text(BUGGY + "# work in progress\n")
    (tmp_path / "untracked.py").write_text(BUGGY)
    result = cli("fix", ".", cwd=tmp_path)
    errors = sorted(line for line in result.stderr.splitlines() if line.startswith("error:"))
    assert errors[0].startswith("error: edited.py: has unstaged changes")
    assert errors[1].startswith("error: untracked.py: is not tracked by git") and "`git add` it first" in errors[1]
    assert "fixable with `semfix fix`" not in result.stderr
    assert "2 problems left; 2 in files with errors, not fixed; 2 files could not be processed" in result.stderr


def test_workers_change_neither_the_results_nor_their_order(tmp_path: Path) -> None:
    """`-j 3` against `-j 1` on a tree with findings, fixes, clean and skimmed kernels, a syntax
    error and a binary file: the same output, byte for byte, the same exit and the same files."""
    serial, pooled = tmp_path / "serial", tmp_path / "pooled"
    for tree in (serial, pooled):
        (tree / "sub").mkdir(parents=True)
        (tree / "pyproject.toml").write_text("[project]\nname = 't'\n")
        for index in range(9):
            folder = tree / ("sub" if index % 2 else "")
            (folder / f"k{index}.py").write_text(BUGGY.replace("kernel", f"kernel{index}") + "x = 1\n" * index)
        (tree / "sub" / "broken.py").write_text(BUGGY + "def (:\n")
        (tree / "clean.py").write_text(CORRECT_KERNEL)
        (tree / "binary.py").write_bytes(b"pl.semaphore_wait\0")
    for command in (["check", "--output-format", "concise"], ["fix", "--diff"], ["fix", "--allow-dirty"]):
        runs = [cli(*command, "-j", jobs, ".", cwd=tree) for jobs, tree in (("1", serial), ("3", pooled))]
        shown = [(r.returncode, r.stdout, re.sub(r"[\d.]+ s\.", "", r.stderr)) for r in runs]  # but the time
        assert shown[0] == shown[1], command
        assert "broken.py" in runs[0].stdout + runs[0].stderr
    for path in serial.rglob("*.py"):
        assert path.read_bytes() == (pooled / path.relative_to(serial)).read_bytes()
