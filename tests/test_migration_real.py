"""The migration to JAX 0.12 on real code (benchmarks/migration.py), on one representative wheel
fetched from PyPI (the full measurement, every wheel, is the README's table): migrated with
every SEM1 rule at a declared floor of 0.7, every file compiles, every file that imported on
JAX 0.10.2 imports on 0.12.1 with the Pallas family's deprecations as errors, and the only
names of the family left are the ones semfix reports without a fix, for the reasons it gives."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest
from jax_env import Unavailable, jax_python

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from migration import AFTER_JAX, WHEELS, measure  # noqa: E402

pytestmark = [pytest.mark.network, pytest.mark.jax]

# tpu-inference 0.13.3: 16 Pallas files holding every kind of the family's names but HOST.
REPRESENTATIVE = "tpu-inference==0.13.3"


def test_migrated_wheel_keeps_only_what_semfix_reports_and_still_imports(tmp_path: Path) -> None:
    pytest.importorskip("jax")
    try:
        jax_python(AFTER_JAX)
    except Unavailable as error:
        pytest.skip(f"JAX {AFTER_JAX} cannot run here: {error}")
    assert REPRESENTATIVE in WHEELS
    result = measure(REPRESENTATIVE, tmp_path)
    assert result.files > 0 and result.compile_failures == []
    assert {"pltpu.semaphore_wait", "pltpu.DeviceIdType", "device_id_type=", "pltpu.TPUMemorySpace"} <= set(
        result.before
    )
    # left: the TPU enum's ANY (never `pl.ANY`'s object) and `pltpu.ANY` (`pl.ANY`'s only from
    # 0.7.1, above the floor), each reported by semfix with that reason, one finding a reference
    reasons = Counter(
        "pltpu.MemorySpace.ANY" if "is not the object it gave" in line else "pltpu.ANY"
        for line in result.left
        if "means the same only from JAX 0.7.1" in line or "is not the object it gave" in line
    )
    assert len(result.left) == sum(reasons.values())
    assert result.after == reasons
    assert result.imports["imports → imports"] > 0 and result.regressions == []
