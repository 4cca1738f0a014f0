"""The migration oracle's soak (`python -m tests.oracle --migration --minutes N`), its report,
and its shrinker: a failing project cut down to a plainer plan that fails the same way, saved
as a folder (the project before the migration, what semfix wrote, the error) to replay.
"""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from .migrate_judge import FAILURES, INFO, Failure, MigrationJudge, Verdict
from .migration import Project, build, generate, plan_for, simpler

SHRUNK_FIRST = ("wrong migration", "floor above truth", "semfix error", "miss")  # what the soak is for, first


def soak(seeds: range, deadline: float) -> Verdict:
    """Judge projects of `seeds` until `deadline` (time.time()); the sum of their verdicts."""
    judge = MigrationJudge()
    total = Verdict()
    try:
        for seed in seeds:
            if time.time() > deadline:
                break
            verdict = judge.judge(generate(seed))
            if verdict.broken:
                print(f"seed {seed}: the generator wrote a project that fails: {verdict.broken[:300]}", flush=True)
            total.add(verdict)
    finally:
        judge.close()
    return total


def _job(args: tuple[range, float]) -> Verdict:
    return soak(*args)


def run_soak(first: int, jobs: int, minutes: float) -> Verdict:
    deadline = time.time() + 60 * minutes
    ranges = [(range(first + k, 1 << 30, jobs), deadline) for k in range(jobs)]
    if jobs == 1:
        return _job(ranges[0])
    total = Verdict()
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for one in pool.map(_job, ranges):
            total.add(one)
    return total


def report(verdict: Verdict) -> None:
    """Counts, what was held back by reason, then each failure: seed, floor, error, diff."""
    print("\n".join(f"{name:>24}: {verdict.counts[name]}" for name in INFO))
    print("\n".join(f"{name.upper():>24}: {sum(f.kind == name for f in verdict.failures)}" for name in FAILURES))
    print("held back (findings left), by reason:")
    for why, count in verdict.held.most_common():
        print(f"  {count:5} {why}")
    for failure in sorted(verdict.failures, key=lambda f: (FAILURES.index(f.kind), f.seed)):
        print(failure.text())


def shrink(failure: Failure, judge: MigrationJudge, budget: int = 25) -> tuple[Project, Failure]:
    """The plainest plan found within `budget` judgements that still fails as `failure` did."""
    plan, found = plan_for(failure.seed), failure
    progress = True
    while progress and budget > 0:
        progress = False
        for candidate in simpler(plan):
            budget -= 1
            verdict = judge.judge(build(candidate))
            again = next((f for f in verdict.failures if f.key() == failure.key()), None)
            if again is not None:
                plan, found, progress = candidate, again, True
                break
            if budget <= 0:
                break
    return build(plan), found


def save(project: Project, failure: Failure, folder: Path) -> Path:
    """The project before the migration, under `folder/<kind>-<seed>/`, with what semfix wrote
    (`migration.diff`) and what JAX said (`FAILURE.txt`): replay it with
    `python -m semfix fix --extend-select SEM1 <folder>/project`."""
    where = folder / f"{failure.kind.replace(' ', '_')}-{failure.seed}"
    for path, text in project.files().items():
        (where / "project" / path).parent.mkdir(parents=True, exist_ok=True)
        (where / "project" / path).write_text(text)
    (where / "migration.diff").write_text(failure.diff)
    (where / "FAILURE.txt").write_text(failure.text() + f"\nplan: {project.plan}\n")
    return where


def shrink_all(verdict: Verdict, folder: Path, limit: int, budget: int) -> None:
    """Shrink and save each distinct failure (by Failure.key), at most `limit` of them."""
    judge = MigrationJudge()
    seen: set[tuple[str, str, str, str]] = set()
    try:
        for failure in sorted(verdict.failures, key=lambda f: (SHRUNK_FIRST.index(f.kind), f.seed)):
            if failure.key() in seen or len(seen) >= limit:
                continue
            seen.add(failure.key())
            project, small = shrink(failure, judge, budget)
            print(f"wrote {save(project, small, folder)}", flush=True)
    finally:
        judge.close()


def replay(seed: int) -> Verdict:
    """Project `seed` alone: its files, then its verdict."""
    project = generate(seed)
    for path, text in project.files().items():
        print(f"--- {path}\n{text}")
    print(f"plan: {project.plan}")
    judge = MigrationJudge()
    try:
        verdict = judge.judge(project)
    finally:
        judge.close()
    if verdict.broken:
        print(f"the project fails before the migration: {verdict.broken}")
    return verdict
