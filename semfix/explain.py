"""`semfix explain`: from a JAX traceback to the argument that caused it, and its fix.

The traceback is evidence the static rules lack: a `sems[i]` it points at is proven to read
a semaphore-array Ref, so the SEM002 rewrite becomes safe there, and for the other reads of
the same Ref in the same function when that Ref is a parameter the function never rebinds.
Evidence is only what the error names: JAX's DMA check covers the source, destination and
semaphore together, so it proves a semaphore argument only when that is the one argument
that is not plainly a Ref.

A log is untrusted text (a CI log of someone else's pull request): only files under `--root`
are read for a fix or written.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from semfix.api import fix_source
from semfix.errors import SafetyError, SourceError
from semfix.files import EXCLUDED_DIRS, FileError, read_source
from semfix.findings import Finding
from semfix.settings import Settings
from semfix.text import splice

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
_KNOWN = [
    ("value", re.compile(r"Cannot (?P<verb>\w+) on a non-semaphore Ref: (?P<aval>.+)")),
    ("shape", re.compile(r"Cannot (?P<verb>\w+) on a non-\(\)-shaped semaphore: (?P<aval>.+)")),
    ("dma", re.compile(r"DMA source/destination/semaphore arguments must be Refs")),
    ("dma_send", re.compile(r"DMA source semaphore must be a Ref")),
    ("dma_wait", re.compile(r"Expected the destination semaphore to be a reference")),
    # JAX's generic Ref check: the Mosaic GPU copies check source, destination, barrier in turn.
    ("copy", re.compile(r"Can only call `(?P<verb>copy_gmem_to_smem|copy_smem_to_gmem)` on a `Ref`:? ?(?P<aval>.*)")),
    ("barrier", re.compile(r"Can only call `(?P<verb>barrier_\w+)` on a `Ref`:? ?(?P<aval>.*)")),
]
#: The DMA functions' leading parameters, in order (catalog.py lists only the semaphore ones).
_DMA_PARAMETERS = {
    "make_async_copy": ("src_ref", "dst_ref", "sem"),
    "async_copy": ("src_ref", "dst_ref", "sem"),
    "make_async_remote_copy": ("src_ref", "dst_ref", "send_sem", "recv_sem"),
    "async_remote_copy": ("src_ref", "dst_ref", "send_sem", "recv_sem"),
    "copy_gmem_to_smem": ("src", "dst", "barrier"),
    "copy_smem_to_gmem": ("src", "dst"),
}
#: Which parameters each DMA error is about. `.start()` checks source, destination and the
#: semaphore the copy signals on in one test, and a remote copy's send semaphore in its own;
#: `.wait()` checks the semaphore it waits on (a remote copy waits on both, send first).
_SUSPECTS = {
    "dma": {"src_ref", "dst_ref", "sem", "recv_sem"},
    "dma_send": {"send_sem"},
    "dma_wait": {"sem", "send_sem", "recv_sem"},
    "copy": {"src", "dst", "barrier"},
}
_AVALS = {
    "semaphore": "the count read out of a regular semaphore Ref",
    "dma_sem": "the count read out of a DMA semaphore Ref",
    "barrier_semaphore": "the count read out of a barrier semaphore Ref",
    "barrier": "the value read out of a Mosaic GPU barrier Ref",
}
#: How many folders the search for a traceback's file visits before it gives up (see `locate`).
SEARCH_LIMIT = 10_000
_ANALYSIS = Settings.build(select=["SEM0"], unsafe_fixes=True)


@dataclass
class Frame:
    path: str
    line: int
    function: str


@dataclass
class Failure:
    frames: list[Frame]
    message: str


@dataclass
class Explanation:
    """What one traceback says, where it points, and the fix (if semfix can make one)."""

    failure: Failure
    kind: str | None = None
    lines: list[str] = field(default_factory=list)
    path: Path | None = None
    old: bytes = b""
    new: bytes = b""
    chosen: list[Finding] = field(default_factory=list)
    encoding: str = "utf-8"
    name: Path | None = None  # the file relative to --root: for messages and diff headers
    fixed: bool = False  # every argument the error may be about is fixed


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


def _describe_aval(aval: str) -> str:
    aval = re.sub(r"^\w*Tracer\((.*)\)$", r"\1", aval.strip().rstrip("."))  # JitTracer(barrier[]): what it traces
    match = re.fullmatch(r"(?P<name>\w+)\[(?P<shape>[^\]]*)\]", aval)
    if match is None or match["name"] not in _AVALS:
        return f"the value `{aval}`"
    if match["shape"]:
        return f"{_AVALS[match['name']]}, of shape ({match['shape']},): a read of a whole array of them"
    return _AVALS[match["name"]]


def _is_jax(path: str) -> bool:
    return bool(re.search(r"[/\\](jax|jaxlib)[/\\]", path)) or path.startswith("<")


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


def _calls_at(tree: ast.Module, line: int) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)]


def _function_of(tree: ast.Module, line: int) -> ast.AST:
    best: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is tree or node.lineno >= best.lineno:  # type: ignore[attr-defined]
                    best = node
    return best


def _descriptor_calls(tree: ast.Module, line: int) -> tuple[list[ast.Call], str | None]:
    """For a DMA error raised at `.start()` / `.wait()`: the calls that built the descriptor."""
    for call in _calls_at(tree, line):
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("start", "wait"):
            owner = func.value
            if isinstance(owner, ast.Call):
                return [owner], None
            if isinstance(owner, ast.Name):
                scope = _function_of(tree, line)
                built = [
                    n.value
                    for n in ast.walk(scope)
                    if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == owner.id for t in n.targets)
                    and isinstance(n.value, ast.Call)
                    and n.lineno <= line
                ]
                if built:
                    return [built[-1]], None
                return [], f"`{owner.id}` on line {line} is not assigned a copy descriptor in the same function"
            return [], f"the descriptor on line {line} is not a name or a call semfix can follow"
    return _calls_at(tree, line), None


def _base(finding: Finding) -> str:
    return finding.original.split("[", 1)[0].strip()


def explain(failure: Failure, root: Path) -> Explanation:
    result = Explanation(failure)
    for kind, pattern in _KNOWN:
        match = pattern.search(failure.message)
        if match:
            result.kind = kind
            break
    if result.kind is None:
        return result
    groups = match.groupdict()  # type: ignore[union-attr]
    if result.kind == "value":
        result.lines.append(
            f"JAX refused to {groups['verb']}: the semaphore argument was {_describe_aval(groups['aval'])}, not the Ref."
        )
    elif result.kind == "shape":
        result.lines.append(f"JAX needs one semaphore, but got a Ref of shape {groups['aval'].strip()}: index one with `.at[i]`.")
    elif result.kind == "dma":
        result.lines.append("A DMA was given a value where it needs a Ref (source, destination or semaphore).")
    elif result.kind == "dma_send":
        result.lines.append("A remote DMA was given a value where it needs its send semaphore Ref.")
    elif result.kind == "dma_wait":
        result.lines.append("A DMA wait was given a value where it needs the semaphore Ref.")
    elif result.kind == "copy":
        result.lines.append(
            f"A Mosaic GPU copy (`{groups['verb']}`) was given {_describe_aval(groups['aval'])} where it needs a Ref"
            " (source, destination or barrier)."
        )
    else:
        result.lines.append(f"`{groups['verb']}` was given {_describe_aval(groups['aval'] or 'a value')}, not the barrier Ref.")
    user = [f for f in failure.frames if not _is_jax(f.path)]
    if not user:
        result.lines.append("No frame outside JAX's own files: run with JAX_TRACEBACK_FILTERING=off and try again.")
        return result
    frame = user[-1]
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
        _fix(result, real, frame)
    except (SourceError, SafetyError, FileError, SyntaxError) as error:
        result.lines.append(f"Cannot fix it: {error}")
    return result


def _callee(tree: ast.Module, call: ast.Call) -> str | None:
    """The function name a call spells, through `from ... import name as alias`."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == call.func.id:
                        return alias.name
        return call.func.id
    return None


def _bound(call: ast.Call, parameters: tuple[str, ...]) -> list[tuple[str, ast.expr]]:
    """(parameter, argument) for the arguments of `call` bound to `parameters`."""
    bound = []
    for index, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            break
        if index < len(parameters):
            bound.append((parameters[index], argument))
    return bound + [(k.arg, k.value) for k in call.keywords if k.arg in parameters]


def _rebound(scope: ast.AST) -> set[str]:
    """Every name, attribute or subscript the function assigns to, as source text."""
    return {
        ast.unparse(node)
        for node in ast.walk(scope)
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del))
    }


def _parameters(scope: ast.AST) -> set[str]:
    """The function's parameter names: the only bases a proof may spread from (see `_fix`)."""
    arguments = getattr(scope, "args", None)
    if not isinstance(arguments, ast.arguments):
        return set()
    every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
    return {a.arg for a in every if a is not None}


def _plainly_ref(node: ast.expr, rebound: set[str]) -> bool:
    """A parameter-like name, an attribute of one, or a `.at[...]` view: nothing read out of a Ref.

    A name the function assigns to may hold a value read earlier, so it is not plain.
    """
    if ast.unparse(node) in rebound:
        return False
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return node.attr != "at" and _plainly_ref(node.value, rebound)
    at = node.value if isinstance(node, ast.Subscript) else None
    return isinstance(at, ast.Attribute) and at.attr == "at" and _plainly_ref(at.value, rebound)


def _within(finding: Finding, node: ast.expr, lines: list[str]) -> bool:
    """Whether the finding lies inside the node (ast columns are UTF-8 bytes, findings' characters)."""

    def column(line: int, offset: int) -> int:
        return len(lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1

    start = (node.lineno, column(node.lineno, node.col_offset))
    end = (node.end_lineno or node.lineno, column(node.end_lineno or node.lineno, node.end_col_offset or 0))
    return start <= (finding.line, finding.column) and (finding.end_line, finding.end_column) <= end


def _dma_evidence(
    result: Explanation, tree: ast.Module, calls: list[ast.Call], line: int, fixes: list[Finding], text: str
) -> tuple[list[Finding], list[Finding]]:
    """(fixes the DMA error proves, fixes safe on their own); names every suspect argument.

    JAX's message covers several arguments at once: it proves which one is not a Ref only when
    every other one is plainly a Ref. A suspect left unfixed keeps `result.fixed` false.
    """
    lines = text.splitlines()
    rebound = _rebound(_function_of(tree, line))
    arguments = [
        pair for call in calls if (_callee(tree, call) or "") in _DMA_PARAMETERS
        for pair in _bound(call, _DMA_PARAMETERS[_callee(tree, call) or ""])
    ]
    about = _SUSPECTS[result.kind or ""]
    suspects = [(p, a) for p, a in arguments if p in about and not _plainly_ref(a, rebound)]
    if not arguments:
        result.lines.append("Cannot fix it automatically: no DMA call there whose arguments semfix can read.")
        return [], []
    if not suspects:
        result.lines.append("Cannot fix it automatically: every argument the error is about looks like a Ref there.")
        return [], []
    proven, safe, open_ = [], [], []
    for parameter, argument in suspects:
        inside = [f for f in fixes if _within(f, argument, lines)]
        usable = inside if len(suspects) == 1 else [f for f in inside if f.safety == "safe"]
        (proven if len(suspects) == 1 else safe).extend(usable)
        if not usable:
            open_.append(f"`{ast.unparse(argument)}` ({parameter})")
    if len(suspects) > 1:
        names = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a in suspects)
        result.lines.append(f"The error does not say which of these is not a Ref, so it proves none of them: {names}.")
    if open_:
        result.lines.append(f"Not fixed, check by hand: {', '.join(open_)}.")
    for parameter, argument in arguments:
        if parameter not in about and any(_within(f, argument, lines) for f in fixes):
            result.lines.append(f"`{ast.unparse(argument)}` ({parameter}): not proven by this error, left alone.")
    result.fixed = not open_
    return proven, safe


def _fix(result: Explanation, path: Path, frame: Frame) -> None:
    data = read_source(path)
    analysis = fix_source(data, settings=_ANALYSIS, apply_fixes=False)
    text = data.decode(analysis.encoding)
    tree = ast.parse(text)
    fixes = [f for f in analysis.findings if f.replacement is not None and f.rule in ("SEM001", "SEM002")]
    if result.kind in _SUSPECTS:
        calls, problem = _descriptor_calls(tree, frame.line)
        if problem:
            result.lines.append(f"Cannot follow the descriptor back to its copy: {problem}.")
            return
        proven, safe = _dma_evidence(result, tree, calls, frame.line, fixes, text)
    else:
        calls = _calls_at(tree, frame.line)
        spans = [(c.lineno, c.end_lineno or c.lineno) for c in calls]
        proven, safe = [f for f in fixes if any(a <= f.line and f.end_line <= b for a, b in spans)], []
        if not proven:
            reported = [f for f in analysis.findings if any(a <= f.line <= b for a, b in spans)]
            reason = reported[0].message if reported else "no semaphore argument there is a read semfix can rewrite"
            result.lines.append(f"Cannot fix it automatically: {reason}.")
            return
        result.fixed = True
    scope = _function_of(tree, frame.line)
    low, high = getattr(scope, "lineno", 1), getattr(scope, "end_lineno", 10**9)
    bases = {_base(f) for f in proven}
    spread = bases & (_parameters(scope) - _rebound(scope))  # a proof needs the same Ref; a safe fix does not
    same_ref = [
        f for f in fixes if low <= f.line <= high and _base(f) in bases and (f.safety == "safe" or _base(f) in spread)
    ]
    chosen = list({(f.line, f.column): f for f in proven + safe + same_ref}.values())
    if not chosen:
        return
    for finding in sorted(chosen, key=lambda f: (f.line, f.column)):
        note = " (the traceback proves it is a semaphore Ref)" if finding.safety != "safe" else ""
        result.lines.append(f"Fix: line {finding.line}: `{finding.original}` -> `{finding.replacement}`{note}")
    result.chosen, result.encoding = chosen, analysis.encoding
    result.old, result.new = data, splice(text, chosen).encode(analysis.encoding)
    fix_source(result.new, settings=_ANALYSIS, apply_fixes=False)  # it must still parse


def merged_fixes(explanations: list[Explanation]) -> list[tuple[Path, Path, bytes, bytes]]:
    """One rewrite per file, however many tracebacks point into it: (path, name, old, new)."""
    by_path: dict[Path, list[Explanation]] = {}
    for item in explanations:
        if item.chosen and item.path is not None:
            by_path.setdefault(item.path, []).append(item)
    merged = []
    for path, items in by_path.items():
        findings = {(f.line, f.column): f for item in items for f in item.chosen}
        old = items[0].old
        text = old.decode(items[0].encoding)
        merged.append((path, items[0].name or path, old, splice(text, list(findings.values())).encode(items[0].encoding)))
    return merged
