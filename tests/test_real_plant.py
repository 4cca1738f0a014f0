"""Real code as the oracle (benchmarks/plant.py, benchmarks/real_plant.py): each mistake planted
alone at each semaphore, barrier and DMA-buffer argument, and semfix's fix judged against the
original. The planter is held to a small kernel here; a seeded sample of the real trees, fetched
from PyPI, must have no wrong rewrite (the full run is `python benchmarks/real_plant.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from plant import baseline, judge, plants  # noqa: E402
from real_plant import main  # noqa: E402

KERNEL = b"""from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_hbm, sems, flags, sem):
    copy = pltpu.make_async_copy(x_hbm, o_hbm.at[0, 1], sems.at[0, 1])
    copy.start()
    pl.semaphore_signal(sem if flags is None else flags.at[0], 1)
    print([pl.semaphore_wait(s) for s in (sem,)])
"""


def test_each_mistake_is_planted_at_each_site_alone() -> None:
    found = {(p.kind, p.original, p.planted) for p in plants(KERNEL)}
    assert ("at", "sems.at[0, 1]", "sems[0, 1]") in found
    assert ("dropped-index", "sems.at[0, 1]", "sems.at[0]") in found
    assert ("at-dropped-index", "sems.at[0, 1]", "sems[0]") in found
    assert ("at-carried", "o_hbm.at[0, 1]", "planted_0 = o_hbm[0, 1]; planted_0") in found
    assert not {k for k, o, _ in found if o == "o_hbm.at[0, 1]" and "dropped" in k}  # a buffer's row is a Ref
    assert ("unit", "x_hbm", "x_hbm[()]") in found
    # both branches of a conditional expression; no carried read out of a comprehension
    assert {("ellipsis", "sem", "sem[...]"), ("at", "flags.at[0]", "flags[0]")} <= found
    chain = b"pltpu.async_copy(x_hbm.at[0]\n    .at[1], o_hbm, sem)"
    assert b"x_hbm.at[0]\n    [1]" in next(
        p.text for p in plants(KERNEL + chain) if p.kind == "at" and b"\n" in p.original.encode()
    )
    assert {(k, o) for k, o, _ in found if o == "s"} == {("ellipsis", "s"), ("unit", "s")}
    carried = next(p for p in plants(KERNEL) if p.kind == "ellipsis-carried" and p.original == "sem")
    assert b"    planted_0 = sem[...]\n    pl.semaphore_signal(planted_0 if flags" in carried.text


def test_a_plant_semfix_takes_back_out_is_restored() -> None:
    expected, findings = baseline(KERNEL)
    ellipsis = next(p for p in plants(KERNEL) if p.kind == "ellipsis" and p.original == "sems.at[0, 1]")
    assert judge(ellipsis, expected, findings).verdict == "restored"


@pytest.mark.network
def test_a_seeded_sample_of_the_real_trees_has_no_wrong_rewrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["--work", str(tmp_path), "--sample", "120", "--seed", "35", "--jobs", "1"])
    assert status == 0, capsys.readouterr().out
