"""`semfix explain --fix` makes one proof: the log chooses the call and the argument, the engine
proves the rewrite (issue 35, items 15 to 17).

The logs are real JAX runs (tests/tracebacks/capture.py over wronglib: `wrong_*` on 0.10.2,
`wrong12_*` on 0.12.1 where its text differs). Each is judged as a user would: explain either
exits 1 and leaves the file as it was, or writes a file whose kernels then run right in JAX.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TRACEBACKS = Path(__file__).parent / "tracebacks"
KERNELS = Path("wronglib", "kernels.py")
LOGS = sorted(p.name for p in TRACEBACKS.glob("wrong*.log"))

try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    jax = None
needs_jax = pytest.mark.skipif(
    jax is None and os.environ.get("SEMFIX_REQUIRE_JAX") != "1", reason="JAX is not installed"
)


@pytest.fixture
def wronglib(tmp_path: Path) -> Path:
    """The folder the logs ran `python -m wronglib.run NAME` in (its `site-packages` stands for an installed one's)."""
    shutil.copytree(TRACEBACKS / "wronglib", tmp_path / "wronglib")
    return tmp_path / "wronglib"


def _explain(log: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", "explain", "-", "--fix"],
        cwd=cwd,
        input=log,
        capture_output=True,
        text=True,
        check=False,
    )


def _runs(cwd: Path, name: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wronglib.run", name], cwd=cwd, capture_output=True, text=True, check=False
    )


def _kernel(log: str) -> str:
    return log.removesuffix(".log").split("_", 1)[1] + "_kernel"


# What explain must do with each log: None, exit 1 and the file unchanged; else the text of the fix.
EXPECTED: dict[str, str | None] = {
    "scaled": None,  # item 15: the helper's `src` got `x_ref[...] * 2.0`; the tuple's `sems[slot]` is right
    "named": None,  # item 15: a NamedTuple field holds the value
    "shared": None,  # item 15: `_copy_slot`'s `sems[slot]` is right for its other caller, a tuple
    "cond": "lambda: pl.semaphore_signal(flags.at[0], 1),\n        lambda: pl.semaphore_signal(peer_ready[1], 1),",
    "stages": None,  # item 15: non-()-shaped: a tuple's array, no view settles it
    "branch": "copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[0])\n    else:",  # item 16
    "loop": "        copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[1])\n",  # item 16
    "rows": None,  # item 16: a row of a 2-D array, raised at `.start()`
    "closure": None,  # item 16: a regular semaphore, in a closure's descriptor
    "installed": None,  # item 17: the checkout's `sems[half]`, given to an installed helper
}


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", LOGS)
def test_explain_fix_is_refused_or_runs_right(wronglib: Path, log: str) -> None:
    kernels = wronglib / KERNELS
    before = kernels.read_text()
    result = _explain((TRACEBACKS / log).read_text(), wronglib)
    said = result.stdout + result.stderr
    fixed = EXPECTED[_kernel(log).removesuffix("_kernel")]
    if fixed is None:
        assert result.returncode == 1, said
        assert kernels.read_text() == before, said
        return
    assert result.returncode == 0, said
    assert fixed in kernels.read_text(), said
    for name in (_kernel(log), "paired"):
        run = _runs(wronglib, name)
        assert run.returncode == 0 and run.stdout.strip() == "1.0", run.stderr


@pytest.mark.parametrize(
    ("log", "words"),
    [
        (
            "wrong_scaled.log",
            [
                "`sems[slot]` (sem): SEM002",
                "--unsafe-fixes",
                "It was called at wronglib/kernels.py:44, in scaled_kernel.",  # issue 44: the value is blamed
                "`x_ref[...] * 2.0` (given to `_copy_slot`'s `src`) is computed (arithmetic, a comparison, a constant)",
            ],
        ),
        (
            "wrong12_scaled.log",
            ["called at wronglib/kernels.py:", "`x_ref[...] * 2.0` (given to `_copy_slot`'s `src`)"],
        ),
        ("wrong12_named.log", ["`refs.src` (src_ref)", "`refs.dst` (dst_ref)"]),
        ("wrong12_shared.log", ["`sems[slot]` (sem): SEM002", "`sems` is a parameter of `_copy_slot`"]),
        ("wrong_cond.log", ["SEM002", "unsafe"]),
        ("wrong_stages.log", ["`flags[stage]`", "shape (2,)"]),
        ("wrong_branch.log", ["sems[0]", "line 94"]),
        ("wrong_rows.log", ["SEM004 `sems.at[0]` passes a row"]),
        ("wrong_closure.log", ["SEM006 `sems.at[slot]` is a regular semaphore (allocated at line 129"]),
    ],
)
def test_explain_names_the_argument(wronglib: Path, log: str, words: list[str]) -> None:
    result = _explain((TRACEBACKS / log).read_text(), wronglib)
    for word in words:
        assert word in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("log", ["wrong_installed.log", "wrong12_installed.log"])
@pytest.mark.parametrize("readable", [True, False])
def test_an_installed_helper_blames_the_checkouts_frame(wronglib: Path, log: str, readable: bool) -> None:
    """The package's helper passes the checkout's `sems[half]` on to make_async_copy: the first
    frame in the checkout is blamed, its argument named. Where the package's file is on this
    machine (`readable`), which argument is read from it; it is never written."""
    text = (TRACEBACKS / log).read_text()
    if readable:  # the log's folder is the copy here: the package's file exists, installed
        capture = text.split("/wronglib/site-packages/")[0].rsplit('"', 1)[1]
        text = text.replace(capture + "/wronglib/", f"{wronglib}/")
    helper = wronglib / "site-packages" / "ringhelp" / "__init__.py"
    before, helper_before = (wronglib / KERNELS).read_text(), helper.read_text()
    result = _explain(text, wronglib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "in an installed package" in result.stdout
    assert "It was called at wronglib/kernels.py:145, in installed_kernel." in result.stdout
    named = "`sems[half]` (given to `copy_half`'s `sem`)" if readable else "`copy_half(x_ref, o_ref, sems[half])`"
    assert named in result.stdout, result.stdout
    assert (wronglib / KERNELS).read_text() == before and helper.read_text() == helper_before
