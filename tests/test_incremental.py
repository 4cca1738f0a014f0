"""The incremental check (semfix/engine/incremental.py) equals a whole-file check after every
edit: random edits of real kernels, within function bodies and elsewhere."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from semfix.api import check_incremental, fix_source
from semfix.engine import incremental
from semfix.errors import SourceError
from semfix.selection import build_settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from corpus import kernel_module  # noqa: E402

SNIPPETS = ["[...]", ".at[0]", "(", ")", " + 1", "  # note", "x", "", "sem", "[0]", "SEMS", "Slot(index)", "pltpu := "]

#: What links functions other than a def's name: a name imported from outside JAX (its evidence,
#: `SEMS.at[0]` in one function, proves `SEMS[i]` in another a Ref), a walrus in a def's
#: default (it rebinds `pltpu` for the whole module).
LINKED = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from ringlib import SEMS, Slot


def kernel(x_ref, o_ref, sem, index):
    pltpu.semaphore_signal(sem[...], 1)
    pl.semaphore_wait(SEMS[index])
    pl.semaphore_wait(sem[Slot(index)])


def proves(index):
    pl.semaphore_signal(SEMS.at[0], 1)
    Slot(index).at[0]


def rebinds(b=(pltpu := pltpu)):
    pass


def waits(sem):
    pl.semaphore_wait(sem[0][...])
"""


def _whole(text: str) -> object:
    try:
        return fix_source(text, settings=build_settings(), apply_fixes=False).findings
    except SourceError as error:
        return str(error)


def _edit(rng: random.Random, text: str) -> str:
    """One random edit: characters typed or deleted within a line, or a line added, dropped or changed."""
    lines = text.split("\n")
    index = rng.randrange(len(lines))
    line, kind = lines[index], rng.randrange(4)
    if kind == 0 or not line:
        at = rng.randint(0, len(line))
        lines[index] = line[:at] + rng.choice(SNIPPETS) + line[at:]
    elif kind == 1:
        at = rng.randrange(len(line))
        lines[index] = line[:at] + line[at + rng.randint(1, 4) :]
    elif kind == 2:
        lines.insert(index, line[: len(line) - len(line.lstrip())] + rng.choice(SNIPPETS))
    else:
        del lines[index]
    return "\n".join(lines)


def _kernels() -> list[str]:
    before = sorted(ROOT.glob("tests/fixtures/*/*/before.py"))
    chosen = [p.read_text() for p in random.Random(8).sample(before, min(12, len(before)))]
    return [kernel_module(random.Random(23), 600, bug_rate=0.1).planted, LINKED, *chosen]


def test_random_edits_equal_whole_file_checks() -> None:
    settings, edits, taken, moved = build_settings(), 0, 0, 0
    for seed, text in enumerate(_kernels()):
        rng, state = random.Random(seed), None
        for _ in range(25):
            count, parsed = text.count("\n"), (text, state)
            text = _edit(rng, text)
            before = incremental.analyses
            try:
                result, state = check_incremental(state, text, settings)
                got: object = result.findings
            except SourceError as error:
                got, state = str(error), None
            assert got == _whole(text), text
            if state is None:  # the next edit made to the last text that parsed, as typing mends it
                text, state = parsed
            edits += 1
            taken += incremental.analyses == before
            moved += incremental.analyses == before and text.count("\n") != count  # lines added or removed
    assert edits == 350 and taken > 50 and moved > 10


def test_an_edit_in_a_function_body_is_not_checked_whole() -> None:
    text = kernel_module(random.Random(23), 600, bug_rate=0.1).planted
    settings = build_settings()
    found, state = incremental.check(None, text, settings)
    lines = text.split("\n")
    body = next(i for i, line in enumerate(lines) if line.startswith("    pl.semaphore_wait("))
    lines[body] = lines[body].replace("pl.semaphore_wait(", "pl.semaphore_wait(  ")
    before = incremental.analyses
    again, _ = incremental.check(state, "\n".join(lines), settings)
    assert incremental.analyses == before
    assert again == fix_source("\n".join(lines), settings=settings, apply_fixes=False).findings
    assert len(again) == len(found) > 0


@pytest.mark.parametrize("line", ["import os", "N = 3"])
def test_a_module_level_edit_is_checked_whole(line: str) -> None:
    text = kernel_module(random.Random(23), 300, bug_rate=0.1).planted
    settings = build_settings()
    _, state = incremental.check(None, text, settings)
    lines = text.split("\n")
    lines[1] = line
    before = incremental.analyses
    incremental.check(state, "\n".join(lines), settings)
    assert incremental.analyses == before + 1
