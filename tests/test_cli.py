"""The installed command, run for real in a subprocess on a temporary folder."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BUGGY = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sem):\n"
    "    pl.semaphore_signal(sem[...], 2)\n"
    "    pl.semaphore_wait(sem[()], 2)\n"
)
FIXED = BUGGY.replace("sem[...]", "sem").replace("sem[()]", "sem")
CLEAN = "import numpy as np\n\nx = np.zeros(3)[...]\n"


def semfix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "kernel.py").write_text(BUGGY)
    (tmp_path / "pkg" / "util.py").write_text(CLEAN)
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "vendored.py").write_text(BUGGY)
    return tmp_path


def test_fix_rewrites_in_place_then_settles(tree: Path) -> None:
    first = semfix("fix", cwd=tree)
    assert first.returncode == 0, first.stderr  # everything fixed, nothing left
    assert first.stdout.splitlines() == [
        f"{Path('pkg/kernel.py')}:5:25: SEM001 [fixed] `sem[...]` reads a value out of the semaphore Ref; "
        "pass the Ref `sem`",
        f"{Path('pkg/kernel.py')}:6:23: SEM001 [fixed] `sem[()]` reads a value out of the semaphore Ref; "
        "pass the Ref `sem`",
    ]
    assert "Fixed 2 problems in 1 file. 2 files scanned, 1 parsed, 1 changed, 0 errors" in first.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED
    assert (tree / ".venv" / "vendored.py").read_text() == BUGGY  # excluded folder
    second = semfix("fix", ".", cwd=tree)
    assert second.returncode == 0 and second.stdout == ""
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED


def test_diff_writes_nothing_and_applies_cleanly(tree: Path) -> None:
    result = semfix("fix", "--diff", "pkg", cwd=tree)
    assert result.returncode == 1, result.stderr
    assert result.stdout.startswith("--- a/pkg/kernel.py\n+++ b/pkg/kernel.py\n@@ ")
    assert (tree / "pkg" / "kernel.py").read_text() == BUGGY
    if shutil.which("git") is None:
        pytest.skip("git is needed to apply the diff")
    (tree / "change.diff").write_text(result.stdout)
    subprocess.run(["git", "apply", "change.diff"], cwd=tree, check=True)
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED


def test_diff_of_a_file_without_final_newline_applies(tmp_path: Path) -> None:
    target = tmp_path / "k.py"
    target.write_bytes(BUGGY.rstrip("\n").encode())
    result = semfix("fix", "--diff", "k.py", cwd=tmp_path)
    assert "\\ No newline at end of file" in result.stdout
    (tmp_path / "change.diff").write_text(result.stdout)
    subprocess.run(["git", "apply", "change.diff"], cwd=tmp_path, check=True)
    assert target.read_bytes() == FIXED.rstrip("\n").encode()


@pytest.mark.parametrize("tool", [["git", "apply"], ["patch", "-s", "-p1", "-i"]])
def test_diff_of_lone_cr_lines_and_a_spaced_name_applies(tmp_path: Path, tool: list[str]) -> None:
    """Both tools split lines at LF alone and `patch` ends a name at a tab: the diff must agree."""
    if shutil.which(tool[0]) is None:
        pytest.skip(f"{tool[0]} is needed to apply the diff")
    target = tmp_path / "my kernel.py"
    target.write_bytes(BUGGY.replace("\n", "\r").encode())
    command = [sys.executable, "-m", "semfix", "fix", "--diff", "my kernel.py"]
    diff = subprocess.run(command, cwd=tmp_path, capture_output=True, check=False).stdout  # bytes: CRs kept
    (tmp_path / "change.diff").write_bytes(diff)
    subprocess.run([*tool, "change.diff"], cwd=tmp_path, check=True)
    assert target.read_bytes() == FIXED.replace("\n", "\r").encode()


def test_check_flag_exit_codes(tree: Path) -> None:
    dirty = semfix("fix", "--check", "pkg", cwd=tree)
    assert dirty.returncode == 1
    assert "Would fix 2 problems in 1 file" in dirty.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == BUGGY
    clean = semfix("fix", "--check", "pkg/util.py", cwd=tree)
    assert clean.returncode == 0, clean.stderr


def test_check_command_lists_findings_only(tree: Path) -> None:
    result = semfix("check", "pkg", cwd=tree)
    assert result.returncode == 1
    assert [line.split(": ", 1)[0] for line in result.stdout.splitlines()] == [
        f"{Path('pkg/kernel.py')}:5:25",
        f"{Path('pkg/kernel.py')}:6:23",
    ]
    assert all("SEM001 [*] " in line for line in result.stdout.splitlines())
    assert "Found 2 problems" not in result.stderr and "2 problems found; 2 fixable" in result.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == BUGGY


def test_a_bad_file_is_named_and_the_rest_still_fixed(tree: Path) -> None:
    broken = "from jax.experimental import pallas as pl\n\ndef k(sem:\n    pl.semaphore_wait(sem[...])\n"
    (tree / "pkg" / "broken.py").write_text(broken)
    result = semfix("fix", "pkg", "missing.py", cwd=tree)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith(("error:", "warning:"))]
    assert errors == [
        "warning: missing.py: no such file or folder",  # other files were checked: a warning, as in ruff
        f"error: {Path('pkg/broken.py')}: syntax error at line 3, column 6: '(' was never closed",
    ]
    assert "Traceback" not in result.stderr
    assert (tree / "pkg" / "broken.py").read_text() == broken
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED


def test_permission_bits_are_kept(tree: Path) -> None:
    target = tree / "pkg" / "kernel.py"
    target.chmod(0o754)
    assert semfix("fix", "pkg", cwd=tree).returncode == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o754
    assert [p.name for p in (tree / "pkg").iterdir() if p.name.startswith(".")] == []


def test_installed_script_matches_module(tree: Path) -> None:
    script = shutil.which("semfix", path=os.path.dirname(sys.executable))
    if script is None:
        pytest.skip("semfix is not installed as a script next to this Python")
    result = subprocess.run([script, "check", "pkg"], cwd=tree, capture_output=True, text=True)
    assert result.stdout == semfix("check", "pkg", cwd=tree).stdout
    assert result.returncode == 1


def test_usage_error_exits_2(tree: Path) -> None:
    result = semfix("fix", "--no-such-flag", cwd=tree)
    assert result.returncode == 2
    assert "No such option" in result.stderr


UNPROVEN = (
    "from jax.experimental import pallas as pl\n"
    "import jax.experimental.pallas.tpu as pltpu\n"
    "\n"
    "\n"
    "def helper(sems, sem, i):\n"
    "    pl.semaphore_signal(sems[i], 1)\n"
    "    pltpu.semaphore_wait(sem, dec=1)\n"
)


def test_unsafe_fixes_and_selection_on_the_command_line(tmp_path: Path) -> None:
    target = tmp_path / "k.py"
    target.write_text(UNPROVEN)
    reported = semfix("check", "k.py", cwd=tmp_path)
    assert reported.returncode == 1
    assert reported.stdout.count("\n") == 1 and "SEM002" in reported.stdout and "--unsafe-fixes" in reported.stdout
    assert "1 fixable with `semfix fix --unsafe-fixes`" in reported.stderr
    assert semfix("check", "k.py", "--ignore", "SEM0", cwd=tmp_path).returncode == 0
    migrated = semfix("fix", "k.py", "--select", "SEM1", "--target-jax", "0.7.2", cwd=tmp_path)
    assert migrated.returncode == 0, migrated.stderr
    assert target.read_text() == UNPROVEN.replace("import jax.experimental.pallas.tpu as pltpu\n", "").replace(
        "pltpu.semaphore_wait(sem, dec=1)", "pl.semaphore_wait(sem, value=1)"
    )
    fixed = semfix("fix", "k.py", "--unsafe-fixes", cwd=tmp_path)
    assert fixed.returncode == 0 and "sems.at[i], 1)" in target.read_text()
    assert semfix("fix", "k.py", "--unsafe-fixes", "--select", "SEM", cwd=tmp_path).returncode == 0


def test_pyproject_settings_are_found_from_the_paths(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nextend-select = ["SEM102"]\nunsafe-fixes = true\n')
    (tmp_path / "pkg").mkdir()
    target = tmp_path / "pkg" / "k.py"
    target.write_text(UNPROVEN)
    elsewhere = tmp_path / "pkg"
    result = semfix("fix", "k.py", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert "pl.semaphore_signal(sems.at[i], 1)" in target.read_text()
    assert "pltpu.semaphore_wait(sem, 1)" in target.read_text()  # no JAX floor declared: by position
    overridden = semfix("check", "k.py", "--no-unsafe-fixes", "--select", "SEM002", cwd=elsewhere)
    assert overridden.returncode == 0


def test_bad_settings_are_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(UNPROVEN)
    unknown = semfix("check", "k.py", "--select", "SEM9", cwd=tmp_path)
    assert unknown.returncode == 2 and "unknown rule selector 'SEM9'" in unknown.stderr
    (tmp_path / "pyproject.toml").write_text("[tool.semfix]\nselekt = ['SEM001']\n")
    typo = semfix("check", "k.py", cwd=tmp_path)
    assert typo.returncode == 2 and "unknown key(s): selekt" in typo.stderr
    assert "Traceback" not in unknown.stderr + typo.stderr


def test_rules_lists_every_rule() -> None:
    from semfix.rules import RULES

    result = semfix("rules", cwd=Path.cwd())
    assert result.returncode == 0
    listed = [line.split() for line in result.stdout.splitlines() if line[:3] == "SEM"]
    assert listed == [[rule.code, rule.name] for rule in RULES.values()]
    for rule in RULES.values():
        assert f"fix: {rule.fix}; default: {'on' if rule.gate.default else 'off'}" in result.stdout
        assert rule.summary in result.stdout


def test_rules_code_prints_the_docs_and_every_example() -> None:
    from semfix.rules import RULES

    rule = RULES["SEM101"]
    result = semfix("rules", "sem101", cwd=Path.cwd())
    assert result.returncode == 0
    assert "## Why is this bad?" in result.stdout and "removed in 0.11" in result.stdout
    for example in rule.invalid:
        assert example.source.rstrip() in result.stdout and (example.fixed or "").rstrip() in result.stdout
    assert "(with --select SEM101 --target-jax 0.6)" in result.stdout
    unknown = semfix("rules", "SEM9", cwd=Path.cwd())
    assert unknown.returncode == 2 and "unknown rule 'SEM9'" in unknown.stderr


def test_stdin_round_trip_uses_the_named_files_settings(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.semfix]\nignore = ["SEM001"]\n')
    source = BUGGY
    plain = subprocess.run(
        [sys.executable, "-m", "semfix", "fix", "-", "--stdin-filename", "k.py"],
        cwd=tmp_path,
        input=source,
        capture_output=True,
        text=True,
    )
    assert plain.returncode == 0 and plain.stdout == FIXED and "k.py:5:25: SEM001" in plain.stderr
    ignored = subprocess.run(
        [sys.executable, "-m", "semfix", "fix", "-", "--stdin-filename", "proj/k.py"],
        cwd=tmp_path,
        input=source,
        capture_output=True,
        text=True,
    )
    assert ignored.returncode == 0 and ignored.stdout == source
    broken = subprocess.run(
        [sys.executable, "-m", "semfix", "fix", "-"],
        cwd=tmp_path,
        input="from jax.experimental import pallas as pl\npl.semaphore_wait(\n",
        capture_output=True,
        text=True,
    )
    assert broken.returncode == 2 and broken.stdout == "from jax.experimental import pallas as pl\npl.semaphore_wait(\n"


# Issue 12, items 8 to 11: what `fix` and `check` say, and standard input.


def test_findings_survive_a_fix_that_fails_its_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process (one job), so the proof can be made to fail without a real bug to trigger it."""
    from click.testing import CliRunner

    import semfix.cli.runner
    from semfix.cli.main import main
    from semfix.errors import SafetyError

    real = semfix.cli.runner.fix_source

    def failing_proof(source: bytes, *, settings: object, apply_fixes: bool) -> object:
        if apply_fixes:
            raise SafetyError("a change no rule declares at line 1")
        return real(source, settings=settings, apply_fixes=apply_fixes)  # type: ignore[arg-type]

    monkeypatch.setattr(semfix.cli.runner, "fix_source", failing_proof)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(BUGGY)
    result = CliRunner().invoke(main, ["fix", "-j", "1", "k.py"])
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [
        "k.py:5:25: SEM001 [*] `sem[...]` reads a value out of the semaphore Ref; pass the Ref `sem`",
        "k.py:6:23: SEM001 [*] `sem[()]` reads a value out of the semaphore Ref; pass the Ref `sem`",
    ]
    assert "error: k.py: internal error, file left unchanged" in result.stderr
    assert "2 problems left; 2 in files with errors, not fixed; 1 file could not be processed" in result.stderr
    assert "No problems found" not in result.stderr and "fixable with `semfix fix`" not in result.stderr
    assert (tmp_path / "k.py").read_text() == BUGGY


def test_no_problems_found_is_never_said_of_a_file_not_checked(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("from jax.experimental import pallas as pl\npl.semaphore_wait(\n")
    result = semfix("check", "broken.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "No problems found" not in result.stderr and "1 file could not be processed" in result.stderr


def test_check_with_unsafe_fixes_marks_them_fixable(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(UNPROVEN)
    result = semfix("check", "k.py", "--unsafe-fixes", cwd=tmp_path)
    assert result.returncode == 1
    assert "SEM002 [*] " in result.stdout
    assert "; 1 fixable with `semfix fix --unsafe-fixes`." in result.stderr and "more with" not in result.stderr


def test_help_promises_only_what_each_command_does(tmp_path: Path) -> None:
    check_help = " ".join(semfix("check", "--help", cwd=tmp_path).stdout.split())
    review_help = " ".join(semfix("review", "--help", cwd=tmp_path).stdout.split())
    assert "diff of its suggestion" not in check_help and "with a diff of its suggestion" in review_help
    assert "Also apply" not in check_help and "only a fix (`fix`, `check --fix`) with this option applies" in check_help


def test_a_dry_run_report_agrees_with_itself_and_says_it_is_dry(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix("fix", "--diff", "k.py", "--report", "report.json", cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["command"] == "fix --diff" and report["dry_run"] is True
    assert [entry["changed"] for entry in report["files"]] == [True]
    assert (report["totals"]["files_changed"], report["totals"]["fixes_applied"]) == (1, 2)
    assert (tmp_path / "k.py").read_text() == BUGGY


def test_fix_marks_only_what_it_wrote(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(
        UNPROVEN.replace(
            "pl.semaphore_signal(sems[i], 1)", "pl.semaphore_signal(sems[i], 1)\n    pl.semaphore_wait(sem[...])"
        )
    )
    result = semfix("fix", "k.py", cwd=tmp_path)
    assert result.returncode == 1
    [unsafe, fixed] = result.stdout.splitlines()
    assert "SEM002 `sems[i]`" in unsafe and "SEM001 [fixed] `sem[...]`" in fixed
    dry = semfix("fix", "--check", "k.py", cwd=tmp_path)
    assert "[fixed]" not in dry.stdout


def test_a_missing_path_is_not_called_a_file(tmp_path: Path) -> None:
    result = semfix("check", "nope.py", cwd=tmp_path)
    assert result.returncode == 2 and "error: nope.py: no such file or folder" in result.stderr
    assert "1 path not found or empty" in result.stderr and "could not be processed" not in result.stderr


def test_an_unwritable_report_stops_the_run_before_any_rewrite(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix("fix", "k.py", "--report", "no/such/folder/report.json", cwd=tmp_path)
    assert result.returncode == 2 and "cannot write the report" in result.stderr
    assert (tmp_path / "k.py").read_text() == BUGGY
    assert semfix("check", "k.py", "--report", "fresh.json", cwd=tmp_path).returncode == 1
    assert json.loads((tmp_path / "fresh.json").read_text())["command"] == "check"  # checked, then written


def stdin(*args: str, source: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, input=source, capture_output=True, text=True, check=False
    )


def test_stdin_diff_and_check_print_a_diff_or_nothing(tmp_path: Path) -> None:
    diff = stdin("fix", "--diff", "-", "--stdin-filename", "k.py", source=BUGGY, cwd=tmp_path)
    assert diff.returncode == 1 and diff.stdout.startswith("--- a/k.py\n+++ b/k.py\n@@ ")
    (tmp_path / "k.py").write_text(BUGGY)
    (tmp_path / "change.diff").write_text(diff.stdout)
    subprocess.run(["git", "apply", "change.diff"], cwd=tmp_path, check=True)
    assert (tmp_path / "k.py").read_text() == FIXED
    check = stdin("fix", "--check", "-", source=BUGGY, cwd=tmp_path)
    assert check.returncode == 1 and check.stdout == "" and "-:5:25: SEM001" in check.stderr
    clean = stdin("fix", "--check", "-", source=FIXED, cwd=tmp_path)
    assert clean.returncode == 0 and clean.stdout == ""
    assert stdin("fix", "--diff", "-", source=FIXED, cwd=tmp_path).stdout == ""


def test_stdin_writes_the_report(tmp_path: Path) -> None:
    result = stdin("fix", "-", "--stdin-filename", "k.py", "--report", "report.json", source=BUGGY, cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == FIXED
    report = json.loads((tmp_path / "report.json").read_text())
    assert [entry["path"] for entry in report["files"]] == ["k.py"] and report["totals"]["fixes_applied"] == 2


def test_force_exclude_applies_to_the_stdin_filename(tmp_path: Path) -> None:
    args = ("-", "--stdin-filename", "vendor/k.py", "--exclude", "vendor", "--force-exclude")
    fixed = stdin("fix", *args, source=BUGGY, cwd=tmp_path)
    assert fixed.returncode == 0 and fixed.stdout == BUGGY and fixed.stderr == ""
    checked = stdin("check", *args, source=BUGGY, cwd=tmp_path)
    assert checked.returncode == 0 and checked.stdout == ""
    assert stdin("fix", *args[:-1], source=BUGGY, cwd=tmp_path).stdout == FIXED  # without --force-exclude


def test_check_reads_stdin(tmp_path: Path) -> None:
    found = stdin("check", "-", "--stdin-filename", "k.py", source=BUGGY, cwd=tmp_path)
    assert found.returncode == 1
    assert [line.split(" ", 2)[:2] for line in found.stdout.splitlines()] == [
        ["k.py:5:25:", "SEM001"],
        ["k.py:6:23:", "SEM001"],
    ]
    as_json = stdin("check", "-", "--format", "rdjson", source=BUGGY, cwd=tmp_path)
    assert len(json.loads(as_json.stdout)["diagnostics"]) == 2
    assert stdin("check", "-", source=FIXED, cwd=tmp_path).returncode == 0


def test_review_refuses_stdin(tmp_path: Path) -> None:
    result = stdin("review", "-", source=BUGGY, cwd=tmp_path)
    assert result.returncode == 2 and "semfix check -" in result.stderr


def test_command_line_select_overrides_the_files_extend_select(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nextend-select = ["SEM102"]\nignore = ["SEM002"]\n')
    (tmp_path / "k.py").write_text(UNPROVEN)
    configured = semfix("check", "k.py", cwd=tmp_path).stdout
    assert "SEM102" in configured and "SEM002" not in configured
    selected = semfix("check", "k.py", "--select", "SEM0", cwd=tmp_path)
    assert "SEM102" not in selected.stdout and "SEM002" in selected.stdout
    extended = semfix(
        "check", "k.py", "--select", "SEM0", "--extend-select", "SEM102", "--ignore", "SEM002", cwd=tmp_path
    )
    assert "SEM102" in extended.stdout and "SEM002" not in extended.stdout


def test_a_package_init_keeps_the_tpu_names_it_re_exports(tmp_path: Path) -> None:
    """`from mypkg import semaphore_wait` reads what `mypkg/__init__.py` imports: SEM101 renames
    the package's own reads but drops none of its module-level imports (as ruff's F401 keeps
    them in an `__init__.py`); a kept name moves to `jax.experimental.pallas`, where it is the
    same object from the floor on and still lives after JAX 0.11 (issue 36 item 6)."""
    package = tmp_path / "mypkg"
    package.mkdir()
    source = (
        "import jax\n"
        "from jax.experimental.pallas.tpu import semaphore_wait\n"
        "\n"
        "\n"
        "def kernel(sem):\n"
        "    semaphore_wait(sem, 1)\n"
    )
    for name in ("__init__.py", "module.py"):
        (package / name).write_text(source)
    assert (
        semfix("fix", "--extend-select", "SEM101", "--target-jax", "0.6", "mypkg", cwd=tmp_path).returncode == 0
    )  # fixed
    assert (package / "__init__.py").read_text() == source.replace(
        "import jax\n", "import jax\nfrom jax.experimental import pallas as pl\n"
    ).replace("    semaphore_wait(sem", "    pl.semaphore_wait(sem").replace("pallas.tpu import", "pallas import")
    assert "from jax.experimental import pallas as pl\n\n" in (package / "module.py").read_text()


def test_check_and_fix_agree_on_a_file_cpython_will_not_compile(tmp_path: Path) -> None:
    """`ast.parse` reads `return` at module level, the compiler refuses it: `fix` could never
    write such a file, so `check` may not call its findings fixable. Both exit 2."""
    (tmp_path / "kernel.py").write_text(BUGGY + "\n\nreturn 3\n")
    checked, fixed = semfix("check", "kernel.py", cwd=tmp_path), semfix("fix", "kernel.py", cwd=tmp_path)
    assert (checked.returncode, fixed.returncode) == (2, 2)
    assert "cannot compile" in checked.stderr and "cannot compile" in fixed.stderr
    assert "fixable" not in checked.stdout


def test_fix_exits_zero_when_it_fixed_everything(tree: Path) -> None:
    """As ruff and black: a fix that leaves nothing behind is a success; the old code is opt-in."""
    fixed = semfix("fix", "pkg", cwd=tree)
    assert fixed.returncode == 0, fixed.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED
    (tree / "pkg" / "kernel.py").write_text(BUGGY)
    strict = semfix("fix", "--exit-non-zero-on-fix", "pkg", cwd=tree)
    assert strict.returncode == 1, strict.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED
    assert semfix("fix", "--exit-non-zero-on-fix", "pkg", cwd=tree).returncode == 0  # nothing changed this time
    (tree / "pkg" / "kernel.py").write_text(BUGGY)
    assert semfix("fix", "--check", "pkg", cwd=tree).returncode == 1  # a dry run still fails on what it would fix


def test_fix_exits_one_when_findings_are_left(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(
        BUGGY.replace("sem[...]", "sems[i]").replace("def kernel(sem)", "def kernel(sem, sems, i)")
    )
    left = semfix("fix", "k.py", cwd=tmp_path)
    assert left.returncode == 1, left.stdout + left.stderr


def test_exit_zero_on_check_and_fix(tree: Path) -> None:
    assert semfix("check", "--exit-zero", "pkg", cwd=tree).returncode == 0
    assert semfix("fix", "--exit-zero", "--exit-non-zero-on-fix", "pkg", cwd=tree).returncode == 0
    (tree / "pkg" / "bad.py").write_text(BUGGY + "def f(sem:\n")
    assert semfix("check", "--exit-zero", "pkg", cwd=tree).returncode == 2  # errors still fail


def test_the_fixing_hook_fails_when_it_changed_a_file() -> None:
    """`fix` now exits 0 after fixing everything; the hook must still stop the commit it changed."""
    hooks = (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text()
    fixing = hooks.split("- id: semfix-check")[0]
    assert "args: [--exit-non-zero-on-fix]" in fixing


def test_output_format_is_the_name_and_format_its_alias(tree: Path) -> None:
    named = semfix("check", "--output-format", "json", "pkg", cwd=tree)
    alias = semfix("check", "--format", "json", "pkg", cwd=tree)
    assert named.returncode == alias.returncode == 1 and named.stdout == alias.stdout
    assert [f["rule"] for f in json.loads(named.stdout)] == ["SEM001", "SEM001"]
    fixed = semfix("fix", "--output-format", "json", "pkg", cwd=tree)  # fix's findings list too
    assert fixed.returncode == 0 and [f["rule"] for f in json.loads(fixed.stdout)] == ["SEM001", "SEM001"]


def test_statistics_count_by_rule_as_ruff_does(tree: Path) -> None:
    result = semfix("check", "--statistics", "pkg", cwd=tree)
    assert result.returncode == 1
    assert result.stdout.split() == ["2", "SEM001", "[*]", "value-read-passed-as-semaphore"]


def test_show_fixes_lists_what_fix_applied(tree: Path) -> None:
    result = semfix("fix", "--show-fixes", "pkg", cwd=tree)
    assert result.returncode == 0
    assert f"Fixed 2 problems:\n- {Path('pkg/kernel.py')}:\n    2 × SEM001" in result.stdout


def test_quiet_prints_findings_only_and_silent_nothing(tree: Path) -> None:
    quiet = semfix("check", "-q", "pkg", cwd=tree)
    assert quiet.returncode == 1 and quiet.stdout.count("SEM001") == 2 and quiet.stderr == ""
    silent = semfix("check", "--silent", "pkg", cwd=tree)
    assert silent.returncode == 1 and silent.stdout == silent.stderr == ""
    fixed = semfix("fix", "--silent", "--exit-non-zero-on-fix", "pkg", cwd=tree)
    assert fixed.returncode == 1 and fixed.stdout == fixed.stderr == ""
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED


def test_summary_wording_cannot_be_misread(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(UNPROVEN)
    result = semfix("check", "k.py", cwd=tmp_path)
    assert "1 problem found; 1 fixable with `semfix fix --unsafe-fixes`. " in result.stderr, result.stderr
    assert "more with" not in result.stderr and "(" not in result.stderr.split(".")[0]


def test_check_help_promises_nothing_fix_does(tmp_path: Path) -> None:
    text = " ".join(semfix("check", "--help", cwd=tmp_path).stdout.split())
    assert "every change and finding" not in text and "then applies them" not in text
    assert "check itself changes nothing" in text


def test_releases_are_pinnable() -> None:
    """A version scheme and a changelog a user can pin against, and pre-commit docs saying how."""
    root = Path(__file__).parents[1]
    readme = (root / "README.md").read_text()
    assert "tagged `vX.Y.Z`" in readme and "language_version:" in readme and "pre-commit autoupdate" in readme
    changelog = (root / "CHANGELOG.md").read_text()
    assert "--exit-non-zero-on-fix" in changelog and "semantic versioning" in changelog
