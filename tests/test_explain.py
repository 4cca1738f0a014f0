"""`semfix explain`: tracebacks from the real JAX runtime tier, and stored ones for the rest."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, Case, fixture_cases

from semfix.explain.blame import blame

TRACEBACKS = Path(__file__).parent / "tracebacks"
RUNNER = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('k', sys.argv[1])\n"
    "module = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(module)\n"
    "print(module.run())\n"
)


def cli(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False
    )


@pytest.fixture
def ringlib(tmp_path: Path) -> Path:
    shutil.copytree(TRACEBACKS / "ringlib", tmp_path / "ringlib")
    return tmp_path


def test_noisy_log_with_two_tracebacks_from_another_machine(ringlib: Path) -> None:
    log = (TRACEBACKS / "dma_wait_remote.log").read_text()
    result = cli("explain", "-", "--fix", cwd=ringlib, stdin=log)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raised from ringlib/kernels.py:12, in kernel" in result.stdout  # /home/runner/... mapped here
    assert "raised from ringlib/kernels.py:17, in flag_kernel" in result.stdout
    assert "count read out of a regular semaphore Ref" in result.stdout
    text = (ringlib / "ringlib" / "kernels.py").read_text()
    # Followed copy.wait() back to the copy; `recv_sems[0]` is the engine's safe fix (`recv_sems.at[1]`
    # below proves it a Ref). send_sem has its own message: not proven by this one.
    assert "send_sems[0], recv_sems.at[0]" in text
    assert "`send_sems[0]` (send_sem): not proven by this error" in result.stdout
    # the signal's one argument: the engine's unsafe fix, said so; written, it proves the wait's (issue 44)
    assert "pl.semaphore_signal(flags.at[1], 1)" in text and "pl.semaphore_wait(flags.at[1], 1)" in text
    assert "unsafe: what `semfix fix --unsafe-fixes` writes" in result.stdout
    assert "pl.semaphore_wait(other[0], 1)" in text  # another Ref: not proven, left alone


def test_root_option_and_unfound_files(ringlib: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    log = (TRACEBACKS / "dma_wait_remote.log").read_text()
    found = cli("explain", "-", "--root", str(ringlib), cwd=elsewhere, stdin=log)
    assert found.returncode == 0 and "+        x_hbm, o_hbm, send_sems[0], recv_sems.at[0]" in found.stdout
    assert "\n--- a/ringlib/kernels.py\n+++ b/ringlib/kernels.py\n" in found.stdout  # relative to --root
    lost = cli("explain", "-", cwd=elsewhere, stdin=log)
    assert lost.returncode == 1 and "Cannot find /home/runner/work/ringlib/ringlib/ringlib/kernels.py" in lost.stdout


def test_an_unrelated_error_is_exit_2(tmp_path: Path) -> None:
    result = cli("explain", str(TRACEBACKS / "unrelated.log"), cwd=tmp_path)
    assert result.returncode == 2 and "no JAX semaphore or DMA error" in result.stderr


@pytest.fixture
def dmalib(tmp_path: Path) -> Path:
    """The package the dma_*.log files (made by real JAX with dmalib/run.py) point into."""
    shutil.copytree(TRACEBACKS / "dmalib", tmp_path / "dmalib")
    return tmp_path


def _explain_fix(log: str, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("explain", str(TRACEBACKS / log), "--fix", *args, cwd=cwd)


def test_dma_error_proves_nothing_when_two_arguments_could_be_the_culprit(dmalib: Path) -> None:
    before = (dmalib / "dmalib" / "kernels.py").read_text()
    result = _explain_fix("dma_list.log", dmalib)  # make_async_copy(src[...], dst, sem_list[0])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Not fixed, check by hand: `sem_list[0]` (sem)" in result.stdout
    assert "the error is about 3 arguments (`src[...]`, `dst`, `sem_list[0]`)" in result.stdout
    explained = result.stdout.split("`semfix check` still finds")[0]  # then check's own words, with their caveat
    assert "would write `sem_list.at[0]`; not made" in explained  # a list of Refs: `.at` would raise AttributeError
    # `src[...]` -> `src` is safe on its own (SEM005), whichever argument JAX meant.
    fixed = before.replace("make_async_copy(src[...], dst, sem_list[0])", "make_async_copy(src, dst, sem_list[0])")
    assert fixed != before
    assert (dmalib / "dmalib" / "kernels.py").read_text() == fixed


def test_dma_error_with_two_safe_fixes(dmalib: Path) -> None:
    result = _explain_fix("dma_both_read.log", dmalib)  # async_copy(src[...], dst, sem[...])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SEM005" in result.stdout and "SEM001" in result.stdout
    assert "pltpu.async_copy(src, dst, sem).wait()" in (dmalib / "dmalib" / "kernels.py").read_text()


@pytest.mark.parametrize(
    ("log", "fixed"),
    [
        ("dma_remote.log", "src, dst, send_sems.at[0], recv_sems.at[0]"),  # send_sem's own message
        ("signal_array.log", "pl.semaphore_signal(flags.at[0], 1)\n    pl.semaphore_wait(flags.at[0], 1)"),
        ("dma_wait.log", "pltpu.make_async_copy(src, dst, sems.at[0]).wait()"),  # a wait without its start
    ],
)
def test_errors_about_one_semaphore_argument_prove_it(dmalib: Path, log: str, fixed: str) -> None:
    result = _explain_fix(log, dmalib)
    assert result.returncode == 0, result.stdout + result.stderr
    assert fixed in (dmalib / "dmalib" / "kernels.py").read_text()


@pytest.mark.parametrize(
    ("log", "named"),
    [("dma_array.log", "`sems[1]` (sem): SEM002")],
)
def test_jax_0_10s_dma_text_names_the_unsafe_fix_it_does_not_single_out(dmalib: Path, log: str, named: str) -> None:
    """0.10's one DMA text is about the source, the destination and the semaphore: that the
    buffers look like Refs proves nothing (issue 35.15), so the engine's unsafe fix is named,
    with the command that would make it, and explain exits 1 with the file as it was."""
    before = (dmalib / "dmalib" / "kernels.py").read_text()
    result = _explain_fix(log, dmalib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert named in result.stdout and "`semfix fix --unsafe-fixes` would write" in result.stdout
    assert (dmalib / "dmalib" / "kernels.py").read_text() == before


@pytest.fixture
def dmalib12(tmp_path: Path) -> Path:
    """The package the dma12_*.log files (real JAX 0.12.1 runs: tracebacks/capture.py) point into."""
    shutil.copytree(TRACEBACKS / "dmalib12", tmp_path / "dmalib12")
    return tmp_path / "dmalib12"  # the folder the logs ran `python -m dmalib12.run` in


@pytest.mark.parametrize(
    ("log", "written", "fixed"),
    [
        # 0.10 blamed the buffers and the semaphore together: `sem_list[0]` was a suspect (exit 1)
        ("dma12_list.log", "make_async_copy(src[...], dst, sem_list[0])", "make_async_copy(src, dst, sem_list[0])"),
        ("dma12_array.log", "dst.at[0:4], sems[1])", "dst.at[0:4], sems.at[1])"),
        (
            "dma12_remote.log",
            "send_sems.at[0], recv_sems[0], device_id=0)",
            "send_sems.at[0], recv_sems.at[0], device_id=0)",
        ),
        (
            "dma12_read_sem.log",
            "sems.at[0], src_sem=sems[1])\n    copy.start()",
            "sems.at[0], src_sem=sems.at[1])\n    copy.start()",
        ),
        ("dma12_wait_read.log", "src_sem=sems[1]).wait()", "src_sem=sems.at[1]).wait()"),
    ],
)
def test_jax_0_12s_dma_texts_prove_their_one_culprit(dmalib12: Path, log: str, written: str, fixed: str) -> None:
    """Each of JAX 0.12's DMA texts names fewer arguments than 0.10's one: the one culprit
    among them is proven, fixed, and explain exits 0; nothing else in the file changes."""
    kernels = dmalib12 / "dmalib12" / "kernels.py"
    before = kernels.read_text()
    assert before.count(written) == 1
    result = _explain_fix(log, dmalib12)
    assert result.returncode == 0, result.stdout + result.stderr
    assert kernels.read_text() == before.replace(written, fixed)


def test_jax_0_12s_buffer_text_leaves_the_semaphore_to_its_own_error(dmalib12: Path) -> None:
    """`DMA source/destination arguments must be Refs.` is about the buffers alone: the
    semaphore read beside them is not proven by it and is named, not rewritten."""
    kernels = dmalib12 / "dmalib12" / "kernels.py"
    result = _explain_fix("dma12_both_read.log", dmalib12)  # async_copy(src[...], dst, sem[...])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "`sem[...]` (sem): not proven by this error, left alone." in result.stdout
    assert "pltpu.async_copy(src, dst, sem[...]).wait()" in kernels.read_text()


def test_the_proof_does_not_spread_past_a_rebinding(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(
        "from jax.experimental import pallas as pl\n\n\ndef flag_kernel(flags, pick):\n"
        "    pl.semaphore_signal(flags[1], 1)\n    flags = pick(flags)\n    pl.semaphore_wait(flags[1], 1)\n\n\n"
        "class Ring:\n    def step(self, other):\n        pl.semaphore_signal(self.flags[1], 1)\n"
        "        self.flags = other\n        pl.semaphore_wait(self.flags[1], 1)\n"
    )
    log = "".join(
        f'Traceback (most recent call last):\n  File "/ci/kernels.py", line {line}, in {function}\n'
        f"    pl.semaphore_signal({flags}[1], 1)\nValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
        for line, function, flags in ((5, "flag_kernel", "flags"), (12, "step", "self.flags"))
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (tmp_path / "kernels.py").read_text()
    assert "signal(flags.at[1], 1)" in text and "signal(self.flags.at[1], 1)" in text  # what JAX proved
    assert "wait(flags[1], 1)" in text and "wait(self.flags[1], 1)" in text  # another Ref by then, maybe


def test_the_proof_does_not_spread_to_another_scopes_name(tmp_path: Path) -> None:
    """Issue 20.3: a comprehension, lambda or nested function binding its own `flags` holds
    another object, maybe a tuple of Refs, whatever the kernel's `flags` is proven to be."""
    (tmp_path / "kernels.py").write_text(
        "from jax.experimental import pallas as pl\n\n\ndef flag_kernel(flags, groups):\n"
        "    pl.semaphore_signal(flags[1], 1)\n"
        "    waits = [pl.semaphore_wait(flags[1], 1) for flags in groups]\n"
        "    late = lambda flags: pl.semaphore_wait(flags[0], 1)  # noqa: E731\n\n"
        "    def inner(flags):\n        pl.semaphore_wait(flags[1], 1)\n\n"
        "    pl.semaphore_wait(flags[1], 1)\n    return waits, late, inner\n"
    )
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 5, in flag_kernel\n'
        "    pl.semaphore_signal(flags[1], 1)\nValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 0, result.stdout + result.stderr
    text = (tmp_path / "kernels.py").read_text()
    # the signal's argument: JAX's one; written, it proves the kernel's own `flags` a Ref to the
    # engine, whose safe fix of its last wait is made (issue 44); the other scopes' `flags` are not it
    assert "signal(flags.at[1], 1)" in text and "\n    pl.semaphore_wait(flags.at[1], 1)\n    return" in text
    assert "[pl.semaphore_wait(flags[1], 1) for" in text and "pl.semaphore_wait(flags[0], 1)  #" in text
    assert "        pl.semaphore_wait(flags[1], 1)\n" in text


# -- a value carried through a variable: the engine's own finding there (SEM003), fixed as `fix` fixes it
CARRIED = {
    "carried.log": (
        "def carried_kernel(src, dst, flags):\n"
        "    pl.semaphore_signal(flags.at[1], 1)\n"
        "    pl.semaphore_wait(flags.at[1], 1)\n"
    ),
    "carried_dma.log": (
        "def carried_dma_kernel(src, dst, sems):\n    copy = pltpu.make_async_copy(src, dst, sems.at[0])\n"
    ),
}


def _function(text: str, name: str) -> str:
    return next(ast.get_source_segment(text, n) or "" for n in ast.parse(text).body if getattr(n, "name", "") == name)


@pytest.mark.parametrize("log", CARRIED)
def test_a_carried_read_is_fixed_by_its_rule(dmalib: Path, log: str) -> None:
    from semfix.api import fix_source
    from semfix.selection import build_settings

    kernel, name = dmalib / "dmalib" / "kernels.py", CARRIED[log].split("(")[0].removeprefix("def ")
    before = kernel.read_text()
    result = _explain_fix(log, dmalib)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SEM003 `" in result.stdout and "holds a value read from the semaphore Ref" in result.stdout
    assert CARRIED[log] in kernel.read_text()
    # exactly what `fix` does to that kernel (its uses and the assignment), and nothing else
    fixed = fix_source(before, settings=build_settings(select=["SEM003"])).source
    assert kernel.read_text() == before.replace(_function(before, name), _function(fixed, name))


def test_a_carried_read_the_rule_only_reports_is_only_reported(dmalib: Path) -> None:
    before = (dmalib / "dmalib" / "kernels.py").read_text()
    result = _explain_fix("commented.log", dmalib)  # `flag = flags.at[0][...]  # this core's flag`
    assert result.returncode == 1, result.stdout + result.stderr
    assert "SEM003" in result.stdout and "a comment on the assignment would be lost" in result.stdout
    assert (dmalib / "dmalib" / "kernels.py").read_text() == before


# -- a log is untrusted text: writes stay under --root, and dirty files are refused -------
def test_a_file_outside_root_is_not_touched(dmalib: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = dmalib / "dmalib" / "kernels.py"
    root = tmp_path_factory.mktemp("root")
    (root / "linked.py").symlink_to(outside)
    before = outside.read_text()
    log = (TRACEBACKS / "signal_array.log").read_text()
    for named in (str(outside), str(root / "linked.py")):
        result = cli(
            "explain",
            "-",
            "--fix",
            "--root",
            str(root),
            cwd=root,
            stdin=log.replace("/home/runner/work/dmalib/dmalib/dmalib/kernels.py", named),
        )
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"{named} is outside --root, not touched" in result.stdout and "---" not in result.stdout
        assert outside.read_text() == before


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_dirty_files_are_refused_like_fix_refuses_them(dmalib: Path) -> None:
    kernel = dmalib / "dmalib" / "kernels.py"
    subprocess.run(["git", "init", "-q"], cwd=dmalib, check=True)
    for state in ("untracked", "unstaged"):
        if state == "unstaged":
            subprocess.run(["git", "add", "."], cwd=dmalib, check=True)
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", "k"], cwd=dmalib, check=True
            )
            kernel.write_text(kernel.read_text() + "# work in progress\n")
        before = kernel.read_text()
        refused = _explain_fix("signal_array.log", dmalib)
        fix = cli("fix", "--select", "SEM001", str(kernel.relative_to(dmalib)), cwd=dmalib)
        reason = fix.stderr.splitlines()[0]
        assert "--allow-dirty" in reason and refused.returncode == 2, refused.stdout + refused.stderr
        assert reason in refused.stderr.splitlines() and kernel.read_text() == before  # fix's own words
    allowed = _explain_fix("signal_array.log", dmalib, "--allow-dirty")
    assert allowed.returncode == 0 and "pl.semaphore_signal(flags.at[0], 1)" in kernel.read_text()


# -- tracebacks produced by real JAX ------------------------------------------------------
try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    jax = None

needs_jax = pytest.mark.skipif(
    jax is None and os.environ.get("SEMFIX_REQUIRE_JAX") != "1", reason="JAX is not installed"
)
# A name JAX removed (AttributeError) or a keyword it renamed (TypeError) is the migration's to
# rename, not an error explain reads; a view taken of a value (jnp's `.at`, a TypeError) is one.
BUGGY = [
    case
    for case in fixture_cases()
    if "error" in case.spec.get("runtime", {})
    and (
        not case.spec["runtime"]["error"].startswith(("AttributeError", "TypeError"))
        or "as a JAX value" in case.spec["runtime"]["error"]
    )
]
# Kernels whose error no rewrite settles (a semaphore of the wrong kind): explain names the cause.
REPORTED = [case for case in BUGGY if not case.spec.get("changes")]
# Kernels whose fix is made at a read in a literal a loop target or an unpacked name takes, away
# from the call JAX blames: explain names the argument and fixes nothing (exit 1), as it must
# where it proves nothing; `semfix fix` fixes them (issue 35 item 9).
# Likewise where the blamed DMA is a descriptor whose argument is a conditional expression, or is
# built in a nested def a helper runs, or the argument is an element of a comprehension of reads
# (issue 43): explain proves nothing there yet (`semfix fix` fixes them).
READ_IN_A_LITERAL = [
    case
    for case in BUGGY
    if case.name
    in (
        "sem003/rt_loop_target",
        "sem003/rt_unpacked",
        "general/rt_conditional_argument",
        "sem002/rt_helper_nested_step",
        "sem002/rt_read_in_a_comprehension",
        "sem002/rt_read_in_a_dict_comprehension",
    )
]
BUGGY = [case for case in BUGGY if case not in REPORTED and case not in READ_IN_A_LITERAL]
# the report-only kernels of SEM006 (a wrong kind), of SEM004 (a row, or a whole array), and
# of SEM002 (a view whose rank is not proven, a read of a read)
WRONG_KIND = [case for case in REPORTED if case.spec["reported"][0].endswith("SEM006")]
NON_SCALAR = [case for case in REPORTED if case.spec["reported"][0].endswith("SEM004")]
UNPROVEN = [case for case in REPORTED if case.spec["reported"][0].endswith("SEM002")]


def _run(script: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    (cwd / "run_kernel.py").write_text(RUNNER)
    return subprocess.run([sys.executable, "run_kernel.py", script.name], cwd=cwd, capture_output=True, text=True)


def _traceback_of(script: Path, cwd: Path) -> str:
    done = _run(script, cwd)
    assert done.returncode != 0, "the buggy kernel ran"
    return done.stderr


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", BUGGY, ids=[c.name for c in BUGGY])
def test_explain_fixes_what_jax_reported(case: Case, tmp_path: Path) -> None:
    """As a user would: run, paste the error into explain --fix, run again, until it runs.

    JAX stops at the first bad call, so a kernel with bugs on several DMAs takes one round each;
    every round must fix what that error reported, and the end state is the fixture's.
    """
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    done = _run(kernel, tmp_path)
    assert done.returncode != 0, "the buggy kernel ran"
    for _ in range(len(case.spec["changes"])):
        before = kernel.read_bytes()
        result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=done.stderr)
        assert result.returncode == 0, result.stdout + result.stderr
        assert kernel.read_bytes() != before, "explain fixed nothing"
        done = _run(kernel, tmp_path)
        if done.returncode == 0:
            break
    assert done.returncode == 0, done.stderr
    assert kernel.read_bytes() == case.after


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", READ_IN_A_LITERAL, ids=[c.name for c in READ_IN_A_LITERAL])
def test_explain_leaves_a_read_in_a_literal_to_fix(case: Case, tmp_path: Path) -> None:
    """The call JAX blames passes a loop target or an unpacked name (or the other forms above):
    explain says it cannot fix it, exits 1 and leaves the file as it was (it writes only what it
    proves), and `semfix fix` fixes the file."""
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_traceback_of(kernel, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert kernel.read_bytes() == case.before
    assert "Cannot fix it automatically" in result.stdout or "Not fixed, check by hand: `" in result.stdout
    assert case.fix(case.before).source != case.before


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", WRONG_KIND, ids=[c.name for c in WRONG_KIND])
def test_explain_names_a_semaphore_of_the_wrong_kind_and_its_allocation(case: Case, tmp_path: Path) -> None:
    """JAX's kind errors: explain points at the argument the rule reports first (JAX stops
    there) and at the line that allocates it, fixes nothing and exits 1."""
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_traceback_of(kernel, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert kernel.read_bytes() == case.before
    line = case.spec["reported"][0].split(":")[0]
    assert f"  At line {line}, SEM006 `" in result.stdout and "(allocated at line " in result.stdout, result.stdout
    assert "No fix: allocate the semaphore as the kind the operation takes" in result.stdout


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", NON_SCALAR, ids=[c.name for c in NON_SCALAR])
def test_explain_fixes_no_row_or_whole_array_and_says_so(case: Case, tmp_path: Path) -> None:
    """A row or a whole array where one semaphore is needed: which one was meant is the
    author's call, so explain names SEM004's finding at the line JAX stopped at, and fixes nothing."""
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_traceback_of(kernel, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert kernel.read_bytes() == case.before
    first = case.fix(case.before).findings[0]
    assert first.rule == "SEM004" and f"SEM004 `{first.original}` passes a " in result.stdout, result.stdout


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", UNPROVEN, ids=[c.name for c in UNPROVEN])
def test_explain_fixes_no_element_read_the_engine_does_not_prove(case: Case, tmp_path: Path) -> None:
    """An element read whose view may be a row (its rank is not proven) or would take `.at` of a
    value (`sems[i][j]`): explain names the argument, fixes nothing and exits 1."""
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_traceback_of(kernel, tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert kernel.read_bytes() == case.before
    assert f"`{case.fix(case.before).findings[0].original}`" in result.stdout, result.stdout


def test_an_unranked_view_is_not_fixed_where_the_error_names_the_semaphore_alone(tmp_path: Path) -> None:
    """JAX 0.12's `DMA destination semaphore must be a Ref.` pins the argument but not its shape:
    `sems.at[0]` would be a row where `sems` is 2-D (`Fix.doubt`), so explain makes no fix."""
    before = (
        "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(x_ref, o_ref, buf, sems):\n    copy = pltpu.make_async_copy(x_ref, buf, sems[0])\n"
        "    copy.start()\n    copy.wait()\n\n\ndef run(x, shape):\n    return pl.pallas_call(\n"
        "        kernel, out_shape=x, scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA(shape)]\n"
        "    )(x)\n"
    )
    (tmp_path / "kernels.py").write_text(before)
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 12, in run\n    return pl.pallas_call(\n'
        '  File "/ci/kernels.py", line 7, in kernel\n    copy.start()\n'
        "ValueError: DMA destination semaphore must be a Ref.\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "not made: the log does not show how many indices pick one semaphore" in result.stdout, result.stdout
    assert (tmp_path / "kernels.py").read_text() == before


def test_a_read_of_a_read_is_not_fixed_where_the_file_does_not_show_a_tuple(tmp_path: Path) -> None:
    """`flags[slot][1, 1]` where the file does not show what `flags` is (its launch out of
    sight): `flags[slot].at[1, 1]` is right only if `flags[slot]` is a Ref, and JAX refuses a
    value read out of an array Ref the same way (`Fix.doubt`), so explain makes no fix (the
    oracle's seed 700033: a kernel launched as `Op().kernel` got jnp's `.at` of a value)."""
    before = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(x_ref, o_ref, flags):\n    slot = 0\n    pl.semaphore_signal(flags[slot][1, 1], 1)\n"
    )
    (tmp_path / "kernels.py").write_text(before)
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 6, in kernel\n'
        "    pl.semaphore_signal(flags[slot][1, 1], 1)\n"
        "ValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "not made: the log does not show whether what is indexed is a Ref" in result.stdout, result.stdout
    assert (tmp_path / "kernels.py").read_text() == before


def test_a_kind_error_semfix_cannot_prove_names_no_argument(tmp_path: Path) -> None:
    """A semaphore passed through a call of a function of another library has no proven kind
    (another name bound to it, `alias = done`, is the same Ref): explain says what it proves."""
    (tmp_path / "kernels.py").write_text(
        "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def flag_kernel(done):\n    alias = other.same(done)\n    pl.semaphore_signal(alias)\n\n\n"
        "def run(x):\n    shapes = [pltpu.SemaphoreType.DMA]\n"
        "    return pl.pallas_call(flag_kernel, out_shape=x, scratch_shapes=shapes)(x)\n"
    )
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 7, in flag_kernel\n'
        "    pl.semaphore_signal(alias)\nValueError: Must signal semaphores of the following types:"
        " {<class 'jax._src.pallas.core.semaphore'>}. Got dma_sem.\n"
    )
    result = cli("explain", "-", cwd=tmp_path, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "JAX refused to signal on a DMA semaphore: it takes a regular or barrier semaphore." in result.stdout
    assert "Cannot point at the semaphore: semfix proves a semaphore's kind only from its allocation" in result.stdout
    assert "SEM006" not in result.stdout


@needs_jax
@pytest.mark.jax
def test_kernel_in_another_module_from_its_pallas_call(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "kernels.py").write_text(
        "from jax.experimental import pallas as pl\n\n\ndef bump(x_ref, o_ref, sem):\n"
        "    pl.semaphore_signal(sem[...], 1)\n    pl.semaphore_wait(sem, 1)\n    o_ref[...] = x_ref[...] + 1.0\n"
    )
    (tmp_path / "main.py").write_text(
        "import jax, jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\nfrom pkg.kernels import bump\n\n"
        "x = jnp.zeros((8, 128), jnp.float32)\n"
        "print(pl.pallas_call(bump, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
        "    scratch_shapes=[pltpu.SemaphoreType.REGULAR], interpret=True)(x)[0, 0])\n"
    )
    failed = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True)
    assert failed.returncode != 0
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=failed.stdout + failed.stderr)
    assert result.returncode == 0, result.stdout
    assert "raised from pkg/kernels.py:5, in bump" in result.stdout
    fixed = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, capture_output=True, text=True)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "1.0"


@needs_jax
@pytest.mark.jax
def test_stored_dma_log_is_what_jax_says_and_the_list_was_right(dmalib: Path) -> None:
    """The real kernel fails as dma_list.log says; the hand fix of the real culprit (`src`) runs."""
    run = [sys.executable, "-m", "dmalib.run", "list_kernel"]
    failed = subprocess.run(run, cwd=dmalib, capture_output=True, text=True, check=False)
    stored = (TRACEBACKS / "dma_list.log").read_text()
    for line in (
        "ValueError: DMA source/destination/semaphore arguments must be Refs.",
        'kernels.py", line 8, in list_kernel',
    ):
        assert line in failed.stderr and line in stored
    result = cli("explain", "-", "--fix", cwd=dmalib, stdin=failed.stderr)
    assert result.returncode == 1 and "sem_list.at[0]" not in (dmalib / "dmalib" / "kernels.py").read_text()
    kernel = dmalib / "dmalib" / "kernels.py"
    kernel.write_text(kernel.read_text().replace("make_async_copy(src[...], dst", "make_async_copy(src, dst"))
    fixed = subprocess.run(run, cwd=dmalib, capture_output=True, text=True, check=False)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "1.0", fixed.stderr


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("log", CARRIED)
def test_stored_carried_logs_are_what_jax_says_and_the_fix_runs(dmalib: Path, log: str) -> None:
    run = [sys.executable, "-m", "dmalib.run", CARRIED[log].split("(")[0].removeprefix("def ")]
    failed = subprocess.run(run, cwd=dmalib, capture_output=True, text=True, check=False)
    stored = (TRACEBACKS / log).read_text()
    assert failed.stderr.splitlines()[-3] == stored.splitlines()[-3]  # JAX's error line
    assert cli("explain", "-", "--fix", cwd=dmalib, stdin=failed.stderr).returncode == 0
    fixed = subprocess.run(run, cwd=dmalib, capture_output=True, text=True, check=False)
    assert fixed.returncode == 0 and fixed.stdout.strip() == "1.0", fixed.stderr


# -- logs as people paste them: pytest's output, CI and launcher prefixes, mixed ----------
@pytest.fixture
def ptlib(tmp_path: Path) -> Path:
    """The package the pytest_*.log and gpu_copy.log files (made by real JAX, see ptlib/check_kernels.py) point into."""
    shutil.copytree(TRACEBACKS / "ptlib", tmp_path / "ptlib")
    return tmp_path


STAMP = "2026-12-04T05:20:11.1234567Z "  # what GitHub Actions puts before every line of a raw log


def _prefixed(log: str, *prefixes: str) -> list[str]:
    return ["".join(prefixes) + line for line in (TRACEBACKS / log).read_text().splitlines()]


def _interleaved(*streams: list[str]) -> str:
    """Lines of several processes as a launcher writes them: one of each in turn."""
    longest = max(map(len, streams))
    return "".join(f"{s[i]}\n" for i in range(longest) for s in streams if i < len(s))


TPU_FIXED = (
    "pl.semaphore_signal(flags.at[1], 2)\n    pl.semaphore_wait(flags.at[1], 2)",  # the log's; the wait it proves
    "make_async_copy(x_hbm, o_hbm, sems.at[1]).wait()",
)


@pytest.mark.parametrize(
    "log",
    [
        pytest.param((TRACEBACKS / "pytest_short.log").read_text(), id="pytest-short"),
        pytest.param((TRACEBACKS / "pytest_long.log").read_text(), id="pytest-long"),
        pytest.param("\n".join(_prefixed("pytest_short.log", STAMP)), id="github-actions"),
        pytest.param("\n".join(_prefixed("pytest_long.log", "[rank0]: ")), id="torchrun"),
        pytest.param("\n".join(_prefixed("pytest_short.log", "[1,0]<stderr>:")), id="mpirun"),
        pytest.param("\n".join(_prefixed("pytest_long.log", STAMP, "[rank3]: ")), id="github-actions-and-torchrun"),
    ],
)
def test_pytest_output_as_pasted(ptlib: Path, log: str) -> None:
    result = cli("explain", "-", "--fix", cwd=ptlib, stdin=log)
    assert "raised from ptlib/kernels.py:7, in ping_kernel" in result.stdout, result.stdout + result.stderr
    assert "raised from ptlib/kernels.py:14, in drain_kernel" in result.stdout
    assert "Expected the destination semaphore to be a reference" in result.stdout
    assert all(fixed in (ptlib / "ptlib" / "kernels.py").read_text() for fixed in TPU_FIXED)
    assert result.stdout.count("raised from") == 5  # once per failure: not again from the summary


def test_colours_kept_in_a_raw_log(ptlib: Path) -> None:
    """`pytest --color=yes` (or FORCE_COLOR in a workflow): GitHub Actions keeps the escape codes."""
    result = cli("explain", "-", "--fix", cwd=ptlib, stdin="\n".join(_prefixed("pytest_color.log", STAMP)))
    assert "raised from ptlib/kernels.py:7, in ping_kernel" in result.stdout, result.stdout + result.stderr
    assert all(fixed in (ptlib / "ptlib" / "kernels.py").read_text() for fixed in TPU_FIXED)


def test_processes_interleaved_in_one_log(ptlib: Path) -> None:
    log = _interleaved(_prefixed("pytest_short.log", STAMP, "[rank0]: "), _prefixed("gpu_copy.log", STAMP, "[rank1]: "))
    result = cli("explain", "-", "--fix", cwd=ptlib, stdin=log)
    assert result.stdout.count("raised from") == 8, result.stdout + result.stderr
    assert all(fixed in (ptlib / "ptlib" / "kernels.py").read_text() for fixed in TPU_FIXED)
    assert "copy_gmem_to_smem(x_gmem, buf, bars.at[0])" in (ptlib / "ptlib" / "gpu.py").read_text()


def test_mosaic_gpu_copies_are_not_barrier_errors(ptlib: Path) -> None:
    result = cli("explain", str(TRACEBACKS / "gpu_copy.log"), "--fix", cwd=ptlib)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not the barrier Ref" not in result.stdout and "Mosaic GPU copy" in result.stdout
    assert "the value read out of a Mosaic GPU barrier Ref" in result.stdout  # JitTracer(barrier[])
    text = (ptlib / "ptlib" / "gpu.py").read_text()
    assert "copy_gmem_to_smem(x_gmem, buf, bars.at[0])" in text  # stage_kernel: the one suspect
    assert "copy_smem_to_gmem(buf, o_gmem)" in text  # flush_kernel: a buffer read, SEM005
    # relay_kernel: JAX checks the source first, so the error proves neither argument; both are
    # fixed all the same, as `fix` would: each fix is safe on its own (`bars.at[0]` on the next
    # line proves `bars` a Ref).
    assert (
        "`x_gmem[...]` -> `x_gmem` (SEM005)" in result.stdout and "`bars[0]` -> `bars.at[0]` (SEM002)" in result.stdout
    )
    assert "copy_gmem_to_smem(x_gmem[...]" not in text and "bars[0]" not in text


def test_equally_good_matches_are_ambiguous(tmp_path: Path) -> None:
    for copy in ("a", "b"):
        shutil.copytree(TRACEBACKS / "ptlib", tmp_path / copy / "ptlib")
    result = cli("explain", str(TRACEBACKS / "gpu_copy.log"), cwd=tmp_path)
    assert "Cannot find" not in result.stdout, result.stdout
    assert f"ambiguous: {Path('a/ptlib/gpu.py')}, {Path('b/ptlib/gpu.py')}" in result.stdout


def test_the_search_skips_virtual_environments(ptlib: Path) -> None:
    installed = ptlib / "env" / "lib" / "ptlib"  # an environment not named like one: pyvenv.cfg says it is
    shutil.copytree(TRACEBACKS / "ptlib", installed)
    (ptlib / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    result = cli("explain", str(TRACEBACKS / "gpu_copy.log"), cwd=ptlib)
    assert "raised from ptlib/gpu.py:6, in stage_kernel" in result.stdout, result.stdout


def test_the_search_stops_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log pasted at `/` must not walk the whole machine: the search gives up and says so."""
    from semfix.explain import search as module
    from semfix.explain.logs import parse_log

    for index in range(8):
        (tmp_path / f"d{index}").mkdir()
    (tmp_path / "d3" / "kernels.py").write_text("")
    monkeypatch.setattr(module, "SEARCH_LIMIT", 4)
    log = (
        "Traceback (most recent call last):\n"
        '  File "/ci/kernels.py", line 3, in k\n'
        "ValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    )
    lines = module.explain(parse_log(log)[0], tmp_path).lines
    assert any("the search stopped early, after 4 folders" in line for line in lines), lines
    assert not any("raised from" in line for line in lines)  # a better match may lie beyond: none is chosen
    assert module._skipped("/", "proc") and not module._skipped("/work", "proc")  # the kernel's own, at `/` only


# -- where the blame is decided: below the CLI, from the engine's own notions --------------
def test_the_cli_knows_nothing_of_trees() -> None:
    """semfix/cli/ reaches the analysis only through semfix.api (docs/design.md, "Layout")."""
    cli_dir = Path(__file__).parent.parent / "semfix" / "cli"
    for module in cli_dir.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                assert not [
                    n for n in names if n.split(".")[0] in ("ast", "libcst") or n.startswith("semfix.engine")
                ], module.name


def _dma_log(line: int, source: str) -> str:
    return (
        f'Traceback (most recent call last):\n  File "/ci/kernels.py", line {line}, in kernel\n    {source}\n'
        "ValueError: DMA source/destination/semaphore arguments must be Refs.\n"
    )


def test_a_descriptor_is_the_one_last_assigned_before_its_start(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(
        "from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(src, dst, sems, flag):\n    if flag:\n"
        "        copy = pltpu.make_async_copy(src, dst, sems[0])\n"
        "    copy = pltpu.make_async_copy(src[...], dst, sems.at[1])\n    copy.start()\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_dma_log(8, "copy.start()"))
    assert result.returncode == 0, result.stdout + result.stderr
    text = (tmp_path / "kernels.py").read_text()
    assert "make_async_copy(src, dst, sems.at[1])" in text and "make_async_copy(src, dst, sems[0])" in text


def test_another_librarys_copy_is_not_blamed(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(
        "from torch_kernels import make_async_copy\n\n\n"
        "def kernel(x, buf, sem):\n    make_async_copy(x[...], buf, sem[...])\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=_dma_log(5, "make_async_copy(x[...], buf, sem[...])"))
    assert result.returncode == 1 and "no DMA call there whose arguments semfix can read" in result.stdout, (
        result.stdout
    )


# -- explain writes through the engine's run and proof, as `fix` does ----------------------
def test_only_the_chosen_fixes_are_made_and_proven() -> None:
    from semfix.api import blame, chosen_settings, fix_source

    source = (
        b"from jax.experimental import pallas as pl\n\n\ndef kernel(flags, other):\n"
        b"    pl.semaphore_signal(flags[0], 1)\n    pl.semaphore_wait(other[...], 1)\n"
    )
    chosen = blame(source, 5, None).chosen
    assert [f.original for f in chosen] == ["flags[0]"]
    fixed = fix_source(source, settings=chosen_settings(chosen))
    assert fixed.source == source.replace(b"flags[0]", b"flags.at[0]")  # `other[...]` is not chosen
    assert [f.original for f in fixed.applied] == ["flags[0]"]


def test_explain_refuses_a_write_that_fails_fixs_checks(tmp_path: Path) -> None:
    """cp932 spells one character two ways: decoding and encoding again would rewrite the comment's
    bytes. `fix` refuses such a file; explain used to splice its fix in and write it."""
    kernel = tmp_path / "kernels.py"
    before = (
        b"# -*- coding: cp932 -*-\n# x \x87\x90 y: NEC's spelling of this character\n"
        b"from jax.experimental import pallas as pl\n\n\ndef kernel(flags):\n    pl.semaphore_signal(flags[0], 1)\n"
    )
    kernel.write_bytes(before)
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 7, in kernel\n'
        "    pl.semaphore_signal(flags[0], 1)\nValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    checks = "Cannot fix kernels.py: the rewrite fails semfix's checks (cannot write this file back byte for byte"
    assert checks in result.stdout
    assert kernel.read_bytes() == before and "Fixed" not in result.stdout


# -- the file may have changed since the run: the printed source line says so --------------
SIGNAL = "def signal_kernel(src, dst, flags):\n    pl.semaphore_signal(flags[0], 1)\n"
#: signal_array.log's line 32 holds another call now: a list of Refs, which `.at` would break
EDITED = "def signal_kernel(src, dst, flags, peer_sems=()):\n    pl.semaphore_signal(peer_sems[1], 1)\n"


def test_a_line_that_moved_is_found_by_its_printed_source(dmalib: Path) -> None:
    kernel = dmalib / "dmalib" / "kernels.py"
    kernel.write_text(kernel.read_text().replace(SIGNAL, EDITED + "    pl.semaphore_signal(flags[0], 1)\n"))
    result = _explain_fix("signal_array.log", dmalib)
    assert result.returncode == 0, result.stdout + result.stderr
    now = "line 32 is `pl.semaphore_signal(peer_sems[1], 1)` now, not `pl.semaphore_signal(flags[0], 1)`"
    assert now in result.stdout
    assert "that text is line 33 now, the only one in `signal_kernel`" in result.stdout
    assert "raised from dmalib/kernels.py:33, in signal_kernel" in result.stdout
    text = kernel.read_text()
    assert "pl.semaphore_signal(peer_sems[1], 1)\n    pl.semaphore_signal(flags.at[0], 1)\n" in text


@pytest.mark.parametrize(
    ("edited", "said"),
    [
        (EDITED + "    pl.semaphore_signal(flags[0], 1)\n" * 2, "on 2 lines (33, 34)"),
        (EDITED + "    pl.semaphore_signal(flags[0], 2)\n", "nowhere"),
    ],
    ids=["twice", "gone"],
)
def test_a_line_that_changed_is_refused_unless_its_text_is_found_once(dmalib: Path, edited: str, said: str) -> None:
    kernel = dmalib / "dmalib" / "kernels.py"
    kernel.write_text(kernel.read_text().replace(SIGNAL, edited))
    before = kernel.read_text()
    result = _explain_fix("signal_array.log", dmalib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"and that text is {said} in `signal_kernel`: cannot tell which call raised the error" in result.stdout
    assert "dmalib/kernels.py changed since the run: line 32 is" in result.stdout  # which file, of all the log's
    assert kernel.read_text() == before and "---" not in result.stdout


# -- an installed package is not the checkout ----------------------------------------------
INSTALLED = "/opt/venv/lib/python3.11/site-packages/dmalib/kernels.py"
RUNNER_PATH = "/home/runner/work/dmalib/dmalib/dmalib/kernels.py"  # where signal_array.log was made


@pytest.mark.parametrize("checkout", ["pkg", "dmalib"])  # matched by the file's name, or by its folder too
def test_a_frame_in_an_installed_package_is_not_the_checkouts_file(tmp_path: Path, checkout: str) -> None:
    shutil.copytree(TRACEBACKS / "dmalib", tmp_path / checkout)
    before = (tmp_path / checkout / "kernels.py").read_text()
    log = (TRACEBACKS / "signal_array.log").read_text().replace(RUNNER_PATH, INSTALLED)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{INSTALLED} is in an installed package, not in this checkout" in result.stdout
    assert "pip install -e" in result.stdout and (tmp_path / checkout / "kernels.py").read_text() == before


def test_a_copy_installed_into_a_virtual_environment_under_root_is_not_the_checkouts(tmp_path: Path) -> None:
    packages = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(TRACEBACKS / "dmalib", tmp_path / "dmalib")
    shutil.copytree(TRACEBACKS / "dmalib", packages / "dmalib")  # `pip install .`, not `-e`
    installed = packages / "dmalib" / "kernels.py"
    before = installed.read_text()
    log = (TRACEBACKS / "signal_array.log").read_text().replace(RUNNER_PATH, str(installed))
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1 and f"{installed} is in an installed package" in result.stdout, result.stdout
    assert installed.read_text() == before and (tmp_path / "dmalib" / "kernels.py").read_text() == before


def test_a_package_linked_into_site_packages_from_the_checkout_is_fixed(tmp_path: Path) -> None:
    checkout, packages = tmp_path / "checkout", tmp_path / "env" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(TRACEBACKS / "dmalib", checkout / "dmalib")
    packages.mkdir(parents=True)
    (packages / "dmalib").symlink_to(checkout / "dmalib")  # how a symbolic-link (editable) install looks
    log = (TRACEBACKS / "signal_array.log").read_text()
    log = log.replace(RUNNER_PATH, str(packages / "dmalib" / "kernels.py"))
    result = cli("explain", "-", "--fix", "--root", str(checkout), cwd=tmp_path, stdin=log)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raised from dmalib/kernels.py:32, in signal_kernel" in result.stdout
    assert "pl.semaphore_signal(flags.at[0], 1)" in (checkout / "dmalib" / "kernels.py").read_text()


def test_a_match_by_the_file_name_alone_needs_the_printed_source(tmp_path: Path) -> None:
    source = "from jax.experimental import pallas as pl\n\n\ndef k(flags):\n    pl.semaphore_signal(flags[0], 1)\n"
    (tmp_path / "kernels.py").write_text(source)
    log = (
        'Traceback (most recent call last):\n  File "/ci/kernels.py", line 5, in k\n'
        "ValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    )
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1 and "matches kernels.py here only by the file's name" in result.stdout, result.stdout
    printed = log.replace("in k\n", "in k\n    pl.semaphore_signal(flags[0], 1)\n")
    assert cli("explain", "-", "--fix", cwd=tmp_path, stdin=printed).returncode == 0
    assert "flags.at[0]" in (tmp_path / "kernels.py").read_text()


# -- tracebacks as pasted from a terminal's last lines, IPython and Jupyter -----------------
def test_a_tail_pasted_without_its_header(dmalib: Path) -> None:
    lines = (TRACEBACKS / "signal_array.log").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "dmalib/kernels.py" in line)
    result = cli("explain", "-", "--fix", cwd=dmalib, stdin="\n".join(lines[start:]))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pl.semaphore_signal(flags.at[0], 1)" in (dmalib / "dmalib" / "kernels.py").read_text()


def test_the_error_line_alone_is_not_no_error(tmp_path: Path) -> None:
    result = cli("explain", "-", cwd=tmp_path, stdin="ValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no frame of the code that raised it: paste the whole traceback" in result.stdout


@pytest.fixture
def ringnb(tmp_path: Path) -> Path:
    """The notebook ipython*.log come from: its cells run in turn by IPython 9.19 (In[2] is cell 3)."""
    shutil.copytree(TRACEBACKS / "ringnb", tmp_path / "ringnb")
    return tmp_path


@pytest.mark.parametrize("log", ["ipython.log", "ipython_color.log"])
def test_an_ipython_traceback_is_fixed_in_its_notebook_cell(ringnb: Path, log: str) -> None:
    notebook = ringnb / "ringnb" / "ring.ipynb"
    before = notebook.read_text()
    result = cli("explain", str(TRACEBACKS / log), "--fix", cwd=ringnb)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "raised from ringnb/ring.ipynb, cell 3 (Cell In[2]), line 3, in ping_kernel" in result.stdout
    assert "Fix: cell 3, line 4: `flags[1]` -> `flags.at[1]`" in result.stdout
    signal, wait = '"    pl.semaphore_signal(flags[1], 2)\\n"', '"    pl.semaphore_wait(flags[1], 2)"'
    fixed = before.replace(signal, signal.replace("[1]", ".at[1]")).replace(wait, wait.replace("[1]", ".at[1]"))
    assert notebook.read_text() == fixed


def test_an_ipython_tail_pasted_without_its_header(ringnb: Path) -> None:
    lines = (TRACEBACKS / "ipython.log").read_text().splitlines()
    tail = "\n".join(lines[lines.index("Cell In[2], line 3, in ping_kernel(x_ref, o_ref, flags)") :])
    result = cli("explain", "-", "--fix", cwd=ringnb, stdin=tail)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pl.semaphore_signal(flags.at[1], 2)" in (ringnb / "ringnb" / "ring.ipynb").read_text()


def test_an_ipython_cell_no_notebook_holds_is_refused(ringnb: Path) -> None:
    notebook = ringnb / "ringnb" / "ring.ipynb"
    notebook.write_text(notebook.read_text().replace("o_ref[...] = x_ref[...]", "o_ref[...] = x_ref[...] + 1"))
    before = notebook.read_text()
    result = cli("explain", str(TRACEBACKS / "ipython.log"), "--fix", cwd=ringnb)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Cannot find Cell In[2] in a notebook under" in result.stdout and notebook.read_text() == before


def test_an_ipython_kind_error_names_the_semaphore_in_its_cell(ringnb: Path) -> None:
    """The notebook's flags allocated as DMA semaphores: explain names the argument in its cell."""

    def as_dma(text: str) -> str:
        for old, new in (("flags[1]", "flags.at[1]"), ("REGULAR((2,))", "DMA((2,))")):
            text = text.replace(old, new)
        return text.replace(
            "Cannot signal on a non-semaphore Ref: semaphore[]",
            "Must signal semaphores of the following types: {<class 'jax._src.pallas.core.semaphore'>}. Got dma_sem.",
        )

    notebook = ringnb / "ringnb" / "ring.ipynb"
    notebook.write_text(as_dma(notebook.read_text()))
    before = notebook.read_text()
    log = as_dma((TRACEBACKS / "ipython.log").read_text())
    result = cli("explain", "-", "--fix", cwd=ringnb, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "At cell 3, line 3, SEM006 `flags.at[1]` is a DMA semaphore (allocated at line " in result.stdout
    assert notebook.read_text() == before


def test_two_notebooks_holding_the_cell_are_ambiguous(ringnb: Path) -> None:
    shutil.copy(ringnb / "ringnb" / "ring.ipynb", ringnb / "ringnb" / "ring_copy.ipynb")
    result = cli("explain", str(TRACEBACKS / "ipython.log"), "--fix", cwd=ringnb)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ringnb/ring.ipynb cell 3, ringnb/ring_copy.ipynb cell 3 all hold line 3" in result.stdout


def test_a_logged_copy_of_the_error_line_is_not_another_failure() -> None:
    from semfix.explain.logs import parse_log

    log = (
        TRACEBACKS / "signal_array.log"
    ).read_text() + "ValueError: Cannot signal on a non-semaphore Ref: semaphore[]\n"
    assert [len(f.frames) > 0 for f in parse_log(log)] == [True]


def test_a_notebook_linked_from_outside_root_is_not_touched(
    ringnb: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path_factory.mktemp("root")
    (root / "ring.ipynb").symlink_to(ringnb / "ringnb" / "ring.ipynb")
    before = (ringnb / "ringnb" / "ring.ipynb").read_text()
    result = cli("explain", str(TRACEBACKS / "ipython.log"), "--fix", cwd=root)
    assert result.returncode == 1 and "Cannot find Cell In[2] in a notebook under" in result.stdout, result.stdout
    assert (ringnb / "ringnb" / "ring.ipynb").read_text() == before


def test_find_line_counts_in_the_function_or_else_the_file() -> None:
    from semfix.api import find_line

    source = b"a = f(x)\n\n\ndef k():\n    a = f(x)\n\n\nclass C:\n    def k(self):\n        a = f(x)\n"
    assert find_line(source, 2, "a = f(x)", "<module>")[0] is None  # three times in the file
    assert find_line(source, 3, "a = f(x)", "k")[0] is None  # two functions named k: counted in the file
    assert find_line(source, 10, "a = f(x)", "C.k") == (10, None)  # still there: the number is kept
    line, note = find_line(source.replace(b"def k():", b"def j():"), 2, "a = f(x)", "C.k")
    assert line == 10 and note is not None and "the only one in `k`" in note


# -- issue 31: real logs of a serving package (tracebacks/servelib, recorded by capture.py
# with JAX 0.10.2: `capture.py PYTHON servelib serve`) --------------------------------------
SERVED = "servelib/layers/jax/kernels.py"


@pytest.fixture
def servelib(tmp_path: Path) -> Path:
    """The package the serve_*.log files point into; its kernels live under `layers/jax/`."""
    shutil.copytree(TRACEBACKS / "servelib", tmp_path / "servelib")
    return tmp_path / "servelib"  # the folder the logs ran `python -m servelib.run` in


def test_a_package_folder_named_jax_is_not_jaxs(servelib: Path) -> None:
    """tpu-inference keeps kernels under `layers/jax/`: the frame there is the user's, not JAX's."""
    kernels = servelib / SERVED
    before = kernels.read_text()
    result = _explain_fix("serve_signal.log", servelib)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"raised from {SERVED}:10, in signal_kernel" in result.stdout
    assert kernels.read_text() == before.replace("signal(flags[0], 1)", "signal(flags.at[0], 1)")


@pytest.mark.parametrize(
    ("path", "jaxs"),
    [
        ("/opt/venv/lib/python3.11/site-packages/jax/_src/pallas/primitives.py", True),
        ("/usr/lib/python3/dist-packages/jaxlib/xla_client.py", True),
        ("/home/dev/jax/jax/_src/pallas/mosaic/primitives.py", True),  # JAX's own checkout
        ("<frozen runpy>", True),
        ("/srv/tpu_inference/layers/jax/attention.py", False),
        ("/opt/venv/lib/python3.11/site-packages/keras/src/backend/jax/core.py", False),
        ("C:\\work\\te\\transformer_engine\\jax\\flax\\module.py", False),
    ],
)
def test_jaxs_frames_are_told_by_where_jax_is_installed(path: str, jaxs: bool) -> None:
    from semfix.explain.logs import Frame

    assert Frame(path, 1, "f").in_jax is jaxs


def test_a_re_raise_quoting_jaxs_message_is_the_same_error(servelib: Path) -> None:
    """run.py raises the kernel's error again: `RuntimeError(f"kernel failed: {err}") from err`."""
    kernels = servelib / SERVED
    before = kernels.read_text()
    result = _explain_fix("serve_reraise.log", servelib)
    assert result.returncode == 1, result.stdout + result.stderr  # 0.10's DMA text does not single `sems[1]` out
    assert result.stdout.count("raised from") == 1 and f"raised from {SERVED}:17, in reraise_kernel" in result.stdout
    assert "servelib/run.py" not in result.stdout  # the wrapper's line is not blamed
    assert "`sems[1]` (sem): SEM002" in result.stdout and kernels.read_text() == before


def test_a_re_raise_with_its_own_words_is_another_error() -> None:
    from semfix.explain.logs import parse_log

    log = (TRACEBACKS / "serve_reraise.log").read_text()
    assert len(parse_log(log)) == 1
    other = log.replace("RuntimeError: kernel failed: DMA source", "RuntimeError: kernel failed on a DMA: source")
    assert [len(f.frames) for f in parse_log(other)] == [8, 3]


def test_a_shape_the_log_proves_must_agree_with_the_fix(servelib: Path) -> None:
    """`semaphore[2]`: JAX got a row of a 2-D array; `flags.at[stage]` would be a row view."""
    kernels = servelib / SERVED
    before = kernels.read_text()
    result = _explain_fix("serve_rows.log", servelib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "of shape (2,)" in result.stdout
    # the kernel also indexes `flags.at[stage, 0]`: SEM004 names the row before the log must
    assert "SEM004 `flags[stage]` passes a row of semaphores" in result.stdout
    assert kernels.read_text() == before and "---" not in result.stdout


def test_the_logs_shape_alone_keeps_a_row_from_being_fixed() -> None:
    """Where the file shows no rank (`flags` allocated elsewhere, indexed once), the shape the
    log prints, `semaphore[2]`, is what proves `flags.at[stage]` would be a row."""
    source = (
        b"from jax.experimental import pallas as pl\n\n\n"
        b"def rows_kernel(flags, stage):\n    pl.semaphore_signal(flags[stage], 1)\n"
    )
    assert blame(source, 5, None).chosen  # without the log's shape: proven a Ref, the view is made
    shaped = blame(source, 5, None, shape="(2,)")
    assert not shaped.chosen and not shaped.fixed
    assert any("Not fixed: the log proves `flags[stage]` has shape (2,)" in line for line in shaped.lines)


def test_a_value_captured_from_the_kernel_is_not_plainly_a_ref(servelib: Path) -> None:
    """`doubled = x_ref[...] * 2`, captured by a `pl.when` body: the culprit, not `sems[0]` (a tuple's)."""
    kernels = servelib / SERVED
    before = kernels.read_text()
    result = _explain_fix("serve_captured.log", servelib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the error is about 3 arguments (`doubled`, `o_ref`, `sems[0]`)" in result.stdout
    assert kernels.read_text() == before and "would write `sems.at[0]`; not made" in result.stdout


def test_a_kind_error_at_a_helper_built_descriptors_wait(servelib: Path) -> None:
    """`copy = _copy(x_ref, o_ref, flags.at[0])`: the helper's argument and its allocation,
    where the kernel's module is read only by its names (run.py's `getattr(kernels, name)`,
    a launch with any scratch, made explicit here): then no launch semfix cannot see may
    give `flags` another kind."""
    run = servelib / "servelib" / "run.py"
    text = run.read_text().replace("getattr(kernels, name)", "kernels.signal_kernel")
    run.write_text(text.replace('getattr(kernels, "run_" + name.removesuffix("_kernel"))', "kernels.run_helper_wait"))
    result = _explain_fix("serve_helper_wait.log", servelib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "At line 43, SEM006 `flags.at[0]` is a regular semaphore (allocated at line 52" in result.stdout


def test_a_kernel_module_read_by_a_computed_name_proves_no_kind(servelib: Path) -> None:
    """As recorded, run.py launches `getattr(kernels, name)` with scratch semfix cannot read:
    any kernel of kernels.py may get any kind there, so explain points at no allocation."""
    result = _explain_fix("serve_helper_wait.log", servelib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "SEM006" not in result.stdout and "Cannot point at the semaphore" in result.stdout


def test_after_a_fix_explain_says_what_else_check_finds(servelib: Path) -> None:
    result = _explain_fix("serve_signal.log", servelib)
    assert result.returncode == 0, result.stdout + result.stderr
    tail = result.stdout.split(f"Fixed {SERVED}.", 1)[1]
    left = cli("check", SERVED, cwd=servelib).stdout.count(SERVED)  # as check says, after the fix
    assert (
        left >= 3 and f"`semfix check` still finds {left} problems in {SERVED}; a later run may fail on them:" in tail
    )
    assert "  line 58: SEM001 `done[...]` reads a value" in tail and "line 10" not in tail  # not the one fixed
    assert f"`semfix fix {SERVED}` fixes 1; `semfix fix --unsafe-fixes {SERVED}` fixes 2 more" in tail


@pytest.mark.parametrize(
    "prefixes",
    [
        ("(TPUWorker pid=1234, ip=10.0.0.2) ", "(TPUWorker pid=1301, ip=10.0.0.3) "),  # Ray workers
        ("trainer-1  | ", "server-1   | "),  # docker compose, its service names padded
        ("server-1   | " + STAMP, "trainer-1  | " + STAMP),  # `docker compose logs --timestamps`
    ],
    ids=["ray", "compose", "compose-timestamps"],
)
def test_serving_and_container_prefixes_of_processes_interleaved(servelib: Path, prefixes: tuple[str, str]) -> None:
    """Real logs (serve_signal.log, serve_reraise.log); the prefixes and the interleaving are added."""
    log = _interleaved(_prefixed("serve_signal.log", prefixes[0]), _prefixed("serve_reraise.log", prefixes[1]))
    result = cli("explain", "-", "--fix", cwd=servelib, stdin=log)
    assert result.returncode == 1, result.stdout + result.stderr  # the reraise's `sems[1]`: named, not fixed
    assert f"raised from {SERVED}:10, in signal_kernel" in result.stdout
    assert f"raised from {SERVED}:17, in reraise_kernel" in result.stdout and result.stdout.count("raised from") == 2
    text = (servelib / SERVED).read_text()
    assert "signal(flags.at[0], 1)" in text and "o_ref, sems[1])" in text  # 0.10's DMA text: named, not fixed


@pytest.fixture
def helperlib(tmp_path: Path) -> Path:
    """The package the helper*_*.log files (real runs on 0.10.2 and 0.12.1: capture.py) point into."""
    shutil.copytree(TRACEBACKS / "helperlib", tmp_path / "helperlib")
    return tmp_path / "helperlib"


@pytest.mark.parametrize("log", ["helper_direct.log", "helper12_direct.log"])
def test_an_error_inside_a_local_helper_is_followed_to_its_callers_argument(helperlib: Path, log: str) -> None:
    """The DMA's semaphore is the helper's parameter, passed on unchanged: the value is the one
    its caller gave, in the frame before; that argument is blamed, proven and fixed."""
    kernels = helperlib / "helperlib" / "kernels.py"
    before = kernels.read_text()
    result = _explain_fix(log, helperlib)
    assert "parameters of `_async_copy`, passed on unchanged" in result.stdout
    assert "It was called at helperlib/kernels.py:13, in direct_kernel." in result.stdout
    fixed = before.replace("_async_copy(src, dst, sems[1], True)", "_async_copy(src, dst, sems.at[1], True)")
    if log == "helper_direct.log":  # 0.10's text is about `src` and `dst` too: the unsafe fix is named
        assert result.returncode == 1 and "would write `sems.at[1]`; not made" in result.stdout
        assert kernels.read_text() == before
        return
    assert result.returncode == 0, result.stdout + result.stderr
    assert fixed != before and kernels.read_text() == fixed


def test_a_helpers_caller_that_carries_the_value_is_named_not_guessed(helperlib: Path) -> None:
    kernels = helperlib / "helperlib" / "kernels.py"
    before = kernels.read_text()
    result = _explain_fix("helper12_carried.log", helperlib)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "It was called at helperlib/kernels.py:18, in carried_kernel." in result.stdout
    assert "Not fixed, check by hand: `sem` (given to `_async_copy`'s `sem`): SEM003" in result.stdout
    assert kernels.read_text() == before


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("reached", [False, True], ids=["linked", "reached another way too"])
def test_the_launch_in_another_module_the_traceback_passes_through_proves_the_rank(
    tmp_path: Path, reached: bool
) -> None:
    """JAX traces a kernel inside its `pallas_call`: the launching module (`launch.py`) is a
    frame of the traceback, and explain reads it as the run would, so the DMA((2,)) it allocates
    proves `sems[0]`'s view. A module beside them that may launch the kernel with anything (a
    list, where `sems[0]` is right) proves nothing: then explain fixes nothing (exit 1)."""
    sibling = FIXTURES / "sem002" / "launched_by_a_sibling"
    package = tmp_path / "kern"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(sibling / "before.py", package / "before.py")
    shutil.copy(sibling / "launch.py", package / "launch.py")
    if reached:
        (package / "other.py").write_text("from .before import kernel\n\nKERNELS = [kernel]\n")
    run = [sys.executable, "-c", "from kern.launch import run; run()"]
    failed = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True)
    assert failed.returncode != 0 and "must be Refs" in failed.stderr, failed.stderr[-2000:]
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=failed.stderr)
    if reached:
        assert result.returncode == 1 and (package / "before.py").read_bytes() == (sibling / "before.py").read_bytes()
        return
    assert result.returncode == 0, result.stdout + result.stderr
    assert (package / "before.py").read_bytes() == (sibling / "after.py").read_bytes()
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True).returncode == 0


@needs_jax
@pytest.mark.jax
def test_a_kernel_that_reads_pallas_through_a_compat_module_is_explained(tmp_path: Path) -> None:
    """`from ._compat import pl, pltpu`: explain reads the kernel's module as the run does, its
    calls through the compat module catalog calls (it said `pltpu.make_async_copy` was a call it
    cannot follow, where `semfix fix kern/` fixes the kernel)."""
    case = FIXTURES / "sem002" / "pallas_through_a_compat_module"
    package = tmp_path / "kern"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("before.py", "_compat.py"):
        shutil.copy(case / name, package / name)
    run = [sys.executable, "-c", "from kern.before import run; run()"]
    failed = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True)
    assert failed.returncode != 0 and "must be Refs" in failed.stderr, failed.stderr[-2000:]
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=failed.stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (package / "before.py").read_bytes() == (case / "after.py").read_bytes()
    assert subprocess.run(run, cwd=tmp_path, capture_output=True, text=True).returncode == 0


@needs_jax
@pytest.mark.jax
def test_a_read_of_an_element_of_what_may_be_a_tuple_is_not_made_a_view(tmp_path: Path) -> None:
    """`pair[0][()]` where the launch is not linked (a name bound twice): JAX says a value was
    read, not whether `pair` is an array Ref (`pair.at[0]`) or a list of Refs (`pair[0]`). The
    oracle's package seeds (950033): explain wrote `pair.at[0]`, an AttributeError on the list."""
    kernel = tmp_path / "kernels.py"
    kernel.write_text(
        "import jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(x_ref, o_ref, pair):\n    pl.semaphore_signal(pair[0][()], 1)\n"
        "    pl.semaphore_wait(pair[0], 1)\n    o_ref[...] = x_ref[...]\n\n\n"
        "def run():\n    x = jnp.zeros((8, 128), jnp.float32)\n    launched = kernel\n"
        "    if pl is None:\n        launched = None\n"
        "    return pl.pallas_call(launched, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), scratch_shapes="
        "[[pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR]], interpret=True)(x)\n"
    )
    before = kernel.read_bytes()
    log = _traceback_of(kernel, tmp_path)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    assert result.returncode == 1 and kernel.read_bytes() == before, result.stdout
    assert "not whether it was read out of an array Ref" in result.stdout
    kernel.write_bytes(before.replace(b"pair[0][()]", b"pair[0]"))  # the fix: it was a list
    assert _run(kernel, tmp_path).returncode == 0
