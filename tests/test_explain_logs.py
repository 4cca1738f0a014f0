"""`semfix explain` on logs as people paste them (issue 37.13, 37.14): Colab's and `%xmode Plain`
IPython tracebacks, rich's boxes, an ExceptionGroup's gutter, the margins of CI systems and
launchers it was never told of, and pytest's summary line alone. The logs are real runs
(tracebacks/capture_formats.py); the margins are added as each tool writes them
(tracebacks/prefixes.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from semfix.explain.logs import parse_log

ROOT = Path(__file__).parents[1]
TRACEBACKS = ROOT / "tests" / "tracebacks"
sys.path.insert(0, str(TRACEBACKS))
from prefixes import prefixed  # noqa: E402

ARRAY = ("dst.at[0:4], sems[1])", "dst.at[0:4], sems.at[1])")  # what dma12_array.log and rich_array.log fix
REMOTE = ("send_sems.at[0], recv_sems[0], device_id=0)", "send_sems.at[0], recv_sems.at[0], device_id=0)")
SIGNAL, WAIT = (
    '"    pl.semaphore_signal(flags[1], 2)\\n"',
    '"    pl.semaphore_wait(flags[1], 2)"',
)  # ring.ipynb's cell 3


def explain(cwd: Path, log: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's semfix, wherever it runs
    command = [sys.executable, "-m", "semfix", "explain", "-", "--fix"]
    return subprocess.run(command, cwd=cwd, input=log, env=env, capture_output=True, text=True, check=False)


@pytest.fixture
def dmalib12(tmp_path: Path) -> Path:
    shutil.copytree(TRACEBACKS / "dmalib12", tmp_path / "dmalib12")
    return tmp_path / "dmalib12"


@pytest.fixture
def ringnb(tmp_path: Path) -> Path:
    shutil.copytree(TRACEBACKS / "ringnb", tmp_path / "ringnb")
    return tmp_path


def fixed(kernels: Path, *changes: tuple[str, str]) -> bool:
    """Is the package's kernels.py the stored one with exactly these changes?"""
    text = (TRACEBACKS / "dmalib12" / "dmalib12" / "kernels.py").read_text()
    for old, new in changes:
        text = text.replace(old, new)
    return kernels.read_text() == text


# -- item 13: IPython's other layouts, rich, ExceptionGroups -----------------------------------
@pytest.mark.parametrize(
    ("log", "cell"), [("colab.log", "<ipython-input-2-874caac8c1df>"), ("xmode_plain.log", "Cell In[2]")]
)
def test_colab_and_plain_ipython_tracebacks_are_fixed_in_their_notebook_cell(ringnb: Path, log: str, cell: str) -> None:
    notebook = ringnb / "ringnb" / "ring.ipynb"
    before = notebook.read_text()
    result = explain(ringnb, (TRACEBACKS / log).read_text())
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"raised from ringnb/ring.ipynb, cell 3 ({cell}), line 3, in ping_kernel" in result.stdout
    assert notebook.read_text() == before.replace(SIGNAL, SIGNAL.replace("[1]", ".at[1]")).replace(
        WAIT, WAIT.replace("[1]", ".at[1]")
    )


def test_a_colab_tail_pasted_without_its_header() -> None:
    """From the kernel's frame on, as copied out of a Colab cell's output; its line is the `---->` one."""
    lines = (TRACEBACKS / "colab.log").read_text().splitlines()
    (failure,) = parse_log(
        "\n".join(lines[lines.index("<ipython-input-2-874caac8c1df> in ping_kernel(x_ref, o_ref, flags)") :])
    )
    frame = failure.frames[0]
    assert (frame.cell, frame.line, frame.function, frame.source) == (
        True,
        3,
        "ping_kernel",
        "pl.semaphore_signal(flags[1], 2)",
    )
    assert all(frame.in_jax for frame in failure.frames[1:])


def test_a_rich_traceback_is_read_through_its_box(dmalib12: Path) -> None:
    """rich_array.log: 80 columns, so paths wrap and long source lines are cut at the edge."""
    result = explain(dmalib12, (TRACEBACKS / "rich_array.log").read_text())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "It was raised from dmalib12/kernels.py:14, in array_kernel." in result.stdout
    assert fixed(dmalib12 / "dmalib12" / "kernels.py", ARRAY)


def test_rich_frames_in_python_form() -> None:
    """A path wrapped at the edge and a name wrapped at a space are joined; a source line cut at
    the edge is left out, never compared cut; frames of no file are dropped."""
    (failure,) = parse_log((TRACEBACKS / "rich_array.log").read_text())
    frames = {frame.function: (frame.path.rsplit("/", 1)[-1], frame.line, frame.source) for frame in failure.frames}
    assert frames == {
        "<module>": ("run.py", 23, "print(pl.pallas_call("),
        "wrapped": ("pallas_call.py", 1300, "jaxpr, consts = _trace_kernel_to_jaxpr("),
        "_trace_kernel_to_jaxpr": ("pallas_call.py", 825, None),  # `... kernel_avals, de` at the edge
        "array_kernel": ("kernels.py", 14, "copy.start()"),
        "start": ("primitives.py", 273, "dma_start_p.bind("),
        "_dma_start_abstract_eval": (
            "primitives.py",
            460,
            'raise ValueError("DMA destination semaphore must be a Ref.")',
        ),
    }


def test_each_sub_traceback_of_an_exception_group_is_fixed(dmalib12: Path) -> None:
    result = explain(dmalib12, (TRACEBACKS / "group_sweep.log").read_text())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raised from dmalib12/kernels.py:14, in array_kernel" in result.stdout
    assert "raised from dmalib12/kernels.py:31, in remote_kernel" in result.stdout
    assert fixed(dmalib12 / "dmalib12" / "kernels.py", ARRAY, REMOTE)


# -- item 13: margins, learnt from the log -----------------------------------------------------
@pytest.mark.parametrize("tool", ["kubectl", "gitlab", "buildkite", "srun", "buildkit"])
def test_the_margins_of_ci_systems_and_launchers(dmalib12: Path, tool: str) -> None:
    """Two real runs as the tool shows them: two pods, tasks or build steps at once (kubectl,
    srun, BuildKit), or one job's log (GitLab, Buildkite)."""
    result = explain(dmalib12, prefixed(tool, "dma12_array.log", "dma12_remote.log"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("It was raised from") == 2
    assert fixed(dmalib12 / "dmalib12" / "kernels.py", ARRAY, REMOTE)


@pytest.mark.parametrize(("tool", "log"), [("gitlab", "xmode_plain.log"), ("kubectl", "colab.log")])
def test_a_notebook_run_in_ci_under_a_margin(ringnb: Path, tool: str, log: str) -> None:
    result = explain(ringnb, prefixed(tool, log))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "flags.at[1]" in (ringnb / "ringnb" / "ring.ipynb").read_text()


def test_rich_and_an_exception_group_under_margins(dmalib12: Path) -> None:
    result = explain(dmalib12, prefixed("buildkit", "rich_array.log", "group_sweep.log"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("It was raised from") == 3
    assert fixed(dmalib12 / "dmalib12" / "kernels.py", ARRAY, REMOTE)


def test_a_margin_no_tool_here_writes() -> None:
    """The next CI system: a margin of a clock, a job's name and a counter, learnt from the header;
    two jobs at once stay apart; the lines of no traceback keep their margins."""
    logs = [(TRACEBACKS / log).read_text().splitlines() for log in ("dma12_array.log", "dma12_remote.log")]
    at = [(i, job, line) for i in range(30) for job, log in enumerate(logs) for line in log[i : i + 1]]
    lines = [f"<05:20:{i:02}.{i * 37 % 1000:03}> job={job} | {line}" for i, job, line in at]
    failures = parse_log("\n".join(["<05:00.000> job=0 | starting", *lines]))
    assert [(f.message, f.frames[-3].function) for f in failures] == [
        ("DMA destination semaphore must be a Ref.", "array_kernel"),
        ("DMA destination semaphore must be a Ref.", "remote_kernel"),
    ]


# -- item 14: pytest's summary line alone --------------------------------------------------------
@pytest.mark.parametrize(
    ("log", "begins"),
    [
        (
            (TRACEBACKS / "pytest_summary.log").read_text(),  # 80 columns: `Cannot signal on a non...`
            "`Cannot signal on a non-semaphore Ref` or `Cannot signal on a non-()-shaped semaphore`",
        ),
        (
            "FAILED tests/test_k.py::test_x - ValueError: Cannot wait on a non-semaphore Ref...\n",
            "`Cannot wait on a non-semaphore Ref`",
        ),
    ],
)
def test_pytests_summary_line_alone_asks_for_the_traceback(tmp_path: Path, log: str, begins: str) -> None:
    result = explain(tmp_path, log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"pytest's summary line cuts the message short: it begins as JAX's {begins}." in result.stdout
    assert "paste the whole traceback (pytest prints it with --tb=auto, its default, long or short" in result.stdout


def test_a_summary_line_of_another_error_is_still_no_error(tmp_path: Path) -> None:
    result = explain(tmp_path, "FAILED tests/test_k.py::test_x - ValueError: Cannot parse the confi...\n")
    assert result.returncode == 2 and "no JAX semaphore or DMA error found" in result.stderr


def test_the_summary_beside_its_tracebacks_is_not_another_failure() -> None:
    failures = parse_log((TRACEBACKS / "pytest_short.log").read_text())
    assert len(failures) == 5 and all(failure.frames for failure in failures)
