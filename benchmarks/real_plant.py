"""Plant each mistake at each site of the real trees, one at a time, and count semfix's verdicts.

    python benchmarks/real_plant.py --work /tmp/plant [--sample N --seed S] [--jobs 2] [--json wrong.json]

The wheels (`WHEELS`) are fetched with pip into the work folder (benchmarks/real.py) and never
committed. Prints a table of verdicts per tree and per kind of plant (benchmarks/plant.py says
what each means), then every wrong rewrite, which `--json` also writes. A case is reproduced by
its file, kind and offset; a seed reproduces a sample.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from plant import KINDS, VERDICTS, baseline, judge, plants
from real import fetch

from semfix.catalog import may_contain_calls

# The trees issue 35 names, pinned to releases on PyPI (2026-12); helion holds a few Pallas sites.
WHEELS = (
    "jax==0.10.2",
    "tokamax==0.0.12",
    "tpu-inference==0.32.0",
    "sglang-jax==0.0.1.post1",
    "ejkernel==0.0.80.3",
    "helion==1.5.1",
)

Case = tuple[str, str, int]  # file (relative to the source folder), kind, offset


def cases(source: Path) -> list[Case]:
    """Every plant of every file, as ids: the planted texts are made again where they are judged."""
    found = []
    for path in sorted(source.rglob("*.py")):
        data = path.read_bytes()
        if may_contain_calls(data):
            found += [(str(path.relative_to(source)), p.kind, p.offset) for p in plants(data)]
    return found


def run_file(job: tuple[Path, str, frozenset[tuple[str, int]]]) -> tuple[str, list[dict[str, object]]]:
    """Judge the chosen plants of one file."""
    source, name, chosen = job
    data = (source / name).read_bytes()
    expected, findings = baseline(data)
    records = []
    for plant in plants(data):
        if (plant.kind, plant.offset) in chosen:
            v = judge(plant, expected, findings)
            records.append(
                {
                    "tree": name.split("/")[0],
                    "file": name,
                    "line": plant.line,
                    "kind": plant.kind,
                    "offset": plant.offset,
                    "verdict": v.verdict,
                    "original": plant.original,
                    "planted": plant.planted,
                    "wrote": v.wrote,
                }
            )
    return name, records


def judge_all(source: Path, chosen: list[Case], jobs: int, log: Path | None = None) -> list[dict[str, object]]:
    """Judge the cases, a file per task, the largest files first (they take longest). With a
    log, each file's records are appended to it as one JSON line as it ends, and the files
    a log from an interrupted run holds are not judged again."""
    by_file: dict[str, set[tuple[str, int]]] = {}
    for name, kind, offset in chosen:
        by_file.setdefault(name, set()).add((kind, offset))
    done = [json.loads(line) for line in log.read_text().splitlines()] if log and log.exists() else []
    records = [r for entry in done if entry["file"] in by_file for r in entry["records"]]
    work = sorted(
        set(by_file) - {e["file"] for e in done}, key=lambda n: -len(by_file[n]) * (source / n).stat().st_size
    )
    tasks = [(source, name, frozenset(by_file[name])) for name in work]
    with Pool(jobs) as pool:
        for count, (name, found) in enumerate(pool.imap_unordered(run_file, tasks), 1):
            records += found
            print(f"{count}/{len(tasks)} {name}", file=sys.stderr)
            if log:
                with log.open("a") as out:
                    out.write(json.dumps({"file": name, "records": found}) + "\n")
    return records


def table(records: list[dict[str, object]], key: str) -> str:
    counts = Counter((str(r[key]), str(r["verdict"])) for r in records)
    rows = sorted({k for k, _ in counts}, key=lambda k: (KINDS.index(k) if k in KINDS else 0, k))
    width = max(len(key), *(len(r) for r in rows))
    lines = [f"{key:<{width}} {'plants':>6} " + " ".join(f"{v:>12}" for v in VERDICTS)]
    for row in [*rows, "all"]:
        got = {v: sum(n for (k, w), n in counts.items() if w == v and row in (k, "all")) for v in VERDICTS}
        lines.append(f"{row:<{width}} {sum(got.values()):>6} " + " ".join(f"{got[v]:>12}" for v in VERDICTS))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work", type=Path, help="folder for the wheels (default: a new temporary one)")
    parser.add_argument("--sample", type=int, help="judge this many cases, drawn with --seed (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--kinds", default=",".join(KINDS), help="the kinds of plant, comma-separated")
    parser.add_argument("--json", type=Path, help="write the wrong rewrites and errors here")
    parser.add_argument("--log", type=Path, help="append each file's verdicts here; a rerun skips the files it holds")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="semfix-plant-"))
    source = fetch(work, WHEELS)
    every = [case for case in cases(source) if case[1] in args.kinds.split(",")]
    chosen = random.Random(args.seed).sample(every, min(args.sample, len(every))) if args.sample else every
    started = time.perf_counter()
    records = judge_all(source, chosen, args.jobs, args.log)
    print(f"{len(records)} of {len(every)} plants, seed {args.seed}, {time.perf_counter() - started:.0f} s")
    print(table(records, "tree"), "\n")
    print(table(records, "kind"), "\n")
    bad = sorted((r for r in records if r["verdict"] in ("wrong-safe", "wrong-unsafe", "error")), key=str)
    for r in bad:
        print(f"{r['verdict']}: {r['file']}:{r['line']} [{r['kind']}] planted {r['planted']!r}\n{r['wrote']}\n")
    if args.json:
        args.json.write_text(json.dumps(bad, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
