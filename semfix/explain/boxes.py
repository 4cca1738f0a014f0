"""rich's tracebacks (`rich.traceback.install()`) as Python prints them, for logs.py to read.

rich draws a traceback in a box as wide as the terminal (80 columns where its output is no
terminal, as in CI): each frame as `path:line in function`, a path longer than the box wrapped
onto the next rows (at a space, or at the edge), then the numbered lines around it, the one that raised marked `❱` and
their indentation drawn as `│` guides. A line longer than the box is cut at its edge: such a
source line is left out (the frame's line number stands alone), never compared cut.
"""

from __future__ import annotations

import re

_TOP = re.compile(r"^╭─+ Traceback \(most recent call last\) ─+╮$")
_ROW = re.compile(r"^│ (?P<text>.*) │$")
_FRAME = re.compile(r"^(?P<path>.+):(?P<line>\d+) in (?P<function>\S+)$")
_BARE = re.compile(r"^in \S+:\d+$")  # a frame of no file (`<string>`, frozen modules): never the user's
_LISTED = re.compile(r"^(?P<mark>❱)? *\d+(?: (?P<code>.*))?$")


def unbox(lines: list[str]) -> list[str]:
    """The lines, with each of rich's boxed tracebacks in Python's form."""
    out: list[str] = []
    width: int | None = None  # inside a box: the width of its rows' text
    header = ""  # a frame's `path:line in function`, as far as read (it may wrap)
    for line in lines:
        if width is None:
            top = _TOP.match(line)
            width = len(line) - 4 if top else None
            out.append("Traceback (most recent call last):" if top else line)
            continue
        row = _ROW.match(line)
        if row is None:  # the box's bottom, or the box broken off
            width, header = None, ""
            if not line.startswith("╰"):
                out.append(line)
            continue
        text = row["text"].rstrip()
        listed = None if header else _LISTED.match(text)
        if not text or _BARE.match(text):
            header = ""
        elif listed:
            if listed["mark"] and len(text) < width:
                out.append("    " + (listed["code"] or "").lstrip(" │"))
        elif frame := _FRAME.match(header := header + text):
            out.append(f'  File "{frame["path"]}", line {frame["line"]}, in {frame["function"]}')
            header = ""
        elif len(text) < width:  # wrapped at a space; a word too long for a row is cut at the edge
            header += " "
    return out
