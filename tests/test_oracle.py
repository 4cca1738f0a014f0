"""JAX as the oracle (tests/oracle, issue 35): a fixed set of generated cases judged on each JAX.

Every case's correct kernel must run (else the generator is wrong); among its mutants that JAX
rejects, no safe fix and no `explain --fix` may write a kernel that fails. False reports,
misses and wrong unsafe fixes are printed by class (`pytest -s` shows them): they are the
soak's to count (`python -m tests.oracle --minutes N`), not this test's to fail on.
"""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import require_jax
from jax_env import Worker, require_jax_python
from oracle.grammar import generate
from oracle.judge import TWO_DEVICES, Judge, Verdict

require_jax()

pytestmark = pytest.mark.jax

SEEDS = range(80)  # about a minute per JAX on a quiet 2-core machine, under 2 on a loaded one
RELEASES = ["0.10.2", "0.12.1"]


@pytest.mark.parametrize("release", RELEASES)
def test_no_wrong_fix_on_generated_kernels(release: str, request: pytest.FixtureRequest) -> None:
    python = require_jax_python(release, request.config) if release != "0.10.2" else None
    judge = Judge(Worker(python, timeout=30, env=TWO_DEVICES) if python else Worker(env=TWO_DEVICES, timeout=30))
    total = Verdict()
    broken = []
    try:
        for seed in SEEDS:
            verdict = judge.judge(generate(seed))
            if verdict.broken:
                broken.append(f"seed {seed}: {verdict.broken[:200]}")
            total.add(verdict)
    finally:
        judge.worker.close()
        judge.close()
    by_class = Counter(
        f"{f.kind}: {f.role} {f.mutation}" if f.role else f"{f.kind}: {f.detail.split()[1]}" for f in total.failures
    )
    print(f"\nJAX {release}: {dict(total.counts)}")
    print("\n".join(f"  {count} x {name}" for name, count in sorted(by_class.items())))
    assert not broken, "the generator wrote kernels that do not run:\n" + "\n".join(broken)
    wrong = [f for f in total.failures if f.kind in ("wrong safe fix", "explain wrong fix")]
    assert not wrong, "\n".join(f"{f.kind} (seed {f.seed}): {f.detail[:300]}" for f in wrong)


# Soak finds, replayed with every mutant: on 0.12.1, whose DMA error names the semaphore alone,
# explain wrote the unsafe view of an array whose rank the file does not show (a row).
FOUND = {"0.12.1": [20035, 22749]}


@pytest.mark.parametrize("release", sorted(FOUND))
def test_no_wrong_fix_on_what_soaks_found(release: str, request: pytest.FixtureRequest) -> None:
    python = require_jax_python(release, request.config) if release != "0.10.2" else None
    judge = Judge(Worker(python, timeout=30, env=TWO_DEVICES) if python else Worker(env=TWO_DEVICES, timeout=30), 0)
    try:
        failures = [f for seed in FOUND[release] for f in judge.judge(generate(seed)).failures]
    finally:
        judge.worker.close()
        judge.close()
    wrong = [f for f in failures if f.kind in ("wrong safe fix", "explain wrong fix")]
    assert not wrong, "\n".join(f"{f.kind} (seed {f.seed}): {f.detail[:300]}" for f in wrong)
