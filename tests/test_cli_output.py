"""What machines read from the command line: the `--report` file, and stdout under a machine
`--output-format` when the run stops on a usage error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

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
