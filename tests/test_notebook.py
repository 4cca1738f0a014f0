"""Notebooks: code cells fixed across cells, magics and the JSON layout left byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semfix.api import fix_notebook
from semfix.errors import SourceError
from semfix.selection import build_settings

NOTEBOOKS = Path(__file__).parent / "notebooks"
CASES = sorted(p.name.removesuffix(".before.ipynb") for p in NOTEBOOKS.glob("*.before.ipynb"))


@pytest.mark.parametrize("name", CASES)
def test_notebook_fix_is_byte_exact_and_settles(name: str) -> None:
    before = (NOTEBOOKS / f"{name}.before.ipynb").read_bytes()
    after = (NOTEBOOKS / f"{name}.after.ipynb").read_bytes()
    result = fix_notebook(before, build_settings(), apply_fixes=True)
    assert result.source == after
    assert [(f.cell, f.line, f.column, f.rule) for f in result.findings] == [
        (3, 3, 48, "SEM001"),
        (3, 5, 25, "SEM001"),
        (5, 1, 19, "SEM001"),
    ]
    again = fix_notebook(after, build_settings(), apply_fixes=True)
    assert again.source == after and not any(f.applied for f in again.findings)


def test_a_notebook_that_is_not_json_is_a_clear_error() -> None:
    with pytest.raises(SourceError, match="not a readable notebook"):
        fix_notebook(b'{"cells": [', build_settings(), apply_fixes=True)


def test_a_non_python_notebook_is_left_alone() -> None:
    data = (
        b'{"cells": [{"cell_type": "code", "source": ["pl.semaphore_wait(s[...])"]}], '
        b'"metadata": {"language_info": {"name": "julia"}}}'
    )
    assert fix_notebook(data, build_settings(), apply_fixes=True).source == data


def _notebook(*cells: list[str]) -> bytes:
    code = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": source} for source in cells]
    return json.dumps({"cells": code, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _sources(data: bytes) -> list[str]:
    return ["".join(cell["source"]) for cell in json.loads(data)["cells"]]


KERNEL = ["def k(sem):\n", "    pl.semaphore_wait(sem[...], 1)\n"]


def test_a_comment_ending_in_a_question_mark_is_python_not_help() -> None:
    """IPython reads `x = 1  # why?` as Python: masked as a magic, the shadowing import was lost
    and `mylib.semaphore_wait`'s argument was rewritten."""
    data = _notebook(["from jax.experimental import pallas as pl\n"], ["import mylib as pl  # which one?\n", *KERNEL])
    result = fix_notebook(data, build_settings(), apply_fixes=True)
    assert result.source == data and not result.findings


def test_a_source_string_holding_several_lines_is_rewritten() -> None:
    """nbformat lets one string of the `source` array hold several lines."""
    data = _notebook(["from jax.experimental import pallas as pl\n", *KERNEL, "    x = 1\n    y = 2\n"])
    fixed = _sources(fix_notebook(data, build_settings(), apply_fixes=True).source)
    assert fixed == [
        "".join(["from jax.experimental import pallas as pl\n", *KERNEL, "    x = 1\n    y = 2\n"]).replace(
            "sem[...]", "sem"
        )
    ]


def test_lines_after_a_cell_with_lone_carriage_returns_are_counted_as_python_counts_them() -> None:
    data = _notebook(["x = 1\r", "y = 2\r"], ["from jax.experimental import pallas as pl\n", *KERNEL])
    findings = fix_notebook(data, build_settings(), apply_fixes=False).findings
    assert [(f.cell, f.line, f.column) for f in findings] == [(2, 3, 23)]


def test_an_import_a_magic_reads_is_kept() -> None:
    """`%time out = f(x, interpret=pltpu.InterpretParams())` reads `pltpu`: masked, the read
    was unseen, SEM101 dropped the import and the magic raised NameError."""
    data = _notebook(
        ["import jax\n", "from jax.experimental.pallas import tpu as pltpu\n"],
        ["def k(sem):\n", "    pltpu.semaphore_wait(sem, 1)\n"],
        ["%time out = run(interpret=pltpu.InterpretParams())\n"],
    )
    fixed = _sources(
        fix_notebook(data, build_settings(extend_select=["SEM101"], target_jax="0.10.2"), apply_fixes=True).source
    )
    assert fixed == [
        "import jax\nfrom jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n",
        "def k(sem):\n    pl.semaphore_wait(sem, 1)\n",
        "%time out = run(interpret=pltpu.InterpretParams())\n",
    ]
