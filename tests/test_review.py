"""Review mode on real git repositories, and the formats it speaks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ORIGINAL = (
    "from jax.experimental import pallas as pl\n"
    "from jax.experimental.pallas import tpu as pltpu\n"
    "\n"
    "\n"
    "def old_kernel(x, y, sem):\n"
    "    pl.semaphore_wait(sem[...])  # old bug, not this branch's doing\n"
    "\n"
    "\n"
    "def kernel(x, y, sem, sems, i):\n"
    "    pl.semaphore_signal(sem, 1)\n"
)
BRANCH = ORIGINAL.replace(
    "    pl.semaphore_signal(sem, 1)\n",
    "    pl.semaphore_signal(sem[()], 1)\n"
    "    pltpu.make_async_copy(x, y, sems.at[i][...]).start()\n"
    "    pl.semaphore_wait(sems.at[i], 1)\n"
    '    label = "caf\\u00e9"; pl.semaphore_read(sem[...])\n',
)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture(autouse=True)
def _outside_a_pull_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests name their own trunk, whatever CI this suite runs in."""
    for variable in ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def branch(tmp_path: Path) -> Path:
    """A repository with main, a feature branch that edits some lines, and a new file."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernels.py").write_text(ORIGINAL)
    (tmp_path / "pkg" / "untouched.py").write_text(ORIGINAL)
    (tmp_path / "notes.md").write_text("notes\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "main")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    (tmp_path / "pkg" / "kernels.py").write_text(BRANCH)
    (tmp_path / "pkg" / "new.py").write_text("from jax.experimental import pallas as pl\npl.semaphore_signal(s[...])\n")
    (tmp_path / "notes.md").write_text("more notes\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "feature")
    return tmp_path


def test_only_findings_on_changed_lines(branch: Path) -> None:
    result = cli("review", "--format", "json", cwd=branch)
    assert result.returncode == 1, result.stderr
    found = [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]
    assert found == [
        ("pkg/kernels.py", 10, "SEM001"),
        ("pkg/kernels.py", 11, "SEM001"),
        ("pkg/kernels.py", 13, "SEM001"),
        ("pkg/new.py", 2, "SEM001"),
    ]
    assert "compared with" in result.stderr


NESTED = """\
from jax.experimental import pallas as pl


def kernel(x_hbm, o_hbm, sems):
    sem = sems.at[0]

    def signal():
        pl.semaphore_signal(sem, 1)

    signal()
"""
KINDS = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_hbm, sem):
    pl.semaphore_signal(sem)
    pl.semaphore_wait(sem)


def run(x, out_shape):
    return pl.pallas_call(kernel, out_shape=out_shape, scratch_shapes=[pltpu.SemaphoreType.REGULAR])(x)
"""


def test_a_finding_counts_where_its_evidence_changed(tmp_path: Path) -> None:
    """A branch that changes only the assignment a use carries (SEM003), or only the allocation
    a kind is read from (SEM006), breaks lines it did not touch: those findings are its doing."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "nested.py").write_text(NESTED)
    (tmp_path / "kinds.py").write_text(KINDS)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "main")
    assert cli("review", cwd=tmp_path).returncode == 0
    git(tmp_path, "checkout", "-q", "-b", "feature")
    (tmp_path / "nested.py").write_text(NESTED.replace("sems.at[0]", "sems[0]"))
    (tmp_path / "kinds.py").write_text(KINDS.replace("REGULAR", "DMA"))
    result = cli("review", "--format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = [(f["path"], f["line"], f["rule"]) for f in json.loads(result.stdout)]
    assert found == [("kinds.py", 6, "SEM006"), ("kinds.py", 7, "SEM006"), ("nested.py", 8, "SEM003")]


def test_a_changed_file_whose_name_holds_a_space(branch: Path) -> None:
    """git ends a patch header's name holding a space with a tab: the name Colab gives a copy."""
    for name in ("Copy of new.py", "tab\there.py", 'q"uote.py'):
        (branch / "pkg" / name).write_text((branch / "pkg" / "new.py").read_text())
    git(branch, "add", ".")
    found = [(f["path"], f["line"]) for f in json.loads(cli("review", "--format", "json", cwd=branch).stdout)]
    assert [f for f in found if f[0] not in ("pkg/kernels.py", "pkg/new.py")] == [
        ("pkg/Copy of new.py", 2),
        ('pkg/q"uote.py', 2),
        ("pkg/tab\there.py", 2),
    ]


def test_base_defaults_and_explicit_base(branch: Path) -> None:
    head = cli("review", "--base", "HEAD", cwd=branch)
    assert head.returncode == 0 and head.stdout == ""  # nothing changed since HEAD
    (branch / "pkg" / "kernels.py").write_text(BRANCH + "pl.semaphore_wait(y[...])\n")  # an unstaged edit
    unstaged = cli("review", "--base", "HEAD", "--format", "json", cwd=branch)
    assert [f["line"] for f in json.loads(unstaged.stdout)] == [14]
    missing = cli("review", "--base", "no-such-rev", cwd=branch)
    assert missing.returncode == 2 and "no-such-rev" in missing.stderr


def test_text_format_shows_each_suggestion_as_a_diff(branch: Path) -> None:
    result = cli("review", cwd=branch)
    assert "pkg/kernels.py:11:33: SEM001 [*]" in result.stdout
    assert "-    pltpu.make_async_copy(x, y, sems.at[i][...]).start()\n" in result.stdout
    assert "+    pltpu.make_async_copy(x, y, sems.at[i]).start()\n" in result.stdout
    assert "\x1b[" not in result.stdout  # no color when piped


GITHUB_LINE = re.compile(r"^::error file=[^,:]+,line=\d+,col=\d+,endLine=\d+,endColumn=\d+,title=[^:]+::.+$")


def test_github_annotations_follow_the_workflow_command_syntax(branch: Path) -> None:
    lines = cli("review", "--format", "github", cwd=branch).stdout.splitlines()
    assert len(lines) == 4 and all(GITHUB_LINE.match(line) for line in lines), lines


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _offset(lines: list[str], line: int, column: int) -> int:
    return sum(len(x) for x in lines[: line - 1]) + column - 1


def test_review_suggestions_are_those_of_check_on_changed_lines(branch: Path) -> None:
    reviewed = json.loads(cli("review", "--format", "rdjson", cwd=branch).stdout)["diagnostics"]
    checked = json.loads(cli("check", "pkg", "--format", "rdjson", cwd=branch).stdout)["diagnostics"]
    assert reviewed and all(d in checked for d in reviewed) and len(checked) == len(reviewed) + 2


def test_rdjson_and_sarif_suggestions_give_what_fix_gives(branch: Path) -> None:
    rdjson = json.loads(cli("check", "pkg", "--format", "rdjson", cwd=branch).stdout)
    sarif = json.loads(cli("check", "pkg", "--format", "sarif", cwd=branch).stdout)
    original = {p: (branch / p).read_text() for p in ("pkg/kernels.py", "pkg/new.py")}
    subprocess.run([sys.executable, "-m", "semfix", "fix", "pkg/kernels.py", "pkg/new.py"], cwd=branch, check=False)
    fixed = {p: (branch / p).read_text() for p in original}

    for path, text in original.items():
        lines = text.splitlines(keepends=True)
        byte_lines = [line.encode() for line in lines]

        def from_bytes(line: int, column: int) -> int:  # rdjson columns are UTF-8 bytes; called in this iteration only
            return sum(len(x) for x in lines[: line - 1]) + len(byte_lines[line - 1][: column - 1].decode())  # noqa: B023

        rd_edits = [
            (
                from_bytes(s["range"]["start"]["line"], s["range"]["start"]["column"]),
                from_bytes(s["range"]["end"]["line"], s["range"]["end"]["column"]),
                s["text"],
            )
            for d in rdjson["diagnostics"]
            if d["location"]["path"] == path
            for s in d.get("suggestions", [])
        ]
        assert _apply(text, rd_edits) == fixed[path]
        sarif_edits = [
            (
                _offset(lines, r["deletedRegion"]["startLine"], r["deletedRegion"]["startColumn"]),
                _offset(lines, r["deletedRegion"]["endLine"], r["deletedRegion"]["endColumn"]),
                r["insertedContent"]["text"],
            )
            for result in sarif["runs"][0]["results"]
            for fix in result.get("fixes", [])
            for change in fix["artifactChanges"]
            if change["artifactLocation"]["uri"] == path
            for r in change["replacements"]
        ]
        assert _apply(text, sarif_edits) == fixed[path]


def test_check_accepts_the_same_formats(branch: Path) -> None:
    for output_format in ("json", "github", "sarif", "rdjson"):
        result = cli("check", "pkg", "--format", output_format, cwd=branch)
        assert result.returncode == 1
        if output_format != "github":
            json.loads(result.stdout)


def test_review_never_writes(branch: Path) -> None:
    before = (branch / "pkg" / "kernels.py").read_bytes()
    cli("review", cwd=branch)
    assert (branch / "pkg" / "kernels.py").read_bytes() == before


def test_github_and_sarif_paths_are_from_the_repository_root(branch: Path) -> None:
    """A workflow step with `working-directory: pkg` must still annotate pkg/new.py."""
    github = cli("check", "new.py", "--format", "github", cwd=branch / "pkg").stdout
    assert github.startswith("::error file=pkg/new.py,line=2,")
    sarif = json.loads(cli("check", "new.py", "--format", "sarif", cwd=branch / "pkg").stdout)
    [result] = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/new.py"
    assert "pypi.org" not in json.dumps(sarif) and "informationUri" not in sarif["runs"][0]["tool"]["driver"]


def test_default_base_finds_a_trunk_named_master(branch: Path) -> None:
    git(branch, "branch", "-m", "main", "master")
    result = cli("review", "--format", "json", cwd=branch)
    assert result.returncode == 1, result.stderr
    expected = [("pkg/kernels.py", 10), ("pkg/kernels.py", 11), ("pkg/kernels.py", 13), ("pkg/new.py", 2)]
    assert [(f["path"], f["line"]) for f in json.loads(result.stdout)] == expected
    git(branch, "branch", "-m", "master", "trunk")  # any name, as long as origin/HEAD names it
    git(branch, "update-ref", "refs/remotes/origin/trunk", "trunk")
    git(branch, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    remote = cli("review", "--format", "json", cwd=branch)
    assert [(f["path"], f["line"]) for f in json.loads(remote.stdout)] == expected


def test_base_accepts_the_merge_base_syntax(branch: Path) -> None:
    git(branch, "checkout", "-q", "main")
    (branch / "notes.md").write_text("main moved on\n")
    git(branch, "commit", "-qam", "main moves")
    git(branch, "checkout", "-q", "feature")
    merged = cli("review", "--base", "main...HEAD", "--format", "json", cwd=branch)
    assert merged.returncode == 1, merged.stderr
    assert len(json.loads(merged.stdout)) == 4
    short = cli("review", "--base", "main...", "--format", "json", cwd=branch)
    assert short.stdout == merged.stdout
    assert cli("review", "--base", "nope...HEAD", cwd=branch).returncode == 2


def test_a_trunk_by_any_other_name(branch: Path) -> None:
    """No main, master or origin: the CI's target branch or init.defaultBranch names the trunk;
    with none of them, review compares with HEAD and says so."""
    git(branch, "branch", "-m", "main", "trunk")
    alone = cli("review", "--format", "json", cwd=branch)
    assert alone.returncode == 0 and json.loads(alone.stdout) == []
    assert "no trunk found" in alone.stderr and "--base" in alone.stderr
    expected = [("pkg/kernels.py", 10), ("pkg/kernels.py", 11), ("pkg/kernels.py", 13), ("pkg/new.py", 2)]
    for variable in ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"):
        in_ci = subprocess.run(
            [sys.executable, "-m", "semfix", "review", "--format", "json"],
            cwd=branch,
            capture_output=True,
            text=True,
            env={**os.environ, variable: "trunk"},
            check=False,
        )
        assert [(f["path"], f["line"]) for f in json.loads(in_ci.stdout)] == expected, (variable, in_ci.stderr)
    git(branch, "config", "init.defaultBranch", "trunk")
    configured = cli("review", "--format", "json", cwd=branch)
    assert [(f["path"], f["line"]) for f in json.loads(configured.stdout)] == expected
    assert "no trunk found" not in configured.stderr


def test_a_file_that_cannot_be_processed_is_in_every_machine_format(branch: Path) -> None:
    """Not only on stderr: a CI reading stdout must see the file it could not check."""
    (branch / "pkg" / "broken.py").write_text("from jax.experimental import pallas as pl\npl.semaphore_wait(\n")
    git(branch, "add", "pkg/broken.py")  # staged: review lists it
    reason = "syntax error at line 2, column 18: '(' was never closed"
    for command in ("check", "review"):
        outputs = {f: cli(command, "--format", f, cwd=branch) for f in ("json", "github", "sarif", "rdjson")}
        assert all(r.returncode == 2 for r in outputs.values()), {f: r.stderr for f, r in outputs.items()}
        errors = [e for e in json.loads(outputs["json"].stdout) if e.get("error")]
        assert [(e["path"], e["rule"], e["message"]) for e in errors] == [("pkg/broken.py", None, reason)]
        assert f"::error file=pkg/broken.py,title=semfix%3A file not processed::{reason}\n" in outputs["github"].stdout
        [invocation] = json.loads(outputs["sarif"].stdout)["runs"][0]["invocations"]
        assert invocation["executionSuccessful"] is False
        [notice] = invocation["toolExecutionNotifications"]
        assert notice["level"] == "error" and notice["message"]["text"] == reason
        assert notice["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/broken.py"
        diagnostics = json.loads(outputs["rdjson"].stdout)["diagnostics"]
        [failed] = [d for d in diagnostics if "code" not in d]
        assert failed == {"message": reason, "location": {"path": "pkg/broken.py"}, "severity": "ERROR"}
    clean = json.loads(cli("check", "pkg/new.py", "--format", "sarif", cwd=branch).stdout)["runs"][0]
    assert clean["invocations"] == [{"executionSuccessful": True, "toolExecutionNotifications": []}]


def _in_ci(cwd: Path, *args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **variables}
    command = [sys.executable, "-m", "semfix", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env, check=False)


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_a_target_branch_that_is_not_here_is_an_error_not_a_silent_pass(branch: Path) -> None:
    result = _in_ci(branch, "review", "--format", "github", GITHUB_BASE_REF="release-9")
    [line] = _error_lines(result.stderr)
    assert result.returncode == 2 and result.stdout == f"::error title=semfix review::{line[len('error: ') :]}\n"
    assert "GITHUB_BASE_REF" in line and "'release-9'" in line and "origin/release-9" in line
    assert "fetch-depth: 0" in line and "--base" in line
    gitlab = _in_ci(branch, "review", CI_MERGE_REQUEST_TARGET_BRANCH_NAME="release-9")
    assert gitlab.returncode == 2 and "CI_MERGE_REQUEST_TARGET_BRANCH_NAME" in gitlab.stderr
    assert _in_ci(branch, "review", "--base", "main", GITHUB_BASE_REF="release-9").returncode == 1  # --base wins


@pytest.fixture
def shallow(branch: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What actions/checkout makes by default: the branch's last commit alone, main moved on."""
    git(branch, "checkout", "-q", "main")
    (branch / "notes.md").write_text("main moved on\n")
    git(branch, "commit", "-qam", "main moves")  # main stays checked out: the clone gets no origin/HEAD
    clone = tmp_path_factory.mktemp("shallow") / "clone"
    git(branch.parent, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{branch}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    return clone


def test_a_shallow_checkout_is_an_error_not_a_silent_pass(shallow: Path) -> None:
    for variables in ({"GITHUB_BASE_REF": "main"}, {}):  # a pull request; a push, no trunk to be found
        result = _in_ci(shallow, "review", "--format", "json", **variables)
        assert result.returncode == 2, (variables, result.stderr)
        [line] = _error_lines(result.stderr)
        assert "fetch-depth: 0" in line and "shallow" in line, line
        [entry] = json.loads(result.stdout)  # never an empty list a reader takes for a pass
        assert (entry["error"], entry["path"], entry["message"]) == (True, None, line[len("error: ") :])
    git(shallow, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")  # main, but not its history
    result = _in_ci(shallow, "review", GITHUB_BASE_REF="main")
    [line] = _error_lines(result.stderr)
    assert result.returncode == 2 and "no merge base of HEAD and origin/main" in line and "fetch-depth: 0" in line
    merge_base = _in_ci(shallow, "review", "--base", "origin/main...HEAD")
    assert merge_base.returncode == 2 and "fetch-depth: 0" in merge_base.stderr
    git(shallow, "fetch", "-q", "--unshallow", "origin")
    assert _in_ci(shallow, "review", GITHUB_BASE_REF="main").returncode == 1  # full history: the findings
