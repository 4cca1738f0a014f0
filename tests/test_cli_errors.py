"""Errors that stop a run before any file is checked: each is one line naming its cause, exit 2,
never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"


def semfix(*args: str, cwd: Path, **variables: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in ("GITHUB_BASE_REF", "GIT_DIR")}
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**env, **variables},
    )


@pytest.mark.parametrize("variables", [{}, {"GITHUB_BASE_REF": "main"}], ids=["locally", "in-ci"])
def test_review_outside_git_is_one_error(tmp_path: Path, variables: dict[str, str]) -> None:
    """Not a warning that no trunk was found and then an error: the one cause, once."""
    (tmp_path / "k.py").write_text(BUGGY)
    # git must not find a repository above tmp_path (the test may run inside one).
    outside = {"GIT_CEILING_DIRECTORIES": str(tmp_path.parent), **variables}
    result = semfix("review", cwd=tmp_path, **outside)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: not in a git work tree: review reads the changed lines from git; "
        "use `semfix check` for files outside one"
    ]
    assert result.stdout == ""
