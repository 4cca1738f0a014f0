"""SEM005, DMA buffers given a value: the catalog against JAX, the skim, and what the fixtures
under tests/fixtures/sem005/ do not show."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from semfix import fix_source
from semfix.catalog import MODULES
from semfix.engine.skim import clears
from semfix.rules import table
from semfix.selection import build_settings

HEADER = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"


def test_sem005_is_listed_and_on_by_default() -> None:
    assert "SEM005  value-passed-as-dma-buffer\n    fix: safe with proof, else unsafe; default: on" in table()
    assert "SEM005" in build_settings().enabled


def test_every_dma_names_its_buffers() -> None:
    named = {name: op.buffer_params for ops in MODULES.values() for name, op in ops.items() if op.buffer_params}
    assert set(named) == {
        "make_async_copy",
        "async_copy",
        "sync_copy",
        "make_async_remote_copy",
        "async_remote_copy",
        "copy_gmem_to_smem",
        "copy_smem_to_gmem",
        "async_store_smem",  # its `ref`: the value `src` is stored into it
        "async_copy_smem_to_tmem",
        "async_copy_scales_to_tmem",
        "async_copy_sparse_metadata_to_tmem",
    }


def _parameters(root: Path, module: str, name: str) -> list[str] | None:
    """The positional parameters of `module.name` in JAX's source (read, not imported: the
    Mosaic GPU modules need more than JAX), following `from m import name as name`."""
    path = root.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    if not path.exists():
        return None
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return _parameters(root, node.module or "", name)
    return None


def test_buffer_parameters_match_the_installed_jax() -> None:
    """Each buffer parameter's name and position, as the installed JAX's source has them."""
    jax = pytest.importorskip("jax")
    root = Path(jax.__file__).parent
    checked = 0
    for module, operations in MODULES.items():
        for name, operation in operations.items():
            parameters = _parameters(root, module, name) if operation.buffer_params else None
            for param in operation.buffer_params if parameters is not None else ():
                assert parameters[param.position] == param.name, (module, name)  # type: ignore[index]
                checked += 1
    assert checked >= 20


def test_a_buffer_carrying_a_read_is_never_skimmed_clear() -> None:
    source = HEADER + "def k(x_ref, o_hbm):\n    rows = x_ref[...]\n    pltpu.sync_copy(rows, dst_ref=o_hbm)\n"
    assert not clears(source.encode())
    result = fix_source(source)
    assert result.source == HEADER + "def k(x_ref, o_hbm):\n    pltpu.sync_copy(x_ref, dst_ref=o_hbm)\n"


def test_a_walrus_buffer_is_fixed_only_when_its_name_is_not_read() -> None:
    source = HEADER + "def k(x_ref, o_hbm):\n    pltpu.sync_copy((v := x_ref[...]), o_hbm)\n"
    assert fix_source(source).source == source.replace("x_ref[...]", "x_ref")
    used = source + "    return v\n"
    result = fix_source(used)
    assert result.source == used and [f.rule for f in result.findings] == ["SEM005"]


def test_a_dma_call_inside_a_buffer_fixes_nothing() -> None:
    source = (
        HEADER + "def k(x_ref, o_hbm, sem):\n    pltpu.sync_copy(x_ref.at[pl.semaphore_read(sem[...])][...], o_hbm)\n"
    )
    result = fix_source(source)
    assert result.source == source
    assert [f.rule for f in result.findings] == ["SEM001", "SEM005"]
    assert all(
        f.message.endswith("(not fixed: a semaphore or DMA call inside one of their arguments)")
        for f in result.findings
    )


def test_a_buffer_is_never_a_non_scalar_semaphore() -> None:
    """SEM004 is for semaphores: a whole array, or a slice view, is the usual DMA buffer."""
    source = HEADER + (
        "def k(x_hbm, buf, sems):\n    pltpu.make_async_copy(x_hbm.at[0:8], buf, sems.at[0]).start()\n\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(k, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), "
        "pltpu.SemaphoreType.DMA((2,))])(x)\n"
    )
    assert fix_source(source).findings == ()


def _sem005(source: str) -> list[tuple[int, bool, str]]:
    result = fix_source((HEADER + source).encode(), settings=build_settings(select=["SEM005"]))
    return [(f.line - 4, f.applied, f.message) for f in result.findings]


def test_a_dma_source_only_reads_its_ref() -> None:
    """A Ref a DMA copies from is not written, as a name or as a read the fix makes a name; a
    Ref a DMA copies into is, before or after the carried read (flow is not followed)."""
    kernel = (
        "def k(x_ref, o_hbm, buf, sem):\n"
        "    pltpu.sync_copy({first})\n"
        "    w = x_ref[...]\n"
        "    pltpu.async_copy(w, o_hbm, sem).wait()\n"
    )
    for first in ("x_ref, buf", "x_ref[...], buf", "dst_ref=buf, src_ref=x_ref.at[0]"):
        findings = _sem005(kernel.format(first=first))
        assert [line for line, applied, _ in findings if line == 4 and applied] == [4], (first, findings)
    for first in ("buf, x_ref[...]", "touch(x_ref), buf"):  # a call given it may write it
        held = _sem005(kernel.format(first=first))
        assert [line for line, applied, _ in held if line == 4 and not applied] == [4], (first, held)
    into = _sem005(kernel.format(first="buf, x_ref[...]"))
    assert any(
        line == 4 and not applied and "`x_ref[...]` at line 6 is a DMA destination" in m for line, applied, m in into
    ), into


@pytest.mark.parametrize(
    ("call", "rule"),
    [("pl.semaphore_signal(h.arr[1][...], 1)", "SEM001"), ("pltpu.sync_copy(h.arr[1][...], o_hbm)", "SEM005")],
)
def test_a_read_joined_by_an_unproven_view_is_an_unsafe_fix(call: str, rule: str) -> None:
    """`X[i][...]` -> `X.at[i]` is one rewrite, as safe as its weaker part: where nothing proves
    `X` a Ref it is unsafe, so only --unsafe-fixes applies it and `explain` never takes it as a
    fix that is safe on its own."""
    source = HEADER + f"def k(h, o_hbm):\n    {call}\n"
    safe = fix_source(source, settings=build_settings(select=["ALL"]))
    assert [(f.rule, f.replacement, f.applied, f.safety) for f in safe.findings if f.applied] == [
        (rule, "h.arr[1]", True, "safe")
    ]
    unsafe = fix_source(source, settings=build_settings(select=["ALL"], unsafe_fixes=True))
    [joined] = unsafe.findings
    assert (joined.rule, joined.replacement, joined.applied, joined.safety) == (rule, "h.arr.at[1]", True, "unsafe")
    assert "unsafe fix" in joined.message
