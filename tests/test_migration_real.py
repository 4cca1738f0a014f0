"""SEM101 on real code (benchmarks/migration.py): older tpu-inference and sglang-jax wheels,
fetched from PyPI, migrated: no removed `pltpu` name left, every file compiles, and every file
that imported before imports after, also with JAX 0.11's removals emulated."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from migration import WHEELS, measure  # noqa: E402

pytestmark = [pytest.mark.network, pytest.mark.jax]


@pytest.mark.parametrize("requirement", WHEELS)
def test_migrated_wheel_reads_no_removed_name_and_still_imports(requirement: str, tmp_path: Path) -> None:
    pytest.importorskip("jax")
    result = measure(requirement, tmp_path)
    assert result.files > 0
    if requirement.startswith("tpu-inference"):
        assert result.references_before > 0  # the wheel is old enough to need the migration
    assert result.references_after == 0
    assert result.compile_failures == []
    assert result.regressions == []
