"""A view taken of a value (issue 43, section 3): `flags[0].at[1]` is jnp's `.at` of the row's
value, which JAX refuses as an argument (a TypeError from 0.9.2, which `semfix explain` reads:
tests/test_explain.py runs the `rt_` fixture); the fix `flags.at[0].at[1]` runs, on 0.10.2 and on the newest JAX.
So does a helper's view of its parameter given a value (`helper(flags[0])`, `sem.at[slot]` there).
Held in a local (`row = flags[0]`, then `row.at[1]`), it is reported at the read, not fixed;
either only where the file shows `flags` a Ref (`refs[0].at[1]` of a tuple of Refs is common)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from jax_env import Worker, require_jax_python

from semfix import fix_source
from semfix.jax_versions import NEWEST, spelled
from semfix.selection import build_settings

pytestmark = pytest.mark.jax

CASE = Path(__file__).parent / "fixtures" / "sem002" / "rt_view_of_an_element_read"
HELPER = (
    Path(__file__).parent / "fixtures" / "sem002" / "rt_helper_views_a_value"
)  # `helper(flags[0])`, `sem.at[slot]` there
# `_wait_at(flags.at[1][...], 1, 0)`, where the helper views its parameter on the slot's path alone
ONE_PATH = Path(__file__).parent / "fixtures" / "sem001" / "helper_views_a_read"


@pytest.fixture(scope="module", params=["venv", spelled(NEWEST)])
def worker(request: pytest.FixtureRequest) -> Iterator[Worker]:
    python = sys.executable if request.param == "venv" else require_jax_python(request.param, request.config)
    running = Worker(python)
    yield running
    running.close()


@pytest.mark.parametrize("case", [CASE, HELPER, ONE_PATH], ids=lambda case: case.name)
def test_a_view_of_a_value_fails_in_jax_and_its_fix_runs(worker: Worker, case: Path) -> None:
    before = (case / "before.py").read_text()
    failed = worker.run(before)
    assert failed.startswith("error TypeError") and "_IndexUpdateRef" in failed, failed
    fixed = fix_source(before).source
    assert fixed == (case / "after.py").read_text()
    assert worker.run(fixed, check=True, strict=True).startswith("ok "), fixed


def test_a_value_held_in_a_local_then_viewed_is_reported_at_the_read() -> None:
    source = """\
from jax.experimental import pallas as pl


def row_kernel(x_hbm, o_hbm, flags):
    row = flags[0]
    pl.semaphore_wait(row.at[1], 1)
    pl.semaphore_signal(row.at[0], 1)
    pl.semaphore_signal(flags.at[1, 0], 1)
"""
    result = fix_source(source, settings=build_settings(unsafe_fixes=True))
    assert result.source == source
    assert [(f.rule, f.line, f.column, f.applied) for f in result.findings] == [("SEM002", 5, 11, False)]


def test_a_view_of_an_element_of_what_may_be_a_tuple_is_left_alone() -> None:
    source = """\
from jax.experimental import pallas as pl


def kernel(x_hbm, o_hbm, scratches):
    pl.semaphore_wait(scratches[-1].at[0], 1)
    row = scratches[0]
    pl.semaphore_wait(row.at[1], 1)
"""
    result = fix_source(source, settings=build_settings(unsafe_fixes=True))
    assert result.source == source and result.findings == ()


_SIGNAL = """\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def signal_kernel(x_ref, o_ref, flags):
    pl.semaphore_signal({argument}, 1)
    pl.semaphore_wait({wanted}, 1)
    o_ref[...] = x_ref[...]


def run():
    x = jnp.ones((8, 128), jnp.float32)
    scratch = [pltpu.SemaphoreType.REGULAR({shape})]
    return pl.pallas_call(
        signal_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), scratch_shapes=scratch, interpret=True
    )(x)
"""


@pytest.mark.parametrize(
    ("shape", "argument", "wanted"),
    [
        ("(2, 2, 2)", "flags[0].at[1]", "flags.at[0, 1, 0]"),
        ("(2,)", "flags[0].at[1]", "flags.at[0]"),
        ("(2, 2)", "flags.at[0, 1][0]", "flags.at[0, 1]"),
    ],
    ids=["a row", "an index too many", "an index too many after a view"],
)
def test_indices_that_pick_no_one_semaphore_are_never_a_safe_fix(
    worker: Worker, shape: str, argument: str, wanted: str
) -> None:
    """The allocation's rank is weighed against every index the view would give: the read's, the
    views' it is read through and those taken of it. `flags.at[0].at[1]` of a (2, 2, 2) array is a
    row, of a (2,) array an index too many, and JAX refuses both: reported, the fix unsafe."""
    source = _SIGNAL.format(shape=shape, argument=argument, wanted=wanted)
    assert worker.run(source.replace(argument, wanted)).startswith("ok "), "the kernel as meant runs"
    result = fix_source(source)
    assert result.source == source
    assert [(f.rule, f.safety, f.fix and f.fix.doubt) for f in result.findings] == [("SEM002", "unsafe", "rank")]
    unsafe = fix_source(source, settings=build_settings(unsafe_fixes=True)).source
    assert unsafe != source and worker.run(unsafe).startswith("error "), unsafe


HELPER_SOURCE = (HELPER / "before.py").read_text()
NOT_PROVEN = {  # the helper's view of a value reported, never fixed safely, or not at all
    "a rank the launch does not give": (HELPER_SOURCE.replace("REGULAR((2, 2))", "REGULAR((2,))"), "unsafe"),
    "a shape the file cannot read": (HELPER_SOURCE.replace("REGULAR((2, 2))", "REGULAR(shape)"), "unsafe"),
    "another use of the parameter": (
        HELPER_SOURCE.replace("1)\n\n\ndef kernel", "1)\n    sem[0]\n\n\ndef kernel"),
        None,
    ),
    "views of two ranks": (HELPER_SOURCE.replace("wait(sem.at[slot], 1)", "wait(sem.at[slot, 0], 1)"), None),
    "a tuple given": (HELPER_SOURCE.replace("flags):", "flags):\n    flags = (flags.at[0], flags.at[1])"), None),
    "a decorated helper": (
        HELPER_SOURCE.replace("\ndef signal_then_wait", "\n@jax.named_call\ndef signal_then_wait"),
        None,
    ),
}


@pytest.mark.parametrize("source, fix", NOT_PROVEN.values(), ids=NOT_PROVEN.keys())
def test_a_helper_s_view_of_a_value_is_fixed_only_where_proven(source: str, fix: str | None) -> None:
    result = fix_source(source, apply_fixes=False)
    found = [f.fix.applicability if f.fix else None for f in result.findings if f.original == "flags[0]"]
    assert found == ([fix] if fix else []), result.findings
