"""Output that CI reads: under GitHub Actions no name starts a workflow command, in any format;
SARIF's uris are uri-references."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"
EVIL = "k\n::stop-commands::token\r::warning::x%0A.py"


def semfix(*args: str, cwd: Path, actions: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    if actions:
        env["GITHUB_ACTIONS"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def _commands(text: str) -> list[str]:
    """What the runner would read as workflow commands: lines starting `::`, after any whitespace."""
    return [line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip().startswith("::")]


@pytest.mark.skipif(sys.platform == "win32", reason="a newline cannot be in a Windows file name")
@pytest.mark.parametrize(
    "args",
    [
        ["check"],
        ["check", "--format", "full"],
        ["check", "--format", "concise"],
        ["check", "--format", "github"],
        ["fix", "--diff"],
        ["fix", "--show-fixes", "--allow-dirty"],
        ["fix", "--check"],
    ],
    ids=" ".join,
)
def test_no_file_name_starts_a_workflow_command(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / EVIL).write_text(BUGGY)
    (tmp_path / (EVIL + "2.py")).write_text(BUGGY + "def broken(:\n")  # an error line names it too
    result = semfix(*args, ".", cwd=tmp_path)
    if "github" not in args:  # else each name is a property, escaped as one
        assert EVIL.replace("%", "%25").replace("\n", "%0A").replace("\r", "%0D") in result.stdout + result.stderr
        assert f"error: {EVIL.replace('%', '%25').replace(chr(10), '%0A').replace(chr(13), '%0D')}2.py" in result.stderr
    commands = _commands(result.stdout) + _commands(result.stderr)
    assert all(line.startswith("::error file=") for line in commands), commands


def test_names_are_printed_as_they_are_outside_github_actions(tmp_path: Path) -> None:
    (tmp_path / "a%b.py").write_text(BUGGY)
    assert semfix("check", ".", cwd=tmp_path, actions=False).stdout.startswith("a%b.py:5:23: SEM001")
    assert semfix("check", ".", cwd=tmp_path).stdout.startswith("a%25b.py:5:23: SEM001")


def test_sarif_uris_are_percent_encoded(tmp_path: Path) -> None:
    (tmp_path / "my kernels #1 ü%.py").write_text(BUGGY)
    result = semfix("check", "--format", "sarif", ".", cwd=tmp_path, actions=False)
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for entry in json.loads(result.stdout)["runs"][0]["results"]
        for location in entry["locations"]
    }
    assert uris == {"my%20kernels%20%231%20%C3%BC%25.py"}
