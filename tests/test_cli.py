"""The installed command, run for real in a subprocess on a temporary folder."""

from __future__ import annotations

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
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


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
    assert first.returncode == 1, first.stderr
    assert first.stdout.splitlines() == [
        f"{Path('pkg/kernel.py')}:5:25: SEM001 `sem[...]` reads a value out of the semaphore Ref; pass the Ref `sem`",
        f"{Path('pkg/kernel.py')}:6:23: SEM001 `sem[()]` reads a value out of the semaphore Ref; pass the Ref `sem`",
    ]
    assert "Fixed 2 semaphore arguments in 1 file (2 files checked)." in first.stderr
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


def test_check_flag_exit_codes(tree: Path) -> None:
    dirty = semfix("fix", "--check", "pkg", cwd=tree)
    assert dirty.returncode == 1
    assert "Would fix 2 semaphore arguments in 1 file" in dirty.stderr
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
    assert "Found 2 problems" not in result.stderr and "2 problems found (2 fixable" in result.stderr
    assert (tree / "pkg" / "kernel.py").read_text() == BUGGY


def test_a_bad_file_is_named_and_the_rest_still_fixed(tree: Path) -> None:
    broken = "from jax.experimental import pallas as pl\n\ndef k(sem:\n    pl.semaphore_wait(sem[...])\n"
    (tree / "pkg" / "broken.py").write_text(broken)
    result = semfix("fix", "pkg", "missing.py", cwd=tree)
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: missing.py: no such file or folder",
        f"error: {Path('pkg/broken.py')}: syntax error at line 3, column 6: '(' was never closed",
    ]
    assert "Traceback" not in result.stderr
    assert (tree / "pkg" / "broken.py").read_text() == broken
    assert (tree / "pkg" / "kernel.py").read_text() == FIXED


def test_permission_bits_are_kept(tree: Path) -> None:
    target = tree / "pkg" / "kernel.py"
    target.chmod(0o754)
    assert semfix("fix", "pkg", cwd=tree).returncode == 1
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
