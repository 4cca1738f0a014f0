"""Versions of semfix side by side: the table of issue 47, for any checkouts.

    python benchmarks/versions.py --trees DIR --version b9c6ee1=/path/to/checkout \\
        --version final=. [--rounds 5] [--cores 0,0-12] [--ruff PATH]

Each version is a checkout run from its source (`PYTHONPATH`, with this interpreter and the
packages installed beside it), so that old commits need no install. In interleaved rounds, under
`taskset -c CORES`, it times each version's `semfix check -q --exit-zero` (cold: `SEMFIX_NO_CACHE=1`)
on each tree of --trees (a folder holding one unpacked tree per folder, outside any git work
tree), with the default rules and with every rule (`--select SEM`, on the first core set only
for all but the last two versions: the oldest are slow there), and on one small kernel file
beside `python -c "import click"`; with --ruff, `ruff check --no-cache --select UP` on each tree.
It prints a Markdown table per core set (medians) and the last version's ratios to the first,
to the one before it, and to ruff. Wall time: the machine should be quiet, and the ratios of
one run are what to compare.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from startup import KERNEL

ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "SEMFIX_NO_CACHE": "1"}


def timed(command: list[str], cwd: Path, cores: str, source: Path | None = None) -> float:
    env = ENV if source is None else {**ENV, "PYTHONPATH": str(source)}
    started = time.perf_counter()
    subprocess.run(["taskset", "-c", cores, *command], cwd=cwd, env=env, capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trees", type=Path, required=True)
    parser.add_argument("--version", action="append", required=True, help="NAME=CHECKOUT, oldest first")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cores", default="0", help="taskset core lists, comma-separated sets: 0,0-12")
    parser.add_argument("--ruff", help="a ruff binary to time beside semfix")
    args = parser.parse_args()
    versions = [(name, Path(path).resolve()) for name, _, path in (v.partition("=") for v in args.version)]
    for _, checkout in versions:  # bytecode first: no version pays for compiling its own
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "semfix")], env=ENV, check=True)
    trees = sorted(tree for tree in args.trees.iterdir() if tree.is_dir())
    kernel = Path(tempfile.mkdtemp())
    (kernel / "kernel.py").write_text(KERNEL)
    check = [sys.executable, "-m", "semfix", "check", "-q", "--exit-zero"]
    core_sets = args.cores.split(",")
    for cores in core_sets:
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for tree in trees:
                for rules, options in (("default", []), ("every rule", ["--select", "SEM"])):
                    for index, (name, checkout) in enumerate(versions):
                        if options and cores != core_sets[0] and index < len(versions) - 2:
                            continue
                        key = (f"{tree.name}, {rules}", name)
                        times.setdefault(key, []).append(timed([*check, *options, "."], tree, cores, checkout))
                if args.ruff:
                    ruff = [args.ruff, "check", "--no-cache", "--select", "UP", "--exit-zero", "-q", "."]
                    times.setdefault((f"{tree.name}, default", "ruff UP"), []).append(timed(ruff, tree, cores))
            for name, checkout in versions:
                times.setdefault(("one kernel file", name), []).append(
                    timed([*check, "kernel.py"], kernel, cores, checkout)
                )
            times.setdefault(("one kernel file", "click"), []).append(
                timed([sys.executable, "-c", "import click"], kernel, cores)
            )
        report(cores, args.rounds, {key: statistics.median(found) for key, found in times.items()}, versions)


def report(cores: str, rounds: int, median: dict[tuple[str, str], float], versions: list[tuple[str, Path]]) -> None:
    columns = list(dict.fromkeys(column for column, _ in median))
    rows = [name for name, _ in versions] + [row for row in ("ruff UP", "click") if any(r == row for _, r in median)]
    print(f"\ntaskset -c {cores}, medians of {rounds} interleaved rounds\n")
    print("| version | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for row in rows:
        cells = [median.get((column, row)) for column in columns]
        print(f"| {row} | " + " | ".join("" if c is None else f"{c:.2f} s" for c in cells) + " |")
    first, last = versions[0][0], versions[-1][0]
    before = versions[-2][0] if len(versions) > 1 else first
    for column in columns:
        mine = median.get((column, last))
        ratios = [
            (f"/{other}", median.get((column, other))) for other in dict.fromkeys((first, before, "ruff UP", "click"))
        ]
        shown = ", ".join(f"{label} {mine / value:.2f}x" for label, value in ratios if value and mine)
        print(f"{last}, {column}: {shown}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
