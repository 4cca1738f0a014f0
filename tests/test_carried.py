"""Reads carried in a variable (SEM003, SEM005's carried form): a write to any Ref the
substituted expression reads blocks the fix, and a carried read gets the verdict its direct
form would get."""

from __future__ import annotations

import pytest

from semfix import fix_source
from semfix.selection import build_settings

HEADER = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"

# A write to the index Ref between the carried read and its use, in every form a Ref is written.
INDEX_WRITES = {
    "view store": "slot_ref.at[0:1][...] = slot_ref[...] + 1",
    "view of view": "slot_ref.at[0:1].at[0:1][...] = slot_ref[...] + 1",
    "pl.store": "pl.store(slot_ref, (0,), 1)",
    "sync_copy": "pltpu.sync_copy(x_ref.at[0:1], slot_ref.at[0:1])",
    "helper": "advance(slot_ref.at[0])",
    "helper whole": "advance(slot_ref)",
    "alias": "alias = slot_ref\n    alias[0] = 1",
}


@pytest.mark.parametrize("write", INDEX_WRITES.values(), ids=list(INDEX_WRITES))
def test_sem003_an_index_ref_written_in_any_form_blocks_the_fix(write: str) -> None:
    source = HEADER + (
        "def kernel(x_ref, slot_ref, sems, advance):\n"
        "    done = sems.at[slot_ref[0]][...]\n"
        f"    {write}\n"
        "    pl.semaphore_wait(done, 1)\n"
    )
    result = fix_source(source)
    assert result.source == source
    assert [(f.rule, f.applied) for f in result.findings if f.rule == "SEM003"] == [("SEM003", False)]


@pytest.mark.parametrize("write", INDEX_WRITES.values(), ids=list(INDEX_WRITES))
def test_sem005_an_index_ref_written_in_any_form_blocks_the_fix(write: str) -> None:
    source = HEADER + (
        "def kernel(x_ref, slot_ref, o_ref, sem, advance):\n"
        "    row = x_ref.at[slot_ref[0]][...]\n"
        f"    {write}\n"
        "    pltpu.async_copy(row, o_ref, sem).wait()\n"
    )
    result = fix_source(source)
    assert result.source == source
    assert [(f.rule, f.applied) for f in result.findings if f.rule == "SEM005"] == [("SEM005", False)]


def test_an_index_ref_only_read_keeps_the_fix() -> None:
    source = HEADER + (
        "def kernel(x_ref, slot_ref, o_ref, sems):\n"
        "    done = sems.at[slot_ref[0]][...]\n"
        "    o_ref[...] = x_ref[...] + slot_ref[0]\n"
        "    pl.semaphore_wait(done, 1)\n"
    )
    result = fix_source(source)
    assert "pl.semaphore_wait(sems.at[slot_ref[0]], 1)" in result.source
    assert "done" not in result.source


def test_a_carried_whole_semaphore_array_gets_the_direct_forms_report() -> None:
    """`ready = flags[...]` with `flags` a semaphore array: passing `flags` is non-()-shaped,
    exactly as `pl.semaphore_signal(flags[...], 1)` is (SEM004): reported, never rewritten."""
    body = (
        "def kernel(x_ref, o_ref, flags):\n"
        "    ready = flags[...]\n"
        "    pl.semaphore_signal(ready, 1)\n"
        "\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))])(x)\n"
    )
    source = HEADER + body
    result = fix_source(source)
    assert result.source == source
    direct = fix_source(source.replace("    ready = flags[...]\n", "").replace("(ready, 1)", "(flags[...], 1)"))
    assert [f.rule for f in direct.findings] == ["SEM004"]
    assert [(f.rule, f.applied) for f in result.findings] == [("SEM004", False)]


def test_a_carried_slice_view_read_is_reported_as_the_direct_form_is() -> None:
    source = HEADER + "def kernel(sems):\n    ready = sems.at[0:2][...]\n    pl.semaphore_signal(ready, 1)\n"
    result = fix_source(source)
    assert result.source == source
    assert [(f.rule, f.applied) for f in result.findings] == [("SEM004", False)]


ELEMENT = HEADER + (
    "def kernel(x_hbm, o_hbm, sems):\n"
    "    done = sems[1]\n"
    "    pltpu.make_async_copy(x_hbm, o_hbm, done).start()\n"
    "    pl.semaphore_wait(done, 1)\n"
    "\n\n"
    "def run(x):\n"
    "    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)\n"
)


def test_a_carried_element_read_of_a_proven_array_becomes_the_view() -> None:
    result = fix_source(ELEMENT)
    assert "pltpu.make_async_copy(x_hbm, o_hbm, sems.at[1]).start()" in result.source
    assert "pl.semaphore_wait(sems.at[1], 1)" in result.source
    assert "done" not in result.source


def test_a_carried_element_read_of_an_unproven_name_is_reported() -> None:
    source = ELEMENT.replace("[pltpu.SemaphoreType.DMA((2,))]", "[]")
    for settings in (build_settings(), build_settings(unsafe_fixes=True)):
        result = fix_source(source, settings=settings)
        assert result.source == source
        assert result.findings and not any(f.applied for f in result.findings)


def test_a_carried_element_read_of_a_tuple_is_left_alone() -> None:
    source = HEADER + "def kernel(x_hbm, o_hbm, *sems):\n    done = sems[1]\n    pl.semaphore_wait(done, 1)\n"
    result = fix_source(source)
    assert result.source == source and not result.findings


def test_a_carried_slice_of_a_buffer_becomes_the_view() -> None:
    source = HEADER + (
        "def kernel(x_ref, o_ref, sem):\n"
        "    top = x_ref[0:4]\n"
        "    pltpu.async_copy(top, o_ref, sem).wait()\n"
        "    o_ref.at[0:4][...] = x_ref.at[0:4][...]\n"
    )
    result = fix_source(source)
    assert "pltpu.async_copy(x_ref.at[0:4], o_ref, sem).wait()" in result.source
    assert "top" not in result.source


def test_an_annotated_carried_read_is_fixed() -> None:
    source = HEADER + (
        "import jax\n\n\ndef kernel(sem):\n    token: jax.Array = sem[...]\n    pl.semaphore_signal(token, 1)\n"
    )
    result = fix_source(source)
    assert "pl.semaphore_signal(sem, 1)" in result.source
    assert "token" not in result.source


def test_an_element_read_indexed_by_a_written_ref_is_reported() -> None:
    """`done = sems[slot_ref[0]]` is fixed to the view `sems.at[slot_ref[0]]`, which reads
    `slot_ref` again at the use: a store through a view of it in between blocks the fix."""
    kernel = (
        "def kernel(slot_ref, sems):\n"
        "    done = sems[slot_ref[0]]\n"
        "{write}"
        "    pl.semaphore_wait(done, 1)\n"
        "\n\n"
        "def run(x):\n"
        "    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.REGULAR((2,))])(x)\n"
    )
    written = HEADER + kernel.format(write="    slot_ref.at[0:1][...] = slot_ref[0:1] + 1\n")
    result = fix_source(written)
    assert result.source == written
    assert [(f.rule, f.applied) for f in result.findings] == [("SEM003", False)]
    assert "`slot_ref.at[0:1][...]` at line 7 may write `slot_ref`" in result.findings[0].message
    unwritten = HEADER + kernel.format(write="")
    assert "    pl.semaphore_wait(sems.at[slot_ref[0]], 1)\n" in fix_source(unwritten).source
