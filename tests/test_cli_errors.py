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


CONFIG_ERRORS = {
    "unknown-code-in-select": (
        '[tool.semfix]\nselect = ["SEM001", "SEM999"]\n',
        "[tool.semfix] select: unknown rule selector 'SEM999' (see `semfix rules`)",
    ),
    "unknown-code-in-ignore": (
        '[tool.semfix]\nignore = "XYZ"\n',
        "[tool.semfix] ignore: unknown rule selector 'XYZ' (see `semfix rules`)",
    ),
    "select-not-a-list": ("[tool.semfix]\nselect = 3\n", "[tool.semfix] select must be a list of rule codes"),
    "unsafe-fixes-not-a-bool": (
        '[tool.semfix]\nunsafe-fixes = "yes"\n',
        "[tool.semfix] unsafe-fixes must be true or false",
    ),
    "extend-exclude-not-a-list": (
        "[tool.semfix]\nextend-exclude = 3\n",
        "[tool.semfix] extend-exclude must be a list of globs",
    ),
    "target-jax-not-a-release": (
        '[tool.semfix]\ntarget-jax = "latest"\n',
        "[tool.semfix] target-jax: not a JAX release number: 'latest' (e.g. \"0.7\")",
    ),
    "target-jax-not-a-string": (
        "[tool.semfix]\ntarget-jax = 0.7\n",
        '[tool.semfix] target-jax must be a JAX release, as a string ("0.7")',
    ),
    "semfix-not-a-table": ("[tool]\nsemfix = 3\n", "[tool.semfix] must be a table"),
    "tool-not-a-table": ("tool = 3\n", "`tool` must be a table"),
    "toml-syntax": (
        "[tool.semfix\nselect = []\n",
        "not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 13)",
    ),
}


@pytest.mark.parametrize("command", ["check", "fix"])
@pytest.mark.parametrize("case", sorted(CONFIG_ERRORS))
def test_a_config_error_names_its_file(tmp_path: Path, case: str, command: str) -> None:
    text, reason = CONFIG_ERRORS[case]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(text)
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix(command, str(tmp_path / "k.py"), cwd=tmp_path)
    assert (result.returncode, result.stderr.splitlines()) == (2, [f"error: {pyproject}: {reason}"])
    assert (tmp_path / "k.py").read_text() == BUGGY


@pytest.mark.parametrize("command", ["check", "fix"])
def test_a_jax_requirement_that_cannot_be_read_is_a_warning(tmp_path: Path, command: str) -> None:
    """A declaration semfix cannot read never stops a run (issue 45): the default rules read no
    floor and say nothing of it; a migration rule's run says once which line it could not read,
    in one line, and goes on with the floor unknown."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["jax>=x"]\n[tool.semfix]\n')
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix(command, str(tmp_path / "k.py"), cwd=tmp_path)
    assert result.returncode == (0 if command == "fix" else 1) and "warning" not in result.stderr, result.stderr
    result = semfix(command, "--extend-select", "SEM101", str(tmp_path / "k.py"), cwd=tmp_path)
    first = result.stderr.splitlines()[0]
    assert result.returncode in (0, 1) and first.startswith(f"warning: {pyproject}:2: cannot read"), first
    assert "'jax>=x'" in first and "Traceback" not in result.stderr


def test_a_config_given_with_config_is_named_as_given(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "pyproject.toml").write_text('[tool.semfix]\nextend-select = ["SEM9"]\n')
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix("check", "--config", "conf/pyproject.toml", "k.py", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {Path('conf/pyproject.toml')}: [tool.semfix] extend-select: "
        "unknown rule selector 'SEM9' (see `semfix rules`)\n"
    )
    (tmp_path / "conf" / "pyproject.toml").write_text('[tool.semfix]\nextend-select = ["SEM102"]\n')
    command_line = semfix("check", "--config", "conf/pyproject.toml", "--select", "SEM7", "k.py", cwd=tmp_path)
    assert command_line.stderr == "error: unknown rule selector 'SEM7' (see `semfix rules`)\n"  # not the file's
