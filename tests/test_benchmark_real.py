"""The real-code benchmark's planter: it plants reads only on Refs passed to semaphore
parameters, and each is one SEM001 takes back out byte for byte (benchmarks/real.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from real import dense_corpus, pallas_tree
from run import link_copies

from semfix.api import fix_source
from semfix.selection import build_settings

KERNEL = """from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import other


def kernel(x_hbm, o_hbm, sems, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sems.at[0]).start()
    pl.semaphore_signal(sem, 1)
    pl.semaphore_wait(value=1, sem_or_view=sem)
    pl.semaphore_read(sems[0])
    print(f"{pl.semaphore_read(sem)}")
    other.semaphore_wait(sem)
"""


def test_planted_reads_sit_on_refs_and_sem001_restores_them(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(KERNEL)
    [item] = dense_corpus(tmp_path, files=80, bugs=500, rng=random.Random(0))
    assert item.bugs == 3
    assert item.planted.decode() == (
        KERNEL.replace("sems.at[0])", "sems.at[0][...])")
        .replace("signal(sem, 1)", "signal(sem[...], 1)")
        .replace("sem_or_view=sem)", "sem_or_view=sem[...])")
    )
    assert fix_source(item.planted, settings=build_settings(select=["SEM001"])).source == item.clean


def test_files_without_a_plantable_site_are_left_out(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("from jax.experimental import pallas as pl\nx = pl.program_id(0)\n")
    assert dense_corpus(tmp_path, files=80, bugs=500, rng=random.Random(0)) == []


def test_a_kept_work_folder_can_be_used_again(tmp_path: Path) -> None:
    """`run.py --work FOLDER` reuses its downloaded wheels: the linked trees are built afresh."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "kernel.py").write_text(KERNEL)
    for _ in range(2):
        assert [p.name for p in pallas_tree(source, tmp_path / "pallas")] == ["kernel.py"]
        link_copies(source, tmp_path / "large", 1)
    assert [p.name for p in (tmp_path / "large").rglob("*.py")] == ["kernel.py"]
