"""Latency of `semfix server` from a change to its diagnostics, on a generated 2,000-line kernel.

A real LSP client (tests/lsp_client.py, pygls's) starts `python -m semfix server`, opens the
file, and then sends changes one at a time, each a new line at the end of a kernel with
planted bugs, timing each `textDocument/didChange` to the `publishDiagnostics` of its version.
The first changes warm the server up and are not counted. Prints the median and p90.

    python benchmarks/server_latency.py [--lines 2000] [--changes 50] [--warmup 10]

Target (issue 23): under 50 ms median after warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from corpus import kernel_module  # noqa: E402

from tests.lsp_client import session  # noqa: E402


async def measure(lines: int, changes: int, warmup: int) -> tuple[list[float], int, int]:
    """Seconds from each counted change to its diagnostics; the file's lines and findings."""
    module = kernel_module(random.Random(23), lines, bug_rate=0.1)
    text = module.planted
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.py"
        path.write_text(text)
        uri = path.as_uri()
        async with session(Path(folder)) as client:
            client.open(uri, text)
            found = len(await client.diagnostics(uri))
            times = []
            for index in range(warmup + changes):
                text = f"{text}x_{index} = {index}\n"
                started = time.perf_counter()
                version = client.change(uri, text)
                await client.diagnostics(uri, version)
                if index >= warmup:
                    times.append(time.perf_counter() - started)
    return times, text.count("\n"), found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    times, lines, found = asyncio.run(measure(args.lines, args.changes, args.warmup))
    ms = sorted(t * 1000 for t in times)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(f"{lines} lines, {found} findings, {len(ms)} changes after {args.warmup} to warm up:")
    print(f"change -> publishDiagnostics: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, "
          f"min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms")


if __name__ == "__main__":
    main()
