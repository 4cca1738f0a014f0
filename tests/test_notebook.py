"""Notebooks: code cells fixed across cells, magics and the JSON layout left byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from semfix.api import fix_notebook, fix_source
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


def test_messages_name_the_lines_of_cells() -> None:
    """A message names a line of its own cell, or of another cell by number, never a line of
    the joined module ("at line 9" in a 4-line cell); a syntax error too."""
    data = _notebook(
        ["from jax.experimental import pallas as pl\n", "from jax.experimental.pallas import tpu as pltpu\n"],
        [
            "def k(x_hbm, o_hbm, sem, flag):\n",
            "    done = flag[...]\n",
            "    o_hbm[0] = done\n",
            "    pl.semaphore_wait(done, 1)\n",
            "    pltpu.make_async_copy(x_hbm, o_hbm, sem).wait()\n",
        ],
        [
            "out = pl.pallas_call(\n",
            "    k, out_shape=None, scratch_shapes=[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR]\n",
            ")(None)\n",
        ],
    )
    found = fix_notebook(data, build_settings(), apply_fixes=False).findings
    assert [(f.rule, f.cell, f.line, f.related) for f in found] == [("SEM003", 2, 4, (2,)), ("SEM006", 2, 5, ())]
    assert "from the semaphore Ref at line 2;" in found[0].message
    assert "allocated at cell 3, line 2:" in found[1].message
    with pytest.raises(SourceError, match=r"syntax error at cell 2, line 1,"):
        broken = _notebook(["from jax.experimental import pallas as pl\n", "x = 1\n"], ["pl.semaphore_wait(\n"])
        fix_notebook(broken, build_settings())


def _annotated(output_format: str) -> tuple[str, list[int]]:
    """`check --format FORMAT` on the stored notebook, and the lines of its .ipynb text that
    hold the code of its three findings."""
    path = "tests/notebooks/ring_unicode.before.ipynb"
    root = Path(__file__).parents[1]
    command = [sys.executable, "-m", "semfix", "check", "--format", output_format, path]
    ran = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    lines = (root / path).read_text(encoding="utf-8").splitlines()
    held = ["make_async_copy(x_hbm, o_hbm, sem[...])", "semaphore_signal(sem[()])", '"source": "pl.semaphore_wait']
    return ran.stdout, [next(n for n, line in enumerate(lines, 1) if code in line) for code in held]


def test_github_and_rdjson_annotate_the_notebook_s_own_lines() -> None:
    """The annotations land on the lines of the .ipynb holding the code, and name the cell and
    the line within it; a cell held in one string is on that string's line."""
    github, held = _annotated("github")
    assert [line.split("::")[1] for line in github.splitlines()] == [
        "error file=tests/notebooks/ring_unicode.before.ipynb,"
        f"line={line},endLine={line},title=semfix SEM001 (cell {cell}%2C line {within}%2C column {column})"
        for line, (cell, within, column) in zip(held, [(3, 3, 48), (3, 5, 25), (5, 1, 19)])
    ]
    rdjson, _ = _annotated("rdjson")
    diagnostics = json.loads(rdjson)["diagnostics"]
    assert [d["location"]["range"] for d in diagnostics] == [{"start": {"line": n}, "end": {"line": n}} for n in held]
    assert diagnostics[0]["message"].startswith("cell 3, line 3, column 48: `sem[...]` reads")
    sarif, _ = _annotated("sarif")
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in json.loads(sarif)["runs"][0]["results"]]
    assert regions == [{"startLine": n, "endLine": n} for n in held]


@pytest.mark.parametrize("magic", ["%%time", "%%timeit -n 1", "%%capture out"])
def test_a_kernel_under_a_python_cell_magic_is_checked_and_fixed(magic: str) -> None:
    """ruff lints these cells: their body is Python (the magic's line is masked)."""
    data = _notebook(
        ["from jax.experimental import pallas as pl\n"], [f"{magic}\n", *KERNEL], ["%%bash\n", "ls [...]\n"]
    )
    result = fix_notebook(data, build_settings(), apply_fixes=True)
    assert [(f.cell, f.line, f.rule) for f in result.findings] == [(2, 3, "SEM001")]
    assert _sources(result.source)[1] == f"{magic}\n" + "".join(KERNEL).replace("sem[...]", "sem")


def test_a_notebook_awaiting_at_the_top_level_is_checked() -> None:
    """IPython runs `await` at a cell's top level; CPython compiles it so when asked."""
    data = _notebook(
        ["import asyncio\n", "await asyncio.sleep(0)\n"], ["from jax.experimental import pallas as pl\n", *KERNEL]
    )
    result = fix_notebook(data, build_settings(), apply_fixes=True)
    assert [(f.cell, f.rule) for f in result.findings] == [(2, "SEM001")]
    assert _sources(result.source)[1].endswith("pl.semaphore_wait(sem, 1)\n")


def test_a_python_file_awaiting_at_the_top_level_is_still_refused() -> None:
    source = "import asyncio\nfrom jax.experimental import pallas as pl\nawait asyncio.sleep(0)\n" + "".join(KERNEL)
    with pytest.raises(SourceError, match="'await' outside function"):
        fix_source(source, settings=build_settings())
