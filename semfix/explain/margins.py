"""What a log puts before each line of a traceback, learnt from the log itself, for logs.py.

CI systems, launchers and containers put a margin before every line a program writes: a
timestamp (GitHub Actions, GitLab), an escape sequence (Buildkite), a process's label
(torchrun's `[rank0]: `, `srun -l`'s `0: `, a Ray worker's, kubectl's `[pod/<pod>/<c>] `,
docker compose's service, a BuildKit step's `#9 12.3 `), Python's own `|` gutter around an
ExceptionGroup's sub-tracebacks. No list of them can be complete, so none is kept: a line that
must begin a traceback at its first column (its header, pytest's section rules, a frame)
shows where the margin ends, and every line whose start has the same shape is read without
it. The shape is the margin's text, where numbers that change from line to line (times,
dates, clocks: digits joined by `.`, `:` or `-`, or eight digits and more) are any such
number; the rest (a pod's or a rank's name, a task's number) must be the same, and tells
the processes of one log apart, so that tracebacks written at once do not mix.
"""

from __future__ import annotations

import re

#: Where a traceback starts on a line (all before it is the margin): Python's header (and an
#: ExceptionGroup's), IPython's, rich's box, pytest's section rules; or a frame of Python's
#: (its two spaces are its own), for a tail pasted without its header.
_ANCHOR = re.compile(
    r"^(?P<margin>.*?)(?:Traceback \(most recent call last\):$|[A-Za-z_][\w.]*\s+Traceback \(most recent call last\)$"
    r"|╭─+ Traceback \(most recent call last\) ─+╮$|_{3,} \S.* _{3,}$|={3,} .* ={3,}$)"
    r'|^(?P<framed>.*)  File "[^"]+", line \d+, in \S+$'
)
_HINT = re.compile(r'Traceback \(most recent call last\)|  File "|_{3} |={3} ')  # the anchor's cheap sieve
#: The numbers in a margin that change from line to line.
_CHANGING = re.compile(r"\d+(?:[.:-]\d+)+|\d{8,}")


def _shape(margin: str) -> str:
    """The margin as a pattern for the start of a line: its changing numbers as any such number."""
    parts, end = [], 0
    for number in _CHANGING.finditer(margin):
        parts += [re.escape(margin[end : number.start()]), r"\d+(?:[.:-]\d+)*"]
        end = number.end()
    return "".join(parts) + re.escape(margin[end:])


def split_margins(lines: list[str]) -> dict[str, list[str]]:
    """The log's lines by the shape of their margin, each without it (the lines of no margin
    learnt: under ""). A line is read under the longest shape its start has."""
    anchors = [m for line in set(lines) if _HINT.search(line) and (m := _ANCHOR.match(line))]  # each text once
    margins = {m["margin"] if m["margin"] is not None else m["framed"] for m in anchors}
    shapes = [re.compile(shape) for shape in {_shape(margin) for margin in margins if margin.strip()}]
    streams: dict[str, list[str]] = {}
    for line in lines:
        matches = [(match.end(), shape.pattern) for shape in shapes if (match := shape.match(line))]
        end, key = max(matches, default=(0, ""))
        streams.setdefault(key, []).append(line[end:])
    return streams
