"""`semfix explain --fix` on the logs people paste (issue 44).

The logs are real JAX runs of tests/tracebacks/pastelib (tests/tracebacks/capture_paste.py:
`paste_*` on 0.10.2, `paste12_*` on 0.12.1). Each is judged as a user would: what explain
writes, the kernel then runs right in JAX (the JAX of the log), or explain exits 1 and says
what is left.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jax_env import require_jax_python

TRACEBACKS = Path(__file__).parent / "tracebacks"
KERNELS = Path("pastelib", "kernels.py")

try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    jax = None
needs_jax = pytest.mark.skipif(
    jax is None and os.environ.get("SEMFIX_REQUIRE_JAX") != "1", reason="JAX is not installed"
)


@pytest.fixture
def pastelib(tmp_path: Path) -> Path:
    """The folder the logs ran `python -m pastelib.run NAME` in (its `site-packages` stands for an installed one's)."""
    shutil.copytree(TRACEBACKS / "pastelib", tmp_path / "pastelib")
    return tmp_path / "pastelib"


def _explain(log: str | bytes, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    data = (TRACEBACKS / log).read_bytes() if isinstance(log, str) else log
    run = subprocess.run(
        [sys.executable, "-m", "semfix", "explain", "-", *args], cwd=cwd, input=data, capture_output=True, check=False
    )
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout.decode(), run.stderr.decode())


def _python(log: str, config: pytest.Config) -> str:
    """The Python whose JAX made the log, to run the fixed kernel on."""
    return require_jax_python("0.12.1", config) if log.startswith("paste12") else sys.executable


def _runs(cwd: Path, kernel: str, python: str, *flags: str) -> None:
    run = subprocess.run(
        [python, *flags, "-m", "pastelib.run", kernel],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert run.returncode == 0 and run.stdout.strip() == "1.0", run.stderr


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_kit.log", "paste12_kit.log"])
def test_an_installed_helpers_call_gets_no_unsafe_fix(pastelib: Path, log: str, request: pytest.FixtureRequest) -> None:
    """`kernelkit.start_all(make_async_copy(srcs[0], ...), ...)`: the error is raised inside a
    package whose source is not here, so nothing is proven about the call's arguments: the
    engine's safe fix (`sems[0]`) is made, its unsafe ones (`srcs[0]`: a tuple) only named."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    text = (pastelib / KERNELS).read_text()
    assert "make_async_copy(srcs[0], o_ref, sems.at[0])" in text, said
    assert "make_async_copy(srcs[1], p_ref, sems.at[1])" in text, said
    assert "would write `srcs.at[0]`; not made: the line calls `start_all`, whose source semfix cannot read" in said
    _runs(pastelib, "kit_kernel", _python(log, request.config))


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        ('extend-exclude = ["pastelib/kernels.py"]\nforce-exclude = true', "excludes the file (extend-exclude)"),
        ('extend-exclude = ["kernels.py"]', "excludes the file (extend-exclude)"),
        ('ignore = ["SEM002"]', "the project's settings turn SEM002 off for this file"),
        ('[tool.semfix.per-file-ignores]\n"pastelib/*.py" = ["SEM002"]', "turn SEM002 off for this file"),
    ],
)
@pytest.mark.parametrize("log", ["paste_sigwait.log", "paste12_sigwait.log"])
def test_explain_honours_the_projects_settings(pastelib: Path, settings: str, words: str, log: str) -> None:
    """What `fix` would not write, explain does not: an excluded file, a rule turned off."""
    (pastelib / "pyproject.toml").write_text(f"[tool.semfix]\n{settings}\n")
    before = (pastelib / KERNELS).read_text()
    result = _explain(log, pastelib, "--fix")
    assert result.returncode == 1, result.stdout + result.stderr
    assert words in result.stdout, result.stdout
    assert (pastelib / KERNELS).read_text() == before


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda text: ("\r" + "█" * 40 + "| 400/400\n" + text).encode()[2:], id="tail-c-cuts-a-character"),
        pytest.param(lambda text: text.replace("\n", "\r\n").encode("utf-16"), id="powershell-utf-16"),
        pytest.param(lambda text: text.encode("utf-16-be").join([b"\xfe\xff", b""]), id="utf-16-big-endian"),
    ],
)
def test_a_log_is_read_whatever_its_bytes(pastelib: Path, encode: object) -> None:
    """A real log, as `tail -c N train.log` (its cut inside a progress bar's character) or
    PowerShell's `>` (UTF-16, with its BOM) hand it over: explained, never a crash."""
    text = (TRACEBACKS / "paste_sigwait.log").read_text()
    result = _explain(encode(text), pastelib)  # type: ignore[operator]
    assert "Traceback" not in result.stderr, result.stderr
    assert "It was raised from pastelib/kernels.py:56, in sigwait_kernel." in result.stdout, result.stdout
    assert "+    pl.semaphore_signal(flags.at[slot], 1)" in result.stdout


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_sigwait.log", "paste12_sigwait.log"])
def test_the_kernel_runs_after_one_command(pastelib: Path, log: str, request: pytest.FixtureRequest) -> None:
    """The log names the signal's `flags[slot]`; written as `flags.at[slot]`, it proves to the
    engine that `flags` is a Ref, whose safe fix of the wait's read is made too, and said."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "Once that is written, pastelib/kernels.py proves the same fix of the same Ref elsewhere:" in said
    assert "Fix: line 57: `flags[slot]` -> `flags.at[slot]` (SEM002)" in said
    text = (pastelib / KERNELS).read_text()
    assert "pl.semaphore_signal(flags.at[slot], 1)\n    pl.semaphore_wait(flags.at[slot], 1)" in text, said
    _runs(pastelib, "sigwait_kernel", _python(log, request.config))


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_pick_long.log", "paste12_pick_long.log"])
def test_pytests_locals_say_which_operand_is_the_value(
    pastelib: Path, log: str, request: pytest.FixtureRequest
) -> None:
    """`pytest --tb=long` prints JAX's check's `args`: the destination is the one value among
    three, so its unsafe fix is proven by the log, where the message alone names several."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "pytest prints the operands JAX checked: dst_ref got a value; the others, Refs." in said
    assert "pltpu.make_async_copy(x_ref, bufs.at[0], sem)" in (pastelib / KERNELS).read_text(), said
    _runs(pastelib, "pick_kernel", _python(log, request.config))


@pytest.mark.parametrize("log", ["paste_repeat.log", "paste12_repeat.log"])
def test_one_failure_400_times_is_explained_once(pastelib: Path, log: str) -> None:
    result = _explain(log, pastelib)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("It was raised from pastelib/kernels.py:56") == 1, result.stdout
    assert "Cannot signal on a non-semaphore Ref: semaphore[] (the log holds it 400 times)\n" in result.stdout


@pytest.mark.parametrize("log", ["paste_sigwait_line.log", "paste12_sigwait_line.log"])
def test_pytests_tb_line_is_explained_once_with_the_right_advice(pastelib: Path, log: str) -> None:
    result = _explain(log, pastelib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.count("Cannot signal on") == 1, result.stdout
    assert "pytest --tb=line prints only the line that raised it" in result.stdout
    assert "--tb=no" not in result.stdout


@pytest.mark.parametrize("log", ["paste_noqa.log", "paste12_noqa.log"])
def test_a_noqa_comment_is_named(pastelib: Path, log: str) -> None:
    before = (pastelib / KERNELS).read_text()
    result = _explain(log, pastelib, "--fix")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Not fixed: a comment on line 73 (`# noqa`, `# semfix: ignore`) silences semfix there" in result.stdout
    assert "proves no fix" not in result.stdout
    assert (pastelib / KERNELS).read_text() == before


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize(
    ("log", "fixed"),
    [
        ("paste12_when.log", "copy = pltpu.make_async_copy(x_ref, o_ref, sems.at[1])\n\n    @pl.when"),
        ("paste12_listed.log", "copies = [pltpu.make_async_copy(x_ref, o_ref, sems.at[k]) for k in range(2)]"),
        ("paste_loops.log", "pltpu.make_async_copy(x_ref, o_ref, second)]\n    for copy in copies:"),
        ("paste12_loops.log", "pltpu.make_async_copy(x_ref, o_ref, second)]\n    for copy in copies:"),
        ("paste_unpacked.log", "(x_ref, o_ref, sem), (x_ref, o_ref, sems.at[1])):"),
        ("paste12_unpacked.log", "(x_ref, o_ref, sem), (x_ref, o_ref, sems.at[1])):"),
    ],
)
def test_a_descriptor_followed_into_a_when_body_and_out_of_a_list(
    pastelib: Path, log: str, fixed: str, request: pytest.FixtureRequest
) -> None:
    """`copy.start()` in a `@pl.when` body, its copy built in the kernel around it; `for copy in
    copies`, the copies built in a list (a comprehension, or written out and looped over twice);
    `for src, dst, each in ((...), (...))`, each name what it takes on each pass: each followed
    back to the copy, as `fix` sees it."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert fixed in (pastelib / KERNELS).read_text(), said
    kernel = log.removeprefix("paste12_").removeprefix("paste_").removesuffix(".log") + "_kernel"
    _runs(pastelib, kernel, _python(log, request.config))


@pytest.mark.parametrize(
    ("log", "named"), [("paste_when.log", "`sems[1]` (sem)"), ("paste_listed.log", "`sems[k]` (sem)")]
)
def test_the_older_text_names_the_copys_argument(pastelib: Path, log: str, named: str) -> None:
    """JAX 0.10's text is about three arguments: the copy is found, its argument named, nothing proven."""
    before = (pastelib / KERNELS).read_text()
    result = _explain(log, pastelib, "--fix")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"Not fixed, check by hand: {named}: SEM002" in result.stdout, result.stdout
    assert "is not assigned a copy descriptor" not in result.stdout
    assert (pastelib / KERNELS).read_text() == before


@pytest.mark.parametrize("log", ["paste_ctx.log", "paste12_ctx.log"])
def test_a_contextmanager_helpers_caller_is_the_users(pastelib: Path, log: str) -> None:
    """Python's contextlib.py stands between the helper and its caller: never taken for the caller."""
    result = _explain(log, pastelib)
    assert "It was called at pastelib/kernels.py:106, in ctx_kernel." in result.stdout, result.stdout
    assert "`sems[0]` (given to `copying`'s `sem`)" in result.stdout
    assert "contextlib.py" not in result.stdout


@pytest.mark.parametrize("log", ["paste_whole.log", "paste12_whole.log"])
def test_a_whole_array_given_in_a_kernel_names_sem004_there(pastelib: Path, log: str) -> None:
    """`pl.semaphore_signal(flags, 1)` in a kernel: JAX called the kernel with the array, so the
    kernel's line is the mistake, not a caller's."""
    before = (pastelib / KERNELS).read_text()
    result = _explain(log, pastelib, "--fix")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "It was raised from pastelib/kernels.py:113, in whole_kernel." in result.stdout
    assert "`flags` (sem_or_view) is a Ref of shape (2,), not one semaphore (SEM004" in result.stdout
    assert "called at" not in result.stdout
    assert (pastelib / KERNELS).read_text() == before


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_old.log", "paste12_old.log"])
def test_a_name_jax_moved_is_migrated_where_the_floor_permits(
    pastelib: Path, log: str, request: pytest.FixtureRequest
) -> None:
    """0.12's AttributeError for `pltpu.semaphore_signal`, 0.10's DeprecationWarning under
    `-W error`: SEM101's renames, of the whole file, made under the project's JAX floor."""
    before = (pastelib / KERNELS).read_text()
    refused = _explain(log, pastelib, "--fix")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "declare `jax>=0.6.0`" in refused.stdout and (pastelib / KERNELS).read_text() == before
    (pastelib / "pyproject.toml").write_text('[tool.semfix]\ntarget-jax = "0.10"\n')
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "Fix: line 122: `pltpu.semaphore_wait` -> `pl.semaphore_wait` (SEM101)" in said
    assert (
        "pl.semaphore_signal(flags.at[0], 1)\n    pl.semaphore_wait(flags.at[0], 1)" in (pastelib / KERNELS).read_text()
    )
    _runs(pastelib, "old_kernel", _python(log, request.config), "-W", "error::DeprecationWarning")


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_notebook.log", "paste12_notebook.log"])
def test_a_notebooks_helper_cell_blames_its_caller_cell(
    pastelib: Path, log: str, request: pytest.FixtureRequest
) -> None:
    """IPython ran the helper cell without its leading blank line (its `line 3` is the
    notebook's line 4); the helper passed `sem` on, and the caller cell (`Cell In[3]`) is fixed."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "It was raised from notebook.ipynb, cell 2 (Cell In[2]), line 4, in copy_slot." in said
    assert "Fix: cell 3, line 10: `sems[0]` -> `sems.at[0]` (SEM002)" in said
    _runs_notebook(pastelib, "notebook.ipynb", _python(log, request.config))


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", ["paste_followup.log", "paste12_followup.log"])
def test_a_notebooks_follow_up_fixes_are_made_and_said(
    pastelib: Path, log: str, request: pytest.FixtureRequest
) -> None:
    """A notebook's kernel signals and then waits on `flags[slot]`: the log proves the signal's
    fix, and the notebook, rewritten so, proves the wait's: both made, each said at its cell's line."""
    result = _explain(log, pastelib, "--fix")
    said = result.stdout + result.stderr
    assert result.returncode == 0, said
    assert "Once that is written, followup.ipynb proves the same fix of the same Ref elsewhere:" in said
    assert "Fix: cell 2, line 6: `flags[slot]` -> `flags.at[slot]` (SEM002)" in said
    assert "still finds" not in said
    _runs_notebook(pastelib, "followup.ipynb", _python(log, request.config))


def _runs_notebook(cwd: Path, notebook: str, python: str) -> None:
    """The notebook's code cells run in turn, as a kernel runs them: the kernel prints 1.0."""
    cells = f"import json\nfor cell in json.load(open({notebook!r}))['cells']:\n    exec(''.join(cell['source']))\n"
    run = subprocess.run([python, "-c", cells], cwd=cwd, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0 and run.stdout.strip() == "1.0", run.stderr


@pytest.mark.parametrize(
    ("log", "words"),
    [
        *[
            (
                log,
                [
                    "pytest's listing of its def shows what the error is about: `flags[1]`"
                    " (given to `signal_wait`'s `sem`)"
                ],
            )
            for log in ("paste_handed_long.log", "paste12_handed_long.log")
        ],
        *[
            (
                log,
                ["pytest's listing of its def shows what the error is about: `sems[1]` (given to `copy_one`'s `sem`)"],
            )
            for log in ("paste_copied_long.log", "paste12_copied_long.log")
        ],
        *[
            (log, ["which passes on its `sem`, and the call names it by keyword: `flags[1]` (given to `signal_wait`'s"])
            for log in ("paste_keyword.log", "paste12_keyword.log")
        ],
        *[
            (
                log,
                [
                    "the log prints only its line, not its def: the error is about its `sem`, and which of `flags`,"
                    " `flags[1]` at `kernelkit.signal_wait(flags, flags[1])` that is cannot be told by position",
                ],
            )
            for log in ("paste_handed.log", "paste12_handed.log")
        ],
    ],
)
def test_an_installed_helpers_caller_names_the_argument(pastelib: Path, log: str, words: list[str]) -> None:
    """kernelkit's helper, its source not on this machine, raised on its `sem`: pytest's listing
    of its def (`--tb=long`) says which position that is, a keyword names it; the helper's line
    alone does not, and explain says which arguments it may be. Nothing is written in that call."""
    shutil.rmtree(pastelib / "site-packages" / "kernelkit")  # pytest's relative paths would find it here
    before = (pastelib / KERNELS).read_text()
    result = _explain(log, pastelib, "--fix")
    assert result.returncode == 1, result.stdout + result.stderr
    for word in words:
        assert word in result.stdout, result.stdout
    assert "whose source semfix cannot read" not in result.stdout
    assert (pastelib / KERNELS).read_text() == before
