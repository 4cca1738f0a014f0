"""Puts before each line of a captured log what a CI system or launcher puts before it.

    python tests/tracebacks/prefixes.py TOOL LOG [LOG ...]

prints the LOGs (real ones, made by capture.py and capture_formats.py) as TOOL shows them;
with several, as one process each (a pod, a task, a build step), interleaved line by line
where TOOL shows processes at once, one after the other where it shows one job. The clocks
start at 2026-12-04T05:20:11Z and tick 37 ms a line. tests/test_explain_logs.py reads
these. What each tool writes:

- `kubectl logs --prefix` (a selector or `--all-containers`: several pods at once):
  `[pod/<pod>/<container>] `;
- GitLab Runner with `FF_TIMESTAMPS`, the raw job log: the time in RFC 3339, UTC, to the
  microsecond, then the stream's number in two hex digits and `O` (output) or `E` (errors),
  then a space (`+` before it on a line continued from the one before: none here);
- Buildkite, the raw job log: the escape `ESC _bk;t=<milliseconds since the epoch> BEL`;
- Slurm's `srun -l` (`--label`): the task's number, right-aligned to the widest, and `: `;
- docker BuildKit with `--progress=plain`: `#<step> <seconds since the step began> `, three
  decimals.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).parent
START = datetime(2026, 12, 4, 5, 20, 11, tzinfo=timezone.utc)
TICK = timedelta(milliseconds=37)

Margin = Callable[[int, int, int], str]  # (the process's index, how many, the line's index) -> margin
TOOLS: dict[str, tuple[Margin, bool]] = {  # tool: (its margin, whether processes interleave)
    "kubectl": (lambda p, n, i: f"[pod/trainer-{p}/main] ", True),
    "gitlab": (lambda p, n, i: f"{(START + i * TICK).strftime('%Y-%m-%dT%H:%M:%S.%fZ')} 01O ", False),
    "buildkite": (lambda p, n, i: f"\x1b_bk;t={int((START + i * TICK).timestamp() * 1000)}\x07", False),
    "srun": (lambda p, n, i: f"{p:>{len(str(n - 1))}}: ", True),
    "buildkit": (lambda p, n, i: f"#{9 + p} {0.512 + i * TICK.total_seconds():.3f} ", True),
}


def prefixed(tool: str, *logs: str) -> str:
    """The logs (names of files here) as `tool` shows them."""
    margin, interleaved = TOOLS[tool]
    streams = [(HERE / log).read_text().splitlines() for log in logs]
    if interleaved:
        order = [(p, i) for i in range(max(map(len, streams))) for p in range(len(streams)) if i < len(streams[p])]
    else:
        order = [(p, i) for p, stream in enumerate(streams) for i in range(len(stream))]
    return "".join(f"{margin(p, len(logs), n)}{streams[p][i]}\n" for n, (p, i) in enumerate(order))


if __name__ == "__main__":
    sys.stdout.write(prefixed(sys.argv[1], *sys.argv[2:]))
