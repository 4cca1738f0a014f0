"""The parse floor: read every .py file under the folders and `ast.parse` it, nothing else.

    python benchmarks/parse_floor.py -j 2 FOLDER...

Timed by run.py exactly as semfix is (a fresh interpreter, the same number of processes), it
is what any tool that looks at every file's syntax tree pays at least: semfix's time over it
is the cost of semfix's own work.
"""

from __future__ import annotations

import argparse
import ast
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path


def parse(path: Path) -> None:
    try:
        ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):  # semfix reports these; reading them is the cost
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args()
    files = sorted(p for folder in args.folders for p in folder.rglob("*.py"))
    if args.jobs == 1:
        for path in files:
            parse(path)
        return
    with ProcessPoolExecutor(args.jobs) as pool:
        list(pool.map(parse, files, chunksize=max(1, len(files) // (args.jobs * 16))))


if __name__ == "__main__":
    main()
