"""The migration oracle (tests/oracle/migrate_judge.py, issue 36) on a fixed set of seeds.

Each generated project (a module or a small package, the migration's names in every import
style and in compatibility code, a floor declared in one of the forms semfix reads, issue 45's
among them) runs on its floor's JAX before the migration, else the generator is wrong. The
floor semfix reads (`check --show-settings`) is never above the one the generator declared: a
FLOOR ABOVE TRUTH. After `python -m semfix fix --extend-select SEM1`,
no module may fail on the floor's JAX, nor on 0.12.1 strict where semfix left nothing: a
WRONG MIGRATION. Misses (a module that fails on 0.12.1 with nothing changed or reported) and
what was held back are printed (`pytest -s`); the soak counts them
(`python -m tests.oracle --migration --minutes N`).
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import require_jax
from jax_env import require_jax_python
from oracle.floors import FLOOR_ENVS, NEWEST
from oracle.migrate_judge import MigrationJudge, Verdict
from oracle.migration import generate

require_jax()

pytestmark = pytest.mark.jax

# about 60 s on a quiet 2-core machine, JAX's five imports included; and the soak's wrong
# migrations, replayed: 30133 and 31824, a sibling's unread import of a removed TPU name;
# 50017, 50449 and 50794, `dec=` given to `semaphore_wait` read through a sibling; 71672 (through
# a package's `__init__`), 73026 (`compat.pltpu.semaphore_signal`) and 78588 (a star import of a
# sibling with an `__all__`), from the 60-minute soak; 130166 (a name that star binds, called);
# 400031 and 800058, `dec=` given to a wait compatibility code binds (a compat module's `try`/
# `except ImportError` import; `getattr(pl, X, None) or pltpu.X`), from issue 45's soaks
SEEDS = [*range(64), 30133, 31824, 50017, 50449, 50794, 71672, 73026, 78588, 130166, 400031, 800058]


def test_no_wrong_migration_on_generated_projects(request: pytest.FixtureRequest) -> None:
    for release in (*FLOOR_ENVS, NEWEST):
        require_jax_python(release, request.config)
    judge = MigrationJudge()
    total = Verdict()
    broken = []
    try:
        for seed in SEEDS:
            verdict = judge.judge(generate(seed))
            if verdict.broken:
                broken.append(f"seed {seed}: {verdict.broken[:300]}")
            total.add(verdict)
    finally:
        judge.close()
    print(f"\nmigration oracle: {dict(total.counts)}")
    print("\n".join(f"  held back {count} x {why}" for why, count in total.held.most_common()))
    by_class = Counter(f"{f.kind}: {f.error[:90]}" for f in total.failures)
    print("\n".join(f"  {count} x {name}" for name, count in sorted(by_class.items())))
    assert not broken, "the generator wrote projects that do not run on their floor:\n" + "\n".join(broken)
    assert total.counts["projects"] == len(SEEDS)
    wrong = [f.text() for f in total.failures if f.kind in ("wrong migration", "floor above truth")]
    assert not wrong, "\n\n".join(wrong)
    assert total.counts["floor read as declared"] + total.counts["floor read below truth"] == len(SEEDS)
