"""Tracebacks out of a log as people paste it (Python's and pytest's, under CI and launcher
prefixes), for `semfix explain` (explain.py), which decides what they mean."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$')
_EXCEPTION = re.compile(r"^(?:[\w.]+: )*(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.*)$")
#: pytest's frames: `path:12: in function` (--tb=short), `path:12: ` and `path:12: ValueError` (--tb=long).
_PYTEST_FRAME = re.compile(r"^(?P<path>\S.*?\.pyw?):(?P<line>\d+): ?(?:in (?P<function>\S+)|[\w.]*)$")
_PYTEST_ERROR = re.compile(r"^E +" + _EXCEPTION.pattern[1:])  # pytest's `E   ValueError: ...`
_DEF = re.compile(r"^\s+(?:async\s+)?def\s+(\w+)")
#: Where one traceback ends and another begins: a new traceback, an exception chained to the
#: last one, pytest's `____ test_name ____` headers and `==== ... ====` rules.
_STARTS = ("Traceback (most recent call last):", "The above exception was", "During handling of the above")
_SECTION = re.compile(r"^(?:_{3,} .* _{3,}|={3,}.*)$")
#: What CI systems and launchers put before each line: GitHub Actions' timestamp, torchrun's
#: `[rank0]: `, Open MPI's `[1,0]<stderr>:`, in any order and number.
_PREFIX = re.compile(
    r"^(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z |(?P<rank>\[rank\d+\]: ?|\[\d+,\d+\]<std(?:out|err)>: ?))"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colours (pytest --color=yes in CI)
_JAX = re.compile(r"[/\\](jax|jaxlib)[/\\]")


@dataclass
class Frame:
    path: str
    line: int
    function: str

    @property
    def in_jax(self) -> bool:
        """JAX's own files (and `<frozen runpy>`-like ones): never where the mistake is."""
        return bool(_JAX.search(self.path)) or self.path.startswith("<")


@dataclass
class Failure:
    frames: list[Frame]
    message: str


def parse_log(text: str) -> list[Failure]:
    """Every traceback in a log: its frames and its final exception line.

    Reads Python's tracebacks and pytest's (`--tb=long`, `--tb=short`), under the prefixes CI
    systems and launchers put before each line. Each process's lines (told apart by their rank
    prefix) are read on their own, so tracebacks of processes that wrote at once do not mix.
    """
    streams: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line, stream = _ANSI.sub("", raw), ""
        while match := _PREFIX.match(line):
            stream, line = (match["rank"] or stream).strip(), line[match.end() :]
        streams.setdefault(stream, []).append(line.rstrip())
    return [failure for lines in streams.values() for failure in _read_stream(lines)]


def _read_stream(lines: list[str]) -> list[Failure]:
    """One process's tracebacks. pytest's long form names a frame after its source, hence `last_def`."""
    failures: list[Failure] = []
    frames: list[Frame] = []
    message, python, last_def = None, False, "?"
    for line in [*lines, "==="]:  # a rule, as pytest closes its report with: ends the last one
        if line.lstrip().startswith(_STARTS) or _SECTION.match(line):
            if message is not None:
                failures.append(Failure(frames, message))
            frames, message, python = [], None, line.lstrip().startswith(_STARTS[0])
        elif frame := _FRAME.match(line):
            frames.append(Frame(frame["path"], int(frame["line"]), frame["function"].strip()))
        elif frame := _PYTEST_FRAME.match(line):
            frames.append(Frame(frame["path"], int(frame["line"]), frame["function"] or last_def))
            last_def = "?"
        elif (definition := _DEF.match(line)) and not python:
            last_def = definition[1]
        elif (error := _PYTEST_ERROR.match(line)) and message is None:
            message = error["message"].strip()
        elif python and (error := _EXCEPTION.match(line)):
            failures.append(Failure(frames, error["message"].strip()))
            frames, python = [], False
    return failures
