"""One soak's kernels on a TPU chip (issue 35, "on the chip too"): does the chip agree with interpret mode?

    python -m tests.oracle.chip export DIR --seeds 3000:3060   # here: kernels and their interpret-mode answers
    python tests/oracle/chip.py run DIR                         # on the chip: imports JAX alone, no semfix
    python -m tests.oracle.chip compare DIR                     # here: agreement, counted

`export` writes, for each generated case that runs on one device, its correct kernel and the safe
fix semfix makes of each judged mutant, each with the answer JAX gives in interpret mode on this
machine (`index.json`); the chip's copies drop `interpret=`. `run` answers each on the chip
(`chip.json`, through tests/kernel_worker.py's `run_one`), and `compare` counts the kernels whose
two answers agree: both run and compute `expected()`, or both fail.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

INTERPRET = ", interpret=pltpu.InterpretParams()"


def export(folder: Path, seeds: range) -> None:
    from jax_env import Worker

    from semfix import fix_source
    from semfix.selection import build_settings

    from . import TESTS  # noqa: F401 - puts tests/ on sys.path for jax_env
    from .grammar import generate
    from .judge import Judge

    folder.mkdir(parents=True, exist_ok=True)
    every = build_settings(select=["ALL"])
    judge = Judge(Worker(timeout=30))
    index: dict[str, dict[str, str]] = {}
    try:
        for seed in seeds:
            case = generate(seed)
            correct = case.correct()
            if case.plan.launch == "remote" or INTERPRET not in correct:  # one chip: no second device
                continue
            kernels = {"correct": correct}
            for site, mutation, text in judge.choose(case):
                fixed = fix_source(case.mutant(site, text), settings=every).source
                if fixed != case.mutant(site, text):
                    kernels[f"fixed-{site}-{mutation}"] = fixed
            for name, source in kernels.items():
                stem = f"{seed}-{name}"
                (folder / f"{stem}.py").write_text(source.replace(INTERPRET, ""))
                index[stem] = {"interpret": judge.worker.run(source, check=True)}
    finally:
        judge.worker.close()
        judge.close()
    (folder / "index.json").write_text(json.dumps(index, indent=1))
    print(f"{len(index)} kernels from {len(seeds)} seeds in {folder}")


def run(folder: Path) -> None:
    """On the chip: each kernel without interpret mode, answered as the worker answers."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import kernel_worker

    modules = kernel_worker.pallas_modules()
    answers = {}
    for path in sorted(folder.glob("*.py")):
        answers[path.stem] = kernel_worker.run_one({"source": path.read_text(), "check": True}, modules)
        print(path.stem, next(iter(answers[path.stem].values()))[:100], flush=True)
    (folder / "chip.json").write_text(json.dumps(answers, indent=1))


def compare(folder: Path) -> None:
    index = json.loads((folder / "index.json").read_text())
    chip = json.loads((folder / "chip.json").read_text())
    agree, differ = 0, []
    for stem, answer in sorted(index.items()):
        here, there = answer["interpret"].startswith("ok"), "ok" in chip[stem]
        if here == there:
            agree += 1
        else:
            differ.append(f"{stem}: interpret {answer['interpret'][:80]!r}, chip {chip[stem]!r:.120}")
    print(f"{agree} of {len(index)} kernels agree (runs right on both, or fails on both)")
    print("\n".join(differ))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("export", "run", "compare"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seeds", default="3000:3060", help="first:last (exclusive) seed to export")
    args = parser.parse_args()
    if args.action == "export":
        first, last = map(int, args.seeds.split(":"))
        export(args.folder, range(first, last))
    else:
        (run if args.action == "run" else compare)(args.folder)


if __name__ == "__main__":
    main()
