"""ruff's habits (issue 37, items 4-9): where ruff has the same command, it runs beside semfix
on a file of the same shape, and the two answer alike (exit status, what is written, the
order and columns of what is printed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is a test dependency")

KERNEL = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sem, sems, i):\n"
    "    pl.semaphore_signal(sem[...], 2)\n"  # SEM001: a safe fix
    "    pl.semaphore_signal(sems[i], 1)\n"  # SEM002: an unsafe fix (nothing shows `sems` is a Ref)
)
#: The same shape for ruff: F401 has a safe fix, E711 an unsafe one.
LINTED = "import os\nx = 1\nif x == None:\n    pass\n"
RUFF_RULES = ("--select", "F401,E711")


def semfix(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


def ruff(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert RUFF is not None
    command = [RUFF, args[0], "--no-cache", "--isolated", *RUFF_RULES, *args[1:]]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def both(tmp_path: Path) -> Path:
    """`ruff/x.py` and `semfix/k.py`: one fixable and one unsafe-fixable finding each."""
    (tmp_path / "ruff").mkdir()
    (tmp_path / "ruff" / "x.py").write_text(LINTED)
    (tmp_path / "semfix").mkdir()
    (tmp_path / "semfix" / "k.py").write_text(KERNEL)
    return tmp_path


# Item 4: `check --fix`, with `--unsafe-fixes` and `--diff`.


@needs_ruff
@pytest.mark.parametrize(
    ("options", "code", "written"),
    [
        (("--fix",), 1, True),  # the unsafe fix is left: exit 1
        (("--fix", "--unsafe-fixes"), 0, True),  # nothing left: exit 0
        (("--diff",), 1, False),  # a dry run fails on what it would fix
        (("--fix", "--diff"), 1, False),
    ],
)
def test_check_fix_works_as_in_ruff(both: Path, options: tuple[str, ...], code: int, written: bool) -> None:
    theirs = ruff("check", *options, "x.py", cwd=both / "ruff")
    ours = semfix("check", *options, "k.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (code, code), ours.stderr
    assert ((both / "ruff" / "x.py").read_text() != LINTED) == written
    assert ((both / "semfix" / "k.py").read_text() != KERNEL) == written
    if "--diff" in options:
        assert theirs.stdout.startswith("--- ") and ours.stdout.startswith("--- a/k.py\n+++ b/k.py\n@@ ")
