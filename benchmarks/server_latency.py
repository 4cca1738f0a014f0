"""Latency of `semfix server` from a change to its diagnostics, on a generated 2,000-line kernel.

A real LSP client (tests/lsp_client.py, pygls's) starts `python -m semfix server`, opens the
file, and then sends changes one at a time, each a comment typed at the end of a line in a
function's body of a kernel with planted bugs (an incremental change, as editors send them;
`--new-lines`: a new comment line after one in a body, as after Enter; `--at-end`: a new line
at the end of the file), timing each `textDocument/didChange`
to the `publishDiagnostics` of its version. `--whole` turns the server's incremental check off
(`SEMFIX_WHOLE_CHECKS`): every change is checked whole, as before issue 32. The first changes
warm the server up and are not counted. Prints the median and p90, and beside them the same check in this process
(`fix_source(..., apply_fixes=False)`), so that what the server adds can be told from the analysis.

    python benchmarks/server_latency.py [--lines 2000] [--bug-rate 0.1] [--changes 50] [--warmup 10]
        [--new-lines | --at-end] [--whole]
                                        [--whole] [--at-end]
    python benchmarks/server_latency.py --actions [--lines 2000] [--changes 20]

`--actions` times code actions instead, for a client that resolves them (`codeAction/resolve`,
as Neovim 0.10 and VS Code do): each listed action's resolve, a quick fix's against fix all's,
over `--changes` fixable diagnostics.

`--bug-rate` is the share of semaphore arguments planted as bugs: 0.1 gives the file about 50
findings, every one checked on each change; at 0 the skim clears the file unparsed.

Target (issue 23): under 50 ms median after warm-up; issue 32: under 20 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from corpus import kernel_module  # noqa: E402  (after the path set-up above)
from lsprotocol import types as lsp  # noqa: E402

from semfix.api import fix_source  # noqa: E402
from tests.lsp_client import RESOLVING, session  # noqa: E402


def type_at(client: object, uri: str, line: int, column: int, text: str) -> int:
    """Type `text` at (line, column), 0-based, as an editor sends a keystroke; the new version."""
    versions = client.versions  # type: ignore[attr-defined]
    versions[uri] += 1
    identifier = lsp.VersionedTextDocumentIdentifier(uri=uri, version=versions[uri])
    where = lsp.Range(lsp.Position(line, column), lsp.Position(line, column))
    change = lsp.TextDocumentContentChangePartial(range=where, text=text)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(identifier, [change]))  # type: ignore[attr-defined]
    return int(versions[uri])


async def measure(
    lines: int, bug_rate: float, changes: int, warmup: int, at_end: bool = False, new_lines: bool = False
) -> tuple[list[float], int, int]:
    """Seconds from each counted change to its diagnostics; the file's lines and findings."""
    module = kernel_module(random.Random(23), lines, bug_rate=bug_rate)
    text = module.planted
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.py"
        path.write_text(text)
        uri = path.as_uri()
        async with session(Path(folder)) as client:
            client.open(uri, text)
            found = len(await client.diagnostics(uri))
            times = []
            end = text.count("\n")
            rows = text.split("\n")
            body = [i for i, row in enumerate(rows) if row.startswith("    ") and not row.rstrip().endswith("\\")]
            for index in range(warmup + changes):
                started = time.perf_counter()
                if at_end:
                    version = client.insert(uri, end + index, f"x_{index} = {index}\n")
                elif new_lines:  # a line of its own after one in a body, as after Enter
                    row = body[(index * 37) % len(body)]
                    indent = rows[row][: len(rows[row]) - len(rows[row].lstrip())]
                    version = client.insert(uri, row + 1, f"{indent}# {index}\n")
                    rows.insert(row + 1, f"{indent}# {index}")
                    body = sorted([i + (i > row) for i in body] + [row + 1])
                else:
                    row = body[(index * 37) % len(body)]
                    version = type_at(client, uri, row, len(rows[row]), f"  # {index}")
                    rows[row] += f"  # {index}"
                await client.diagnostics(uri, version)
                if index >= warmup:
                    times.append(time.perf_counter() - started)
    return times, len(rows) + (warmup + changes if at_end else 0), found


async def measure_actions(lines: int, bug_rate: float, runs: int) -> dict[str, list[float]]:
    """Seconds each kind of action takes to resolve, by the start of its title."""
    text = kernel_module(random.Random(23), lines, bug_rate=bug_rate).planted
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "kernel.py"
        path.write_text(text)
        uri = path.as_uri()
        async with session(Path(folder), capabilities=RESOLVING) as client:
            client.open(uri, text)
            fixable = [d for d in await client.diagnostics(uri) if d.message.endswith("safe fix]")]
            for index in range(runs + 1):  # the first warms up
                for action in await client.actions(uri, [fixable[index % len(fixable)]]):
                    started = time.perf_counter()
                    await asyncio.wait_for(client.code_action_resolve_async(action), 60)
                    kind = action.title.split(": ")[1].split(" ")[0]  # replace, silence, fix
                    times.setdefault(kind, []).append(time.perf_counter() - started) if index else None
    return times


def in_process(lines: int, bug_rate: float, runs: int) -> list[float]:
    """Seconds the check alone takes on the same text, in this process."""
    text = kernel_module(random.Random(23), lines, bug_rate=bug_rate).planted
    fix_source(text, apply_fixes=False)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fix_source(text, apply_fixes=False)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--bug-rate", type=float, default=0.1)
    parser.add_argument("--changes", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--actions", action="store_true", help="time codeAction/resolve instead")
    parser.add_argument("--whole", action="store_true", help="the server checks every change whole")
    parser.add_argument("--at-end", action="store_true", help="each change a new line at the end of the file")
    parser.add_argument("--new-lines", action="store_true", help="each change a new line in a function body")
    args = parser.parse_args()
    if args.whole:
        os.environ["SEMFIX_WHOLE_CHECKS"] = "1"  # read by the server's session, started below
    if args.actions:
        for kind, seconds in asyncio.run(measure_actions(args.lines, args.bug_rate, args.changes)).items():
            ms = sorted(t * 1000 for t in seconds)
            print(
                f"resolve {kind}: median {statistics.median(ms):.1f} ms, min {ms[0]:.1f}, max {ms[-1]:.1f} ({len(ms)})"
            )
        return
    times, lines, found = asyncio.run(
        measure(args.lines, args.bug_rate, args.changes, args.warmup, args.at_end, args.new_lines)
    )
    ms = sorted(t * 1000 for t in times)
    p90 = ms[min(len(ms) - 1, int(len(ms) * 0.9))]
    print(f"{lines} lines, {found} findings, {len(ms)} changes after {args.warmup} to warm up:")
    print(
        f"change -> publishDiagnostics: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, "
        f"min {ms[0]:.1f} ms, max {ms[-1]:.1f} ms"
    )
    alone = sorted(t * 1000 for t in in_process(args.lines, args.bug_rate, args.changes))
    print(f"the check alone, in process:  median {statistics.median(alone):.1f} ms, min {alone[0]:.1f} ms")


if __name__ == "__main__":
    main()
