"""The cost guard (benchmarks/cost.py): the calls `semfix check` makes on pinned real trees stay
within 10% of benchmarks/cost_budget.json. A count, not a time, so a busy machine cannot fail it
and a slower semfix cannot pass it; a change that must cost more raises the budget and says why."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
import cost

pytestmark = pytest.mark.network


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
