"""Tracebacks out of a log as people paste it (Python's, pytest's and IPython's, under CI and
launcher prefixes, or only their last lines), for `semfix explain` (explain.py), which
decides what they mean. Each frame keeps the source line the traceback printed: the file may
have changed since the run, and that line is what says so."""

from __future__ import annotations

import codecs
import functools
import importlib.util
import os
import re
import textwrap
from dataclasses import dataclass, field

from semfix.explain.boxes import unbox
from semfix.explain.margins import split_margins

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$')
_EXCEPTION = re.compile(r"^(?:[\w.]+: )*(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning)): (?P<message>.*)$")
#: pytest's frames: `path:12: in function` (--tb=short), `path:12: ` and `path:12: ValueError` (--tb=long).
_PYTEST_FRAME = re.compile(r"^(?P<path>\S.*?\.pyw?):(?P<line>\d+): ?(?:in (?P<function>\S+)|[\w.]*)$")
#: pytest --tb=line: one line per failure, `path:12: ValueError: message`, where it was raised.
_PYTEST_LINE = re.compile(r"^(?P<path>\S.*?\.pyw?):(?P<line>\d+): (?P<error>[\w.]+: .*)$")
_PYTEST_ERROR = re.compile(r"^E +" + _EXCEPTION.pattern[1:])  # pytest's `E   ValueError: ...`
_DEF = re.compile(r"^\s+(?:async\s+)?def\s+(\w+)")
_MARKED = re.compile(r"^>\s+(?P<source>\S.*)$")  # pytest --tb=long: the line that raised, in the listing
_LOCAL = re.compile(r"^(?P<name>[A-Za-z_]\w*) = (?P<value>.+)$")  # pytest --tb=long: a frame's arguments, before it
_CARETS = re.compile(r"^\s*[\^~]+\s*$")  # Python 3.11's markers under a source line
#: IPython's and Jupyter's: `ValueError    Traceback (most recent call last)`, then frames as
#: `Cell In[2], line 7, in kernel(x, sems)` or `File /path/x.py:12, in f(a)`, each followed by
#: numbered source lines, the one that raised marked `---->`.
_IPYTHON_START = re.compile(r"^[A-Za-z_][\w.]*\s+Traceback \(most recent call last\)$")
_IPYTHON_FRAME = re.compile(
    r"^(?:(?P<cell>Cell In\[\d*\]), line (?P<line>\d+)|File (?P<path>.+?):(?P<file_line>\d+))"
    r"(?:, in (?P<function>[^(]+))?"
)
_IPYTHON_SKIP = re.compile(r"^\s*\(\.\.\.\)")  # lines left out of the listing
_IPYTHON_LINE = re.compile(r"^(?P<arrow>\s*-*>)?\s*(?P<number>\d+) (?P<source>.*)$")
#: Where one traceback ends and another begins: a new traceback, an exception chained to the
#: last one, pytest's `____ test_name ____` headers and `==== ... ====` rules.
_STARTS = ("Traceback (most recent call last):", "The above exception was", "During handling of the above")
_SECTION = re.compile(r"^(?:_{3,} .* _{3,}|={3,}.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colours (pytest --color=yes in CI)
#: IPython 7's (Colab's) frames: `<ipython-input-3-8a1c2f7d9e0b> in f(x)` or `/path/x.py in f(x)`, with
#: no line number: the listing's `---->` line gives it.
_IPYTHON7_FRAME = re.compile(
    r"^(?P<path><ipython-input-\d+-[0-9a-f]+>|\S.*?\.pyw?) in (?P<function>[^\s(]+)(?:\(.*\))?$"
)
#: IPython's `%xmode Plain`: `  Cell In[2], line 3 in f` or `  File /path/x.py:12 in f`, the source under it.
_PLAIN_FRAME = re.compile(
    r"^\s+(?:(?P<cell>Cell In\[\d*\]), line (?P<line>\d+)|File (?P<path>.+?):(?P<file_line>\d+))"
    r"(?: in (?P<function>\S+))?$"
)
#: pytest's summary line (`-rA`, `--tb=no`): `FAILED path::test - ValueError: message`, cut to the
#: terminal's width with `...`.
_SUMMARY = re.compile(r"^(?:FAILED|ERROR) \S+ - (?P<error>.*)$")
#: JAX's own files, on any machine: its installed packages (`site-packages/jax/`,
#: `dist-packages/jaxlib/`, ...) and its private tree (`jax/_src/`, in a checkout of JAX too).
#: Never a folder's name alone: packages keep their own code in folders named `jax`
#: (tpu-inference's `layers/jax/`, keras's `backend/jax/`).
#: Python's own library (`/usr/lib/python3.11/contextlib.py`, `C:\\Python311\\Lib\\contextlib.py`): a
#: `@contextlib.contextmanager` helper's frames pass through it.
_PYTHON = re.compile(r"[/\\](?:lib[/\\]python3\.\d+|Lib)[/\\]\w+\.py$")
_JAX = re.compile(r"[/\\](?:site|dist)-packages[/\\](?:jax|jaxlib|jax_plugins)[/\\]|[/\\]jax[/\\]_src[/\\]")


@dataclass
class Frame:
    path: str  # for an IPython cell, `Cell In[2]`
    line: int
    function: str
    source: str | None = None  # the line as the traceback printed it, stripped
    #: IPython's numbered lines around it (in a notebook cell: the cell's own lines)
    context: dict[int, str] = field(default_factory=dict)
    #: pytest's long form: the frame's arguments as it prints them (`args = (Ref<any>{...}, ...)`)
    shown: dict[str, str] = field(default_factory=dict)
    #: pytest's long form: the function's source it lists, from its def to the line that raised,
    #: and that line's number in it (an installed helper's def, where its file is not here)
    listing: tuple[str, int] | None = None

    @property
    def in_jax(self) -> bool:
        """JAX's own files (`_JAX`, and those of the JAX installed here, wherever it is) and
        Python's (`<frozen runpy>`, its library's `contextlib.py`): never where the mistake is."""
        python = self.path.startswith("<") and not self.cell or bool(_PYTHON.search(self.path))
        return self.jax or python

    @property
    def jax(self) -> bool:
        """JAX's own files alone: a kernel function whose frame follows one of them was called by
        `pallas_call`, not by the code above it."""
        here = _jax_here()
        return bool(_JAX.search(self.path)) or bool(here and self.path.startswith(here))

    @property
    def cell(self) -> bool:
        """A frame of code typed into IPython or a Jupyter notebook cell, not of a file."""
        return self.path.startswith(("Cell In[", "<ipython-input-"))


@functools.cache
def _jax_here() -> str | None:
    """The folder of the `jax` package installed here (found, not imported), with a separator."""
    try:
        spec = importlib.util.find_spec("jax")
    except (ImportError, ValueError):
        return None
    folders = list(spec.submodule_search_locations or []) if spec else []
    return os.path.join(folders[0], "") if len(folders) == 1 else None


@dataclass
class Failure:
    frames: list[Frame]
    message: str
    cut: bool = False  # the message is cut short, ending `...` (pytest's summary line)
    tb_line: bool = False  # pytest --tb=line's: one frame, where it was raised, with no source

    def begins(self, message: str) -> bool:
        """Is this failure's message (as far as it goes, when cut) the start of `message`?"""
        return message.startswith(self.message.removesuffix("...")) if self.cut else message == self.message


def decode_log(data: bytes) -> str:
    """A log's text, whatever its bytes: UTF-16 where its BOM says so (PowerShell's `>`), else
    UTF-8 (a BOM dropped). A byte that is not text (`tail -c` cutting a progress bar's
    character in two) becomes U+FFFD: a log is read, never refused, for a stray byte."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8-sig", errors="replace")


def parse_log(text: str) -> list[Failure]:
    """Every traceback in a log: its frames and its final exception line.

    Reads Python's tracebacks (an ExceptionGroup's too), pytest's (`--tb=long`, `--tb=short`,
    and its summary lines alone), IPython's (Colab's IPython 7, `%xmode Plain`) and rich's,
    under the margins CI systems, launchers and containers put before each line (margins.py).
    Each process's lines (told apart by their margins) are read on their own, so tracebacks of
    processes that wrote at once do not mix.
    """
    streams = split_margins([_ANSI.sub("", raw).rstrip() for raw in text.splitlines()])
    failures = [failure for lines in streams.values() for failure in _read_stream(unbox(lines))]
    traced = [failure.message for failure in failures if failure.frames]
    return [f for f in failures if f.frames or not any(map(f.begins, traced))]  # a logged copy of a traceback's line


def distinct(failures: list[Failure]) -> list[tuple[Failure, int]]:
    """Each failure once, with how many times the log holds it (a sweep or a retry loop prints
    one traceback hundreds of times): the same message raised through the same frames."""
    counts: dict[tuple[object, ...], tuple[Failure, int]] = {}
    for failure in failures:
        key = (failure.message, failure.cut, *((f.path, f.line, f.function, f.source) for f in failure.frames))
        first, count = counts.get(key, (failure, 0))
        counts[key] = first, count + 1
    return list(counts.values())


def _read_stream(lines: list[str]) -> list[Failure]:
    """One process's tracebacks. pytest's long form names a frame after its source, hence `last_def`.

    `python` is set inside a traceback whose last line is the exception: after Python's or
    IPython's header, or from the first frame of a tail pasted without it. An
    exception line alone (the very last line pasted) is a failure with no frames.

    An exception chained to the one before (`raise ... from err`, or raised while handling it)
    that quotes its message (`RuntimeError(f"kernel failed: {err}")`) is the same error raised
    again: not another failure. Its frames end at the wrapper's line; the cause's reach the call.
    """
    failures: list[Failure] = []
    cause: Failure | None = None  # the failure the next one is chained to

    def add(failure: Failure) -> None:
        nonlocal cause
        if not (cause and cause.frames and cause.message and cause.message in failure.message):
            failures.append(failure)
        cause = None

    frames: list[Frame] = []
    message, python, last_def = None, False, "?"
    marked: str | None = None  # pytest --tb=long: the `>` line of the listing before the frame
    shown: dict[str, str] = {}  # and the arguments printed above that listing
    listing: list[str] = []  # and the listing's lines, as printed
    reading: tuple[Frame, bool] | None = None  # the frame whose source lines come next; IPython's?
    for line in [*lines, "==="]:  # a rule, as pytest closes its report with: ends the last one
        if reading is not None and _source_line(*reading, line):
            continue
        reading = None
        if not python and (line.startswith("    ") or _MARKED.match(line) or listing and not line):
            listing.append(line)
        header = line.lstrip().startswith(_STARTS[0]) or bool(_IPYTHON_START.match(line))
        if header or line.lstrip().startswith(_STARTS) or _SECTION.match(line):
            if message is not None:
                add(Failure(frames, message))
            frames, message, python, listing = [], None, header, []
            if not header:
                cause = failures[-1] if failures and line.lstrip().startswith(_STARTS[1:]) else None
        elif frame := _FRAME.match(line):
            reading = Frame(frame["path"], int(frame["line"]), frame["function"].strip()), False
            python = True
        elif frame := _IPYTHON_FRAME.match(line):  # as for Python's frames, a tail may start here
            path, number = (frame["cell"], frame["line"]) if frame["cell"] else (frame["path"], frame["file_line"])
            reading = Frame(path, int(number), (frame["function"] or "<module>").strip()), True
            python = True
        elif frame := _PLAIN_FRAME.match(line):
            path, number = (frame["cell"], frame["line"]) if frame["cell"] else (frame["path"], frame["file_line"])
            reading = Frame(path, int(number), frame["function"] or "<module>"), False
            python = True
        elif (frame := _IPYTHON7_FRAME.match(line)) and (python or frame["path"].startswith("<ipython-input-")):
            # its line is the listing's `---->` line; a file's frame only inside a traceback (prose has `x.py in y`)
            reading = Frame(frame["path"], 0, frame["function"]), True
            python = True
        elif frame := _PYTEST_FRAME.match(line):
            source = None if frame["function"] else marked  # the long form lists the source first
            function = frame["function"] or last_def
            reading = (
                Frame(frame["path"], int(frame["line"]), function, source, shown=shown, listing=_listed(listing)),
                False,
            )
            last_def, marked, shown, listing = "?", None, {}, []
        elif (definition := _DEF.match(line)) and not python:
            last_def = definition[1]
        elif (local := _LOCAL.match(line)) and not python:
            shown[local["name"]] = local["value"]
        elif (pointed := _MARKED.match(line)) and not python:
            marked = pointed["source"].strip()
        elif (error := _PYTEST_ERROR.match(line)) and message is None:
            message = error["message"].strip()
        elif (only := _PYTEST_LINE.match(line)) and not python and (error := _EXCEPTION.match(only["error"])):
            raised = Frame(only["path"], int(only["line"]), "?")
            add(Failure([raised], message or error["message"].strip(), tb_line=True))
            frames, message = [], None
        elif (summary := _SUMMARY.match(line)) and (error := _EXCEPTION.match(summary["error"])):
            add(Failure([], error["message"].strip(), cut=error["message"].endswith("...")))
        elif (error := _EXCEPTION.match(line)) and (python or message is None and not frames):
            add(Failure(frames, error["message"].strip()))
            frames, python = [], False
        if reading is not None:
            frames.append(reading[0])
    return failures


def _listed(lines: list[str]) -> tuple[str, int] | None:
    """pytest's listing of a function (each line after a 4-column margin, the one that raised
    marked `>`; Python's carets under it dropped): its source, and the number of that line in it."""
    lines = [line for line in lines if not _CARETS.match(line[4:])]
    marked = next((number for number, line in enumerate(lines, 1) if line.startswith(">")), None)
    return None if marked is None else (textwrap.dedent("\n".join(line[4:] for line in lines)) + "\n", marked)


def _source_line(frame: Frame, ipython: bool, line: str) -> bool:
    """Whether `line` belongs to what the traceback printed under `frame`, which records it: the
    source line and Python's carets under it, or IPython's numbered lines."""
    if ipython:
        numbered = _IPYTHON_LINE.match(line)
        if _IPYTHON_SKIP.match(line):
            return True
        if numbered is None or not line.startswith(" ") and numbered["arrow"] is None:
            return not line.strip() and not frame.context  # a blank line before the listing
        frame.context[int(numbered["number"])] = numbered["source"].strip()
        if numbered["arrow"]:
            frame.source, frame.line = numbered["source"].strip(), frame.line or int(numbered["number"])
        return True
    if (
        frame.source is None
        and line.startswith(" ")
        and line.strip()
        and not _FRAME.match(line)
        and not _PLAIN_FRAME.match(line)
    ):
        frame.source = line.strip()
        return True
    return frame.source is not None and bool(_CARETS.match(line))
