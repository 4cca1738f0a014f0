"""The cost guard (benchmarks/cost.py): the calls `semfix check` makes on pinned real trees stay
within 10% of benchmarks/cost_budget.json. A count, not a time, so a busy machine cannot fail it
and a slower semfix cannot pass it; a change that must cost more raises the budget and says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import cost

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_signal(sem[...], 2)\n"


@pytest.mark.network
def test_semfix_stays_within_its_budget_of_calls_on_real_trees(tmp_path: Path) -> None:
    allowed = cost.budget()
    assert allowed, f"benchmarks/cost_budget.json has no budget for Python {cost.python()}: run cost.py --update"
    figures = cost.measure(cost.trees(None, tmp_path))
    assert set(figures) == set(allowed)
    assert cost.off_budget(figures, allowed) == []


def test_the_guard_fails_a_figure_over_or_far_under_its_budget() -> None:
    assert cost.off_budget({"tree default": 110}, {"tree default": 100}) == []
    assert cost.off_budget({"tree default": 70}, {"tree default": 100}) == []
    assert cost.off_budget({"tree default": 111}, {"tree default": 100}) == [
        "tree default: 111 calls, budget 100 (1.11x)"
    ]
    assert cost.off_budget({"tree default": 69}, {"tree default": 100}) == [
        "tree default: 69 calls, budget 100 (0.69x)"
    ]
    assert cost.off_budget({"tree default, bytes read": 111}, {"tree default, bytes read": 100}) == [
        "tree default, bytes read: 111 bytes, budget 100 (1.11x)"
    ]


def test_the_guard_weighs_what_a_search_or_a_parse_reads(tmp_path: Path) -> None:
    """A kernel padded with 100 kB of comment costs about the calls it did, and 100 kB more
    for each search and parse of it: the bytes figure sees what the count of calls cannot."""
    (tmp_path / "k.py").write_text(BUGGY)
    calls, read = cost.count(tmp_path, ())
    (tmp_path / "k.py").write_text(BUGGY + "# padding\n" * 10_000)
    padded_calls, padded_read = cost.count(tmp_path, ())
    assert padded_calls < calls * 1.10
    # the byte scan's search, the skim's, the parse (no `noqa` in it: not searched for one)
    assert padded_read >= read + 3 * 100_000


def test_a_search_tried_at_every_offset_weighs_more() -> None:
    """A pattern that starts with `\\b` or a look-around is tried at every offset of what it
    searches (`\\bglobals\\(\\)` over each kernel cost a tenth of a check, unseen by a figure that
    weighed its bytes as any other search's); one that starts with its word is not."""
    import re

    assert cost.weight(re.compile(r"\bglobals\(\)|\bgetattr\(")) == cost.EVERY_OFFSET
    assert cost.weight(re.compile(rb"(?<![\w.])kernel\s*\(")) == cost.EVERY_OFFSET
    assert cost.weight(rb"(?<!=)=") == cost.EVERY_OFFSET
    assert cost.weight(re.compile(rb"kernel(?<![\w.]kernel)\s*\(")) == 1
    assert cost.weight(re.compile(r"[A-Za-z_]\w*")) == 1
    assert cost.weight(None) == 1
    assert cost.weight(re.compile(r"ANY(?!\w)|HOST(?!\w)|\.\s*ANY")) == cost.EVERY_OFFSET
    assert cost.weight(r"abc|abd") == 1  # one first literal: searched for in C
