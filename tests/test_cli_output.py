"""What machines read from the command line: the `--report` file, and stdout under a machine
`--output-format` when the run stops on a usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK = Path(__file__).parent / "notebooks" / "ring_unicode.before.ipynb"
KERNEL = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sem, sems, i):\n"
    "    pl.semaphore_signal(sem[...], 2)\n"  # SEM001, safe: fixed
    "    pl.semaphore_signal(sems[i], 1)\n"  # SEM002, unsafe: left
)
BROKEN = "from jax.experimental import pallas as pl\npl.semaphore_wait(\n"


def semfix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False)


def _shape(value: Any, where: str = "") -> set[str]:
    """Every key path in a JSON value (`files[].findings[].rule`), values left out."""
    if isinstance(value, dict):
        return {f"{where}.{key}" for key in value} | {
            p for key, v in value.items() for p in _shape(v, f"{where}.{key}")
        }
    if isinstance(value, list):
        return {p for item in value for p in _shape(item, f"{where}[]")}
    return set()


def test_check_fix_diff_and_fix_write_reports_of_one_shape(tmp_path: Path) -> None:
    """A script reading the report of one command reads the others': only values differ."""
    reports = {}
    for command in (("check",), ("fix", "--diff"), ("fix",)):  # fix last: it rewrites the files
        (tmp_path / "k.py").write_text(KERNEL)
        (tmp_path / "broken.py").write_text(BROKEN)
        (tmp_path / "nb.ipynb").write_bytes(NOTEBOOK.read_bytes())
        result = semfix(*command, ".", "--report", "report.json", cwd=tmp_path)
        assert result.returncode == 2, result.stderr  # broken.py
        reports[" ".join(command)] = json.loads((tmp_path / "report.json").read_text())
    shapes = {command: _shape(report) for command, report in reports.items()}
    assert shapes["check"] == shapes["fix --diff"] == shapes["fix"]
    assert {".files[].findings[].applied", ".files[].findings[].cell", ".totals.fixes_applied"} <= shapes["check"]
    applied = {c: [f["applied"] for e in r["files"] for f in e["findings"]] for c, r in reports.items()}
    assert applied["check"] == [False] * len(applied["check"])
    assert applied["fix --diff"] == applied["fix"] and True in applied["fix"] and False in applied["fix"]
    assert [r["dry_run"] for r in reports.values()] == [True, True, False]


FIELDS = ("cell", "rule", "line", "column", "end_line", "end_column", "message", "original", "replacement", "safety")


UNKNOWN = "unknown rule selector 'SEM9' (see `semfix rules`)"


def _named_in(output_format: str, stdout: str, message: str, title: str) -> bool:
    """Does stdout, parsed as `output_format`, carry `message` as a run error (no file)?"""
    if output_format == "github":
        return stdout == f"::error title={title}::{message}\n"
    document = json.loads(stdout)
    if output_format == "json":
        return document == [{"path": None, **dict.fromkeys(FIELDS), "message": message, "error": True}]
    if output_format == "sarif":
        [run] = document["runs"]
        notices = [{"level": "error", "message": {"text": message}}]
        return run["results"] == [] and run["invocations"] == [
            {"executionSuccessful": False, "toolExecutionNotifications": notices}
        ]
    return document["diagnostics"] == [{"message": message, "severity": "ERROR"}]


@pytest.mark.parametrize("output_format", ["json", "github", "sarif", "rdjson"])
def test_a_usage_error_is_in_every_machine_format(tmp_path: Path, output_format: str) -> None:
    """As a file error is: a CI reading stdout must not read an empty output as a clean run."""
    (tmp_path / "k.py").write_text(KERNEL)
    result = semfix("check", "--format", output_format, "--select", "SEM9", "k.py", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, f"error: {UNKNOWN}\n")
    assert _named_in(output_format, result.stdout, UNKNOWN, "semfix check")
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nignore = ["SEM9"]\n')
    config = semfix("fix", "--format", output_format, "k.py", cwd=tmp_path)
    message = f"{tmp_path / 'pyproject.toml'}: [tool.semfix] ignore: {UNKNOWN}"
    assert (config.returncode, config.stderr) == (2, f"error: {message}\n")
    assert _named_in(output_format, config.stdout, message, "semfix fix")
    assert (tmp_path / "k.py").read_text() == KERNEL


def test_an_option_click_rejects_leaves_stdout_empty(tmp_path: Path) -> None:
    """Before the options are parsed no format is known (`--format` may be the bad one): the
    usage goes to stderr alone, as ruff does with its parse errors."""
    for args in (("--format", "json", "--no-such-flag"), ("--format", "yaml"), ("--format", "sarif", "-j", "0")):
        result = semfix("check", *args, ".", cwd=tmp_path)
        assert (result.returncode, result.stdout) == (2, ""), args
        assert result.stderr.startswith("Usage: ") and "Error: " in result.stderr
