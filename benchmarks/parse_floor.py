"""The parse floor: read every .py file under the folders and `ast.parse` it, nothing else.

    python benchmarks/parse_floor.py [--compile] -j 2 FOLDER...

Timed by run.py exactly as semfix is (a fresh interpreter, the same number of processes), it
is what any tool that looks at every file's syntax tree pays at least: semfix's time over it
is the cost of semfix's own work. With `--compile` it is the floor of a proven fix: each file
is also compiled, as semfix compiles every text it writes, so what is left over is the
analysis, the edits and the rest of the proof.
"""

from __future__ import annotations

import argparse
import ast
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def parse(path: Path, *, proven: bool = False) -> None:
    try:
        data = path.read_bytes()
        ast.parse(data)
        if proven:
            compile(data, str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError):  # semfix reports these; reading them is the cost
        pass


def prove(path: Path) -> None:
    parse(path, proven=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--compile", action="store_true", help="also compile each file: a proven fix's floor")
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    files = sorted(p for folder in args.folders for p in folder.rglob("*.py"))
    work = prove if args.compile else parse
    if args.jobs == 1:
        for path in files:
            work(path)
        return
    with ProcessPoolExecutor(args.jobs) as pool:
        list(pool.map(work, files, chunksize=max(1, len(files) // (args.jobs * 16))))


if __name__ == "__main__":
    main()
