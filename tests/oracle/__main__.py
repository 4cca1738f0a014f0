"""Soak semfix against JAX: `python -m tests.oracle --minutes N [--jax 0.10.2|0.12.1] [--seed S] [--jobs J]`.

`--migration` soaks the migration instead (migrate_judge.py: generated projects, each fixed by
`semfix fix --extend-select SEM1` and run on its declared floor's JAX and on 0.12.1 strict).

Judges generated cases from seed S on (S, S+J, ... in each of J jobs) until N minutes pass,
then prints the counts by class and each failure with its seed; `--shrink DIR` writes each
distinct failure, cut down, to DIR as a fixture candidate. `--seed S --case` replays one case
with every mutant and prints the failing kernels.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

from . import TESTS  # noqa: F401 - puts tests/ on sys.path for jax_env
from .grammar import generate
from .judge import FAILURES, INFO, TWO_DEVICES, Judge, Verdict
from .shrink import fixture_text, shrink

# wrong fixes first: they are what the soak is for
SHRUNK_FIRST = ("wrong safe fix", "explain wrong fix", "semfix error", "wrong unsafe fix", "false report", "miss")


def make_judge(jax: str, mutants: int) -> Judge:
    """A judge whose kernels run on `jax`: the project's own, or a tests/jax_env.py venv."""
    from jax_env import Worker, jax_python

    python = sys.executable if jax == "0.10.2" else jax_python(jax)
    return Judge(Worker(python, timeout=30, env=TWO_DEVICES), mutants)


def soak(jax: str, seeds: range, deadline: float, mutants: int) -> Verdict:
    """Judge cases of `seeds` until `deadline` (time.time()); the sum of their verdicts."""
    judge = make_judge(jax, mutants)
    total = Verdict()
    try:
        for seed in seeds:
            if time.time() > deadline:
                break
            verdict = judge.judge(generate(seed))
            if verdict.broken:
                total.counts["generator error"] += 1
                print(f"seed {seed}: the generator wrote a kernel that fails: {verdict.broken[:300]}", flush=True)
            total.add(verdict)
    finally:
        judge.worker.close()
        judge.close()
    return total


def _job(args: tuple[str, range, float, int]) -> Verdict:
    return soak(*args)


def report(verdict: Verdict) -> None:
    """Counts by class, then each failure: its class, seed, what was planted, what happened."""
    print("\n".join(f"{name:>22}: {verdict.counts[name]}" for name in INFO))
    print("\n".join(f"{name.upper():>22}: {sum(f.kind == name for f in verdict.failures)}" for name in FAILURES))
    for (event, name), count in sorted(verdict.classes.items()):
        if event in ("miss", "explain fixed"):
            print(f"{event:>22}: {count} of {verdict.classes['kept', name]} kept, {name}")
    for f in sorted(verdict.failures, key=lambda f: (FAILURES.index(f.kind), f.seed)):
        print(f"{f.kind.upper()} seed {f.seed}: {f.detail[:400]}")
    for f in sorted(verdict.notes, key=lambda f: (f.kind, f.seed)):
        print(f"note, {f.kind} seed {f.seed}: {f.detail[:300]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.oracle", description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--jax", default="0.10.2", help="0.10.2 (the project's venv) or another release (a venv)")
    parser.add_argument("--seed", type=int, default=0, help="the first seed")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--mutants", type=int, default=4, help="mutants judged per case (0: all)")
    parser.add_argument("--case", action="store_true", help="replay case --seed alone, every mutant")
    parser.add_argument("--shrink", type=Path, help="write each distinct failure, shrunk, to this folder")
    parser.add_argument("--shrink-limit", type=int, default=20, help="shrink at most this many distinct failures")
    parser.add_argument("--shrink-budget", type=int, default=30, help="judgements per shrink")
    parser.add_argument("--migration", action="store_true", help="soak the migration (SEM1) on generated projects")
    args = parser.parse_args(argv)
    if args.migration:
        return migration_main(args)
    if args.case:
        judge = make_judge(args.jax, 0)
        case = generate(args.seed)
        verdict = judge.judge(case)
        print(case.correct())
        print(f"features: {', '.join(sorted(case.features))}")
        if verdict.broken:
            print(f"the correct kernel fails: {verdict.broken}")
    else:
        deadline = time.time() + 60 * args.minutes
        jobs = [(args.jax, range(args.seed + k, 1 << 30, args.jobs), deadline, args.mutants) for k in range(args.jobs)]
        if args.jobs == 1:
            verdicts = [_job(jobs[0])]
        else:
            with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
                verdicts = pool.map(_job, jobs)
        verdict = Verdict()
        for one in verdicts:
            verdict.add(one)
        judge = make_judge(args.jax, args.mutants) if args.shrink else None
    report(verdict)
    if args.shrink and judge is not None:
        args.shrink.mkdir(parents=True, exist_ok=True)
        seen: set[tuple[str, str, str, tuple[str, ...]]] = set()
        for failure in sorted(verdict.failures, key=lambda f: (SHRUNK_FIRST.index(f.kind), f.seed)):
            if failure.key() in seen or len(seen) >= args.shrink_limit:
                continue
            seen.add(failure.key())
            _, small = shrink(failure, judge, budget=args.shrink_budget)
            name = f"{failure.kind.replace(' ', '_')}-{failure.seed}-{len(seen)}.py"
            (args.shrink / name).write_text(fixture_text(small))
            print(f"wrote {args.shrink / name}")
    elif args.case:
        for failure in verdict.failures:
            print(f"\n--- {failure.kind} ---\n{fixture_text(failure)}")
    return 1 if verdict.failures else 0


def migration_main(args: argparse.Namespace) -> int:
    """`--migration`: the soak, the replay of one seed (`--case`), the shrunk failures (`--shrink`)."""
    from . import migrate_soak

    if args.case:
        verdict = migrate_soak.replay(args.seed)
    else:
        verdict = migrate_soak.run_soak(args.seed, args.jobs, args.minutes)
    migrate_soak.report(verdict)
    if args.shrink and verdict.failures:
        migrate_soak.shrink_all(verdict, args.shrink, args.shrink_limit, args.shrink_budget)
    return 1 if verdict.failures else 0


if __name__ == "__main__":
    sys.exit(main())
