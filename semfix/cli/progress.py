"""The progress bar a long run draws on a terminal's stderr.

click's bar writes the hide-cursor escape before every redraw and the show-cursor escape
once: a log or a terminal recorder then holds hundreds of escapes for one bar. This one hides
the cursor when it starts and shows it again when it ends (on an interrupt too: the runner
ends the bar in a `finally`), and in between writes only carriage returns and text.
"""

from __future__ import annotations

import os
import time
from types import TracebackType
from typing import TextIO

# Windows consoles without VT processing would print these as text, as click also avoids.
HIDE_CURSOR, SHOW_CURSOR = ("", "") if os.name == "nt" else ("\x1b[?25l", "\x1b[?25h")


class ProgressBar:
    """`label [#####     ]  42%  105/250`, redrawn at most every `interval` seconds."""

    def __init__(self, total: int, stream: TextIO, *, label: str = "semfix", width: int = 30, interval: float = 0.1):
        self.total, self.stream, self.label, self.width, self.interval = total, stream, label, width, interval
        self.done = 0
        self._drawn = ""
        self._drawn_at = float("-inf")

    def __enter__(self) -> ProgressBar:
        self.stream.write(HIDE_CURSOR)
        self._draw(force=True)
        return self

    def update(self, steps: int = 1) -> None:
        self.done += steps
        self._draw(force=False)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._draw(force=True)
        self.stream.write(SHOW_CURSOR + "\n")
        self.stream.flush()

    def line(self) -> str:
        share = min(self.done / self.total, 1.0) if self.total else 1.0
        filled = int(share * self.width)
        bar = "#" * filled + " " * (self.width - filled)
        return f"{self.label} [{bar}] {int(share * 100):>3}%  {self.done}/{self.total}"

    def _draw(self, *, force: bool) -> None:
        """Redraw when the line changed, no more often than `interval` unless `force`d (the
        first and last lines are always drawn)."""
        now = time.monotonic()
        if not force and now - self._drawn_at < self.interval:
            return
        line = self.line()
        if line != self._drawn:
            self.stream.write("\r" + line)
            self.stream.flush()
            self._drawn, self._drawn_at = line, now
