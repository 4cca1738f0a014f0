"""`semfix explain`: tracebacks from the real JAX runtime tier, and stored ones for the rest."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Case, fixture_cases

TRACEBACKS = Path(__file__).parent / "tracebacks"
RUNNER = "import importlib.util, sys\nspec = importlib.util.spec_from_file_location('k', sys.argv[1])\nmodule = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(module)\nprint(module.run())\n"


def cli(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, input=stdin, capture_output=True, text=True, check=False)


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
    assert "send_sems.at[0], recv_sems.at[0]" in text  # followed copy.wait() back to the copy
    assert "pl.semaphore_signal(flags.at[1], 1)" in text and "pl.semaphore_wait(flags.at[1], 1)" in text
    assert "pl.semaphore_wait(other[0], 1)" in text  # another Ref: not proven, left alone


def test_root_option_and_unfound_files(ringlib: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    log = (TRACEBACKS / "dma_wait_remote.log").read_text()
    found = cli("explain", "-", "--root", str(ringlib), cwd=elsewhere, stdin=log)
    assert found.returncode == 0 and "+        x_hbm, o_hbm, send_sems.at[0]" in found.stdout
    lost = cli("explain", "-", cwd=elsewhere, stdin=log)
    assert lost.returncode == 1 and "Cannot find /home/runner/work/ringlib/ringlib/ringlib/kernels.py" in lost.stdout


def test_an_unrelated_error_is_exit_2(tmp_path: Path) -> None:
    result = cli("explain", str(TRACEBACKS / "unrelated.log"), cwd=tmp_path)
    assert result.returncode == 2 and "no JAX semaphore or DMA error" in result.stderr


# -- tracebacks produced by real JAX ------------------------------------------------------
try:
    import jax  # noqa: F401
except ImportError:  # pragma: no cover - depends on the environment
    jax = None

needs_jax = pytest.mark.skipif(
    jax is None and os.environ.get("SEMFIX_REQUIRE_JAX") != "1", reason="JAX is not installed"
)
BUGGY = [case for case in fixture_cases() if "error" in case.spec.get("runtime", {})]


def _traceback_of(script: Path, cwd: Path) -> str:
    (cwd / "run_kernel.py").write_text(RUNNER)
    done = subprocess.run([sys.executable, "run_kernel.py", script.name], cwd=cwd, capture_output=True, text=True)
    assert done.returncode != 0, "the buggy kernel ran"
    return done.stderr


@needs_jax
@pytest.mark.jax
@pytest.mark.parametrize("case", BUGGY, ids=[c.name for c in BUGGY])
def test_explain_fixes_what_jax_reported(case: Case, tmp_path: Path) -> None:
    kernel = tmp_path / "kernels.py"
    kernel.write_bytes(case.before)
    log = _traceback_of(kernel, tmp_path)
    result = cli("explain", "-", "--fix", cwd=tmp_path, stdin=log)
    if any(change.endswith("SEM003") for change in case.spec["changes"]):
        assert result.returncode == 1 and "Cannot fix it automatically" in result.stdout
        assert kernel.read_bytes() == case.before
        return
    assert result.returncode == 0, result.stdout + result.stderr
    assert kernel.read_bytes() == case.after
    done = subprocess.run([sys.executable, "run_kernel.py", "kernels.py"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


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
