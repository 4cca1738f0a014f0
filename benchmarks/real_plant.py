"""Plant each mistake at each site of the real trees, one at a time, and count semfix's verdicts.

    python benchmarks/real_plant.py --work /tmp/plant [--sample N --seed S] [--jobs 2] [--json wrong.json]
    python benchmarks/real_plant.py --trees /tmp/trees/t_w1 /tmp/trees/t_w2 [--run]

The wheels (`WHEELS`) are fetched with pip into the work folder (benchmarks/real.py) and never
committed; `--trees` judges unpacked trees instead, each folder one tree. `--run` judges each
file as a run of its tree would (what its other modules give it: a launch of its kernel,
`semfix.api.launched_by_run`), else alone, as `fix_source` sees it. Prints a table of verdicts
per tree and per kind of plant (benchmarks/plant.py says what each means), the plants left
unsafe in files that launch none of their kernels, then every wrong rewrite, which `--json`
also writes. A case is reproduced by its file, kind and offset; a seed reproduces a sample.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import replace
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from plant import KINDS, SETTINGS, VERDICTS, baseline, judge, plants
from real import fetch

from semfix.catalog import may_contain_calls

#: A file that spells none of these launches none of its kernels itself: its plants that end
#: "unsafe" are unsafe for a launch elsewhere (the figure issue 43 counts before and after `--run`).
_LAUNCHERS = re.compile(rb"pallas_call|\bkernel\s*\(|run_scoped|core_map|emit_pipeline")

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


def run_file(
    job: tuple[Path, str, frozenset[tuple[str, int]], dict[str, object]],
) -> tuple[str, list[dict[str, object]]]:
    """Judge the chosen plants of one file, told what its run gives it (`run_settings`)."""
    source, name, chosen, given = job
    data = (source / name).read_bytes()
    settings = {unsafe: replace(SETTINGS[unsafe], **given) for unsafe in SETTINGS} if given else SETTINGS
    expected, findings = baseline(data, settings)
    records = []
    for plant in plants(data):
        if (plant.kind, plant.offset) in chosen:
            v = judge(plant, expected, findings, settings)
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
                    "launched_elsewhere": not _LAUNCHERS.search(data),
                }
            )
    return name, records


def run_settings(source: Path) -> dict[str, dict[str, object]]:
    """What a run of each tree (a folder under `source`) tells each of its files, by name: the
    launches of its kernels elsewhere, and what it reads through its other modules."""
    from semfix.api import launched_by_run, read_through_run, reads_through_run  # only for --run

    found: dict[str, dict[str, object]] = {}
    for tree in sorted(p for p in source.iterdir() if p.is_dir()):
        sources = {path: path.read_bytes() for path in sorted(tree.rglob("*.py"))}
        kernels = [path for path, data in sources.items() if may_contain_calls(data, through_run=True)]
        for path, launched in launched_by_run(sources, kernels).items():
            found.setdefault(str(path.relative_to(source)), {})["launched_by_run"] = launched
        for path, through in read_through_run(sources, reads_through_run(sources, kernels)).items():
            found.setdefault(str(path.relative_to(source)), {})["read_through"] = through
    return found


def judge_all(
    source: Path,
    chosen: list[Case],
    jobs: int,
    log: Path | None = None,
    given: dict[str, dict[str, object]] | None = None,
) -> list[dict[str, object]]:
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
    tasks = [(source, name, frozenset(by_file[name]), (given or {}).get(name, {})) for name in work]
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
    parser.add_argument("--trees", type=Path, nargs="+", help="unpacked trees to judge instead of the wheels")
    parser.add_argument("--run", action="store_true", help="judge each file as a run of its tree would")
    parser.add_argument("--elsewhere", action="store_true", help="only files that launch none of their kernels")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="semfix-plant-"))
    if args.trees:  # hard links under one folder, a tree each (its name the folder's)
        source = work / "trees"
        shutil.rmtree(source, ignore_errors=True)
        for tree in args.trees:
            shutil.copytree(tree, source / tree.name, copy_function=os.link)
    else:
        source = fetch(work, WHEELS)
    given = run_settings(source) if args.run else {}
    every = [case for case in cases(source) if case[1] in args.kinds.split(",")]
    if args.elsewhere:
        every = [case for case in every if not _LAUNCHERS.search((source / case[0]).read_bytes())]
    chosen = random.Random(args.seed).sample(every, min(args.sample, len(every))) if args.sample else every
    started = time.perf_counter()
    records = judge_all(source, chosen, args.jobs, args.log, given)
    print(f"{len(records)} of {len(every)} plants, seed {args.seed}, {time.perf_counter() - started:.0f} s")
    print(table(records, "tree"), "\n")
    print(table(records, "kind"), "\n")
    elsewhere = sum(r["verdict"] == "unsafe" and bool(r["launched_elsewhere"]) for r in records)
    linked = sum(len(g.get("launched_by_run", ())) for g in given.values())  # type: ignore[arg-type]
    reading = sum("read_through" in g for g in given.values())
    print(f"unsafe only, in files that launch none of their kernels: {elsewhere}")
    print(f"the run links {linked} launches to another module, and {reading} files read through another\n")
    bad = sorted((r for r in records if r["verdict"] in ("wrong-safe", "wrong-unsafe", "error")), key=str)
    for r in bad:
        print(f"{r['verdict']}: {r['file']}:{r['line']} [{r['kind']}] planted {r['planted']!r}\n{r['wrote']}\n")
    if args.json:
        args.json.write_text(json.dumps(bad, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
