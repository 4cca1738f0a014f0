"""Containers the file builds are containers (issue 43, section 2): indexing a list, tuple or dict
of Refs the kernel makes itself picks a Ref, which is right; it is never reported as a value
read, and `--unsafe-fixes` never writes `.at` on it (an AttributeError in JAX). Where the file
does not show a container, the read is still reported. The runtime fixture
sem002/rt_containers_the_file_builds runs these shapes in JAX."""

from __future__ import annotations

import pytest

from semfix import fix_source
from semfix.selection import build_settings

_HEAD = """\
import dataclasses
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import mosaic_gpu as plgpu
"""

CONTAINERS = {
    "list comprehension": """
def kernel(x_hbm, o_hbm, sems):
    views = [sems.at[i] for i in range(2)]
    pltpu.make_async_copy(x_hbm, o_hbm, views[0]).start()
""",
    "tuple of a generator": """
def kernel(x_hbm, o_hbm, sems, slot):
    views = tuple(sems.at[i] for i in range(2))
    pl.semaphore_signal(views[slot], 1)
""",
    "scratch entry written as a comprehension": """
def kernel(x_hbm, o_hbm, flags, dmas):
    pl.semaphore_signal(flags[1], 1)
    pltpu.make_async_copy(x_hbm, o_hbm, dmas[0]).start()

def run(x):
    return pl.pallas_call(
        kernel,
        out_shape=x,
        scratch_shapes=[
            [pltpu.SemaphoreType.REGULAR for _ in range(2)],
            tuple(pltpu.SemaphoreType.DMA for _ in range(2)),
        ],
    )(x)
""",
    "dict display indexed by a loop variable": """
def kernel(x_hbm, o_hbm, sems):
    table = {0: sems.at[0], 1: sems.at[1]}
    for key in range(2):
        pl.semaphore_signal(table[key], 1)
""",
    "dict of zip": """
def kernel(x_hbm, o_hbm, load, store):
    table = dict(zip(("load", "store"), (load, store)))
    for name in ("load",):
        pltpu.make_async_copy(x_hbm, o_hbm, table[name]).start()
""",
    "a tuple held by self": """
class Ring:
    def __init__(self, first, second):
        self.sems = (first, second)

    def copy(self, x_hbm, o_hbm, slot):
        pltpu.make_async_copy(x_hbm, o_hbm, self.sems[slot]).start()
""",
    "a dataclass field": """
@dataclasses.dataclass(frozen=True)
class Held:
    pair: tuple

def kernel(x_hbm, o_hbm, first, second):
    held = Held((first, second))
    pltpu.make_async_copy(x_hbm, o_hbm, held.pair[0]).start()
""",
    "jax.tree.map of a list": """
def kernel(x_hbm, o_hbm, sems):
    views = jax.tree.map(lambda i: sems.at[i], [0, 1])
    pltpu.make_async_copy(x_hbm, o_hbm, views[1]).start()
""",
    "a helper that returns a comprehension, or None": """
def _untile(scratch, name, n):
    return [scratch[f"{name}{i}"] for i in range(n)]

def kernel(x_hbm, o_hbm, flag, **scratch):
    tiles = _untile(scratch, "tile", 2) if flag else None
    plgpu.copy_gmem_to_smem(x_hbm, tiles[0], scratch["bar"])
""",
    "Mosaic GPU barriers as a tuple of a generator": """
def kernel(x_ref, y_ref, o_ref, x_smem, y_smem, bars):
    plgpu.copy_gmem_to_smem(x_ref, x_smem, bars[0])
    plgpu.copy_gmem_to_smem(y_ref, y_smem, bars[1])
    plgpu.barrier_wait(bars[0])
    plgpu.barrier_wait(bars[1])

def run(x, y):
    tile = plgpu.SMEM((128,), x.dtype)
    return plgpu.kernel(
        kernel,
        out_type=x,
        scratch_types=[tile, tile, tuple(plgpu.Barrier() for _ in range(2))],
    )(x, y)
""",
}


@pytest.mark.parametrize("body", CONTAINERS.values(), ids=CONTAINERS.keys())
def test_an_element_of_a_container_the_file_builds_is_a_ref(body: str) -> None:
    source = _HEAD + body
    result = fix_source(source, settings=build_settings(unsafe_fixes=True))
    assert result.findings == ()
    assert result.source == source


UNPROVEN = {
    "self's attribute also given a Ref elsewhere": """
class Ring:
    def __init__(self, first, second):
        self.sems = (first, second)

    def copy(self, x_hbm, o_hbm, slot):
        pltpu.make_async_copy(x_hbm, o_hbm, self.sems[slot]).start()

def rebind(ring, sems):
    ring.sems = sems
""",
    "a dataclass field stored again": """
@dataclasses.dataclass
class Held:
    pair: object

def kernel(x_hbm, o_hbm, first, second, sems):
    held = Held((first, second))
    held.pair = sems
    pltpu.make_async_copy(x_hbm, o_hbm, held.pair[0]).start()
""",
    "jax.tree.map of what may be one Ref": """
def kernel(x_hbm, o_hbm, sems):
    views = jax.tree.map(lambda ref: ref, sems)
    pltpu.make_async_copy(x_hbm, o_hbm, views[1]).start()
""",
    "a helper that may return a Ref": """
def _pick(sems, scratch):
    if scratch:
        return [sems]
    return sems

def kernel(x_hbm, o_hbm, sems):
    pltpu.make_async_copy(x_hbm, o_hbm, _pick(sems, False)[0]).start()
""",
}


@pytest.mark.parametrize("body", UNPROVEN.values(), ids=UNPROVEN.keys())
def test_what_may_not_be_a_container_is_still_reported(body: str) -> None:
    result = fix_source(_HEAD + body, settings=build_settings())
    assert [finding.rule for finding in result.findings] == ["SEM002"]
    assert not any(finding.applied for finding in result.findings)


def test_a_read_in_a_comprehension_is_found_at_the_read() -> None:
    """`vals = [sems[i] for i in ...]`, then `vals[0]` as the semaphore: the finding is at
    `sems[i]` (the runtime fixture sem002/rt_read_in_a_comprehension runs its fix); where `vals`
    is also read as the values, it is reported there and not fixed."""
    source = (
        _HEAD
        + """
def kernel(x_ref, o_ref, sems):
    vals = tuple(sems[i] for i in range(2))
    pl.semaphore_signal(vals[1], 1)
    pl.semaphore_wait(vals[1], 1)
    o_ref[0] = vals[0]
"""
    )
    result = fix_source(source, settings=build_settings(unsafe_fixes=True))
    assert result.source == source
    assert [(f.rule, f.line, f.column, f.applied) for f in result.findings] == [("SEM002", 8, 18, False)]


def test_a_loop_whose_values_name_its_own_target() -> None:
    """`sem = sems` then `for src, sem in ((x, sem), ...)`: the loop's values name the loop's
    own target, which semfix followed round without end (a RecursionError; the oracle's seed
    142). The tuple is evaluated before the loop rebinds `sem`: the kernel is right."""
    source = (
        _HEAD
        + """
def kernel(x_hbm, o_hbm, sems, more):
    sem = sems
    for src, sem in ((x_hbm, sem), (x_hbm, more.at[1])):
        pltpu.make_async_copy(src, o_hbm, sem).start()
"""
    )
    assert fix_source(source, settings=build_settings(select=["ALL"])).findings == ()
