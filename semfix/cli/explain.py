"""`semfix explain`: from a JAX traceback to the argument that caused it, and its fix.

This module reads what the error says and finds the file it points into; which arguments are
to blame and which fixes to make is decided below the CLI (semfix/engine/blame.py).

A log is untrusted text (a CI log of someone else's pull request): only files under `--root`
are read for a fix or written. Reading the log is logs.py's.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from semfix.api import Blame, SafetyError, blame, chosen_settings, fix_source
from semfix.cli.files import EXCLUDED_DIRS, FileError, read_source
from semfix.cli.logs import Failure, Frame
from semfix.errors import SourceError

#: Each error JAX raises for these mistakes, and what it means. `copy` is JAX's generic Ref
#: check: the Mosaic GPU copies check source, destination, barrier in turn.
_KNOWN = {
    "value": (r"Cannot (?P<verb>\w+) on a non-semaphore Ref: (?P<aval>.+)",
              "JAX refused to {verb}: the semaphore argument was {aval}, not the Ref."),
    "shape": (r"Cannot (?P<verb>\w+) on a non-\(\)-shaped semaphore: (?P<shape>.+)",
              "JAX needs one semaphore, but got a Ref of shape {shape}: index one with `.at[i]`."),
    "dma": (r"DMA source/destination/semaphore arguments must be Refs",
            "A DMA was given a value where it needs a Ref (source, destination or semaphore)."),
    "dma_send": (r"DMA source semaphore must be a Ref", "A remote DMA was given a value where it needs its send semaphore Ref."),
    "dma_wait": (r"Expected the destination semaphore to be a reference", "A DMA wait was given a value where it needs the semaphore Ref."),
    "copy": (r"Can only call `(?P<verb>copy_gmem_to_smem|copy_smem_to_gmem)` on a `Ref`:? ?(?P<aval>.*)",
             "A Mosaic GPU copy (`{verb}`) was given {aval} where it needs a Ref (source, destination or barrier)."),
    "barrier": (r"Can only call `(?P<verb>barrier_\w+)` on a `Ref`:? ?(?P<aval>.*)", "`{verb}` was given {aval}, not the barrier Ref."),
}
#: Which parameters each DMA error is about. `.start()` checks source, destination and the
#: semaphore the copy signals on in one test, and a remote copy's send semaphore in its own;
#: `.wait()` checks the semaphore it waits on (a remote copy waits on both, send first).
_SUSPECTS = {
    "dma": frozenset({"src_ref", "dst_ref", "sem", "recv_sem"}),
    "dma_send": frozenset({"send_sem"}),
    "dma_wait": frozenset({"sem", "send_sem", "recv_sem"}),
    "copy": frozenset({"src", "dst", "barrier"}),
}
_AVALS = {
    "semaphore": "the count read out of a regular semaphore Ref",
    "dma_sem": "the count read out of a DMA semaphore Ref",
    "barrier_semaphore": "the count read out of a barrier semaphore Ref",
    "barrier": "the value read out of a Mosaic GPU barrier Ref",
}
#: How many folders the search for a traceback's file visits before it gives up (see `locate`).
SEARCH_LIMIT = 10_000


@dataclass
class Explanation:
    """What one traceback says, where it points, and the fix (if semfix can make one)."""

    failure: Failure
    kind: str | None = None
    lines: list[str] = field(default_factory=list)
    path: Path | None = None
    name: Path | None = None  # the file relative to --root: for messages and diff headers
    old: bytes = b""
    blame: Blame = field(default_factory=Blame)  # the lines after the first two, the fixes


def _describe_aval(aval: str) -> str:
    """JAX's abstract value in words: what it was read out of, and whether it is a whole array."""
    aval = re.sub(r"^\w*Tracer\((.*)\)$", r"\1", aval.strip().rstrip("."))  # JitTracer(barrier[]): what it traces
    match = re.fullmatch(r"(?P<name>\w+)\[(?P<shape>[^\]]*)\]", aval)
    if match is None or match["name"] not in _AVALS:
        return f"the value `{aval}`" if aval else "a value"
    shape = f", of shape ({match['shape']},): a read of a whole array of them" if match["shape"] else ""
    return _AVALS[match["name"]] + shape


def locate(path: str, root: Path) -> tuple[list[Path], bool]:
    """The files on this machine `path` may name, and whether the search stopped early.

    The path itself (relative ones under `root`), else the files under `root` with the longest
    matching path suffix: one, several equally good, or none. The search visits at most
    SEARCH_LIMIT folders, so that a log pasted at `/` does not walk the whole machine. The
    caller checks the file is under `root`.
    """
    direct = root / path
    if direct.is_file():
        return [direct], False
    wanted = Path(path.replace("\\", "/")).parts
    best: list[Path] = []
    best_score = 0
    for visited, (folder, dirs, files) in enumerate(os.walk(root)):
        if visited == SEARCH_LIMIT:
            return best, True
        dirs[:] = [d for d in dirs if not _skipped(folder, d)]
        if wanted[-1] not in files:
            continue
        candidate = Path(folder, wanted[-1])
        parts = candidate.resolve().parts
        score = 0
        while score < min(len(parts), len(wanted)) and parts[-1 - score] == wanted[-1 - score]:
            score += 1
        if score > best_score:
            best, best_score = [candidate], score
        elif score == best_score:
            best.append(candidate)
    return best, False


def _skipped(folder: str, name: str) -> bool:
    """Folders a traceback of the user's own code does not point into: tools' caches, hidden
    folders, installed packages, virtual environments (whatever their name), and the kernel's."""
    full = os.path.join(folder, name)
    return (
        name in EXCLUDED_DIRS
        or name.startswith(".")
        or name == "dist-packages"
        or full in ("/proc", "/sys", "/dev")
        or os.path.isfile(os.path.join(full, "pyvenv.cfg"))
    )


def _not_found(frame: Frame, root: Path, found: list[Path], stopped: bool) -> str | None:
    """Why the frame's file cannot be chosen, if it cannot: none, several, or a search cut short."""
    names = ", ".join(sorted(os.path.relpath(p, root) for p in found))
    if stopped:
        so_far = f" (the best so far: {names})" if found else ""
        return (
            f"Cannot say where {frame.path} is: the search stopped early, after {SEARCH_LIMIT} folders"
            f" under {os.path.abspath(root)}{so_far}; pass --root closer to the code."
        )
    if len(found) > 1:
        return f"{frame.path} is ambiguous: {names} match its path equally well; pass --root to choose."
    if not found:
        return f"Cannot find {frame.path} here (looked under {root}, by the longest matching path suffix)."
    return None


def explain(failure: Failure, root: Path) -> Explanation:
    result = Explanation(failure)
    for kind, (pattern, words) in _KNOWN.items():
        if match := re.search(pattern, failure.message):
            break
    else:
        return result
    result.kind = kind
    result.lines.append(words.format(**match.groupdict() | {"aval": _describe_aval(match.groupdict().get("aval") or "")}))
    frame = next((f for f in reversed(failure.frames) if not f.in_jax), None)
    if frame is None:
        result.lines.append("No frame outside JAX's own files: run with JAX_TRACEBACK_FILTERING=off and try again.")
        return result
    found, stopped = locate(frame.path, root)
    problem = _not_found(frame, root, found, stopped)
    if problem:
        result.lines.append(problem)
        return result
    real, top = Path(os.path.realpath(found[0])), Path(os.path.realpath(root))
    if not real.is_relative_to(top):
        result.lines.append(f"{frame.path} is outside --root, not touched (--root is {root}).")
        return result
    result.path, result.name = real, real.relative_to(top)
    result.lines.append(f"It was raised from {result.name}:{frame.line}, in {frame.function}.")
    try:
        result.old = read_source(real)
        result.blame = blame(result.old, frame.line, _SUSPECTS.get(kind))
    except (SourceError, FileError) as error:
        result.lines.append(f"Cannot fix it: {error}")
    result.lines += result.blame.lines
    return result


@dataclass
class FileFix:
    """The fixes of every traceback that points into one file, made by the engine: the new
    bytes, or why they cannot be written (`error`)."""

    path: Path
    name: Path
    old: bytes
    new: bytes = b""
    error: str | None = None


def merged_fixes(explanations: list[Explanation]) -> list[FileFix]:
    """One rewrite per file, however many tracebacks point into it, proven as `fix` proves its own."""
    by_path: dict[Path, list[Explanation]] = {}
    for item in explanations:
        if item.blame.chosen and item.path is not None:
            by_path.setdefault(item.path, []).append(item)
    merged = []
    for path, items in by_path.items():
        first = items[0]
        findings = {(f.line, f.column): f for item in items for f in item.blame.chosen}
        fix = FileFix(path, first.name or path, first.old)
        try:
            fix.new = fix_source(first.old, settings=chosen_settings(findings.values())).source
        except (SourceError, SafetyError) as error:
            fix.error = f"the rewrite fails semfix's checks ({error}); nothing written"
        merged.append(fix)
    return merged
