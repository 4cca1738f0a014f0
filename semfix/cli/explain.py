"""`semfix explain`: from a JAX traceback to the argument that caused it, and its fix.

The engine decides every rewrite: explain finds the arguments the error is about and takes the
findings the engine makes there, whichever rule makes them, with the edits that come with them
(`_with_their_plans`). The traceback adds one piece of evidence the static rules lack: an
argument it points at is proven not to be a Ref, so `sems[i]` there reads a semaphore-array
Ref and SEM002's unsafe rewrite becomes safe, there and for the other reads of the same Ref
in the same function when that Ref is a parameter the function never rebinds. Evidence is only
what the error names: JAX's DMA check covers the source, destination and semaphore together,
so it proves an argument only when that is the one argument that is not plainly a Ref.

A log is untrusted text (a CI log of someone else's pull request): only files under `--root`
are read for a fix or written. Reading the log is logs.py's.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from semfix.api import fix_source
from semfix.catalog import MODULES
from semfix.errors import SafetyError, SourceError
from semfix.cli.files import EXCLUDED_DIRS, FileError, read_source
from semfix.findings import Finding
from semfix.cli.logs import Failure, Frame
from semfix.engine.nodes import Text
from semfix.engine.scopes import signature
from semfix.settings import Settings
from semfix.rewrite.text import splice

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
#: The copies' Ref parameters in call order (buffers, then semaphores), from the catalog.
_DMA_PARAMETERS = {
    op.name: tuple(p.name for p in sorted(op.buffer_params + op.sem_params, key=lambda p: p.position or 0))
    for ops in MODULES.values()
    for op in ops.values()
    if op.buffer_params
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
class Explanation:
    """What one traceback says, where it points, and the fix (if semfix can make one)."""

    failure: Failure
    kind: str | None = None
    lines: list[str] = field(default_factory=list)
    path: Path | None = None
    old: bytes = b""
    chosen: list[Finding] = field(default_factory=list)
    encoding: str = "utf-8"
    name: Path | None = None  # the file relative to --root: for messages and diff headers
    fixed: bool = False  # every argument the error may be about is fixed


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


def _calls_at(tree: ast.Module, line: int) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno <= line <= (n.end_lineno or n.lineno)]


def _function_of(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function (or lambda) that holds the line; the module outside any."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
    holding = [n for n in ast.walk(tree) if isinstance(n, kinds) and n.lineno <= line <= (n.end_lineno or n.lineno)]
    return max(holding, key=lambda n: (n.lineno, n.col_offset), default=tree)


def _descriptor_calls(tree: ast.Module, line: int) -> tuple[list[ast.Call], str | None]:
    """For a DMA error raised at `.start()` / `.wait()`: the calls that built the descriptor."""
    for call in _calls_at(tree, line):
        owner = call.func.value if isinstance(call.func, ast.Attribute) and call.func.attr in ("start", "wait") else None
        if isinstance(owner, ast.Call):
            return [owner], None
        if isinstance(owner, ast.Name):
            built = [
                n.value
                for n in ast.walk(_function_of(tree, line))
                if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and n.lineno <= line
                and any(isinstance(t, ast.Name) and t.id == owner.id for t in n.targets)
            ]
            problem = f"`{owner.id}` on line {line} is not assigned a copy descriptor in the same function"
            return built[-1:], None if built else problem
        if owner is not None:
            return [], f"the descriptor on line {line} is not a name or a call semfix can follow"
    return _calls_at(tree, line), None


def _base(finding: Finding) -> str:
    return finding.original.split("[", 1)[0].strip()


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
        _fix(result, real, frame)
    except (SourceError, SafetyError, FileError, SyntaxError) as error:
        result.lines.append(f"Cannot fix it: {error}")
    return result


def _callee(tree: ast.Module, call: ast.Call) -> str | None:
    """The function name a call spells, through `from ... import name as alias`."""
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if not isinstance(call.func, ast.Name):
        return None
    imported = {a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return imported.get(call.func.id, call.func.id)


def _bound(call: ast.Call, parameters: tuple[str, ...]) -> list[tuple[str, ast.expr]]:
    """(parameter, argument) for the arguments of `call` bound to `parameters`."""
    positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
    return [*zip(parameters, positional), *((k.arg, k.value) for k in call.keywords if k.arg in parameters)]


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
    return {a.arg for a in signature(arguments)} if isinstance(arguments, ast.arguments) else set()


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


def _within(finding: Finding, node: ast.expr, text: Text) -> bool:
    """Whether the finding lies inside the node (in characters, as the engine counts them)."""
    start, end = text.start(node), text.end(node)
    return (start[0], start[1] + 1) <= (finding.line, finding.column) and (finding.end_line, finding.end_column) <= (end[0], end[1] + 1)


def _said(finding: Finding) -> str:
    """The engine's finding, as `check` words it."""
    return f"{finding.rule} {finding.message}"


def _dma_evidence(
    result: Explanation, tree: ast.Module, calls: list[ast.Call], line: int, findings: list[Finding], text: Text
) -> tuple[list[Finding], list[Finding]]:
    """(fixes the DMA error proves, fixes safe on their own); names every suspect argument.

    JAX's message covers several arguments at once: it proves which one is not a Ref only when
    every other one is plainly a Ref. A suspect left unfixed keeps `result.fixed` false.
    """
    rebound = _rebound(_function_of(tree, line))
    arguments = [
        pair for call in calls if (name := _callee(tree, call)) in _DMA_PARAMETERS for pair in _bound(call, _DMA_PARAMETERS[name])
    ]
    about = _SUSPECTS[result.kind or ""]
    suspects = [(p, a) for p, a in arguments if p in about and not _plainly_ref(a, rebound)]
    if not suspects:
        why = "every argument the error is about looks like a Ref there" if arguments else "no DMA call there whose arguments semfix can read"
        result.lines.append(f"Cannot fix it automatically: {why}.")
        return [], []
    one = len(suspects) == 1
    proven: list[Finding] = []
    open_ = []
    for parameter, argument in suspects:
        inside = [f for f in findings if _within(f, argument, text)]
        usable = [f for f in inside if f.fixable and (one or f.safety == "safe")]
        proven += usable
        reported = [f": {_said(f)}" for f in inside if not f.fixable]  # the engine's reason it does not fix
        if not usable:
            open_.append(f"`{ast.unparse(argument)}` ({parameter}){''.join(reported[:1])}")
    if not one:
        names = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a in suspects)
        result.lines.append(f"The error does not say which of these is not a Ref ({names}): only fixes safe on their own are made.")
    if open_:
        result.lines.append(f"Not fixed, check by hand: {'; '.join(open_)}.")
    for parameter, argument in arguments:
        if parameter not in about and any(f.fixable and _within(f, argument, text) for f in findings):
            result.lines.append(f"`{ast.unparse(argument)}` ({parameter}): not proven by this error, left alone.")
    result.fixed = not open_
    return (proven, []) if one else ([], proven)


def _with_their_plans(chosen: list[Finding], fixes: list[Finding]) -> list[Finding]:
    """The chosen fixes with the edits the engine makes only together with them.

    A fix that passes the Ref for a name carrying a read out of it (SEM003's plan, which a rule
    for other arguments may share) rewrites every use of the name and removes its assignment,
    or nothing: the findings of its rule that rewrite the same name the same way, and the one
    that removes `name = ...`. `fixes` are those of the function that holds them all.
    """
    carried = {(f.rule, f.original, f.replacement) for f in chosen if f.original.isidentifier()}
    assigned = {(rule, name) for rule, name, _ in carried}
    together = [
        f for f in fixes
        if (f.rule, f.original, f.replacement) in carried
        or f.replacement == "" and (f.rule, f.original.split("=", 1)[0].strip()) in assigned
    ]
    return list({(f.line, f.column): f for f in chosen + together}.values())


def _fix(result: Explanation, path: Path, frame: Frame) -> None:
    data = read_source(path)
    analysis = fix_source(data, settings=_ANALYSIS, apply_fixes=False)
    text = data.decode(analysis.encoding)
    tree, source = ast.parse(text), Text(text)
    if result.kind in _SUSPECTS:
        calls, problem = _descriptor_calls(tree, frame.line)
        if problem:
            result.lines.append(f"Cannot follow the descriptor back to its copy: {problem}.")
            return
        proven, safe = _dma_evidence(result, tree, calls, frame.line, list(analysis.findings), source)
    else:
        at = [f for f in analysis.findings if any(_within(f, call, source) for call in _calls_at(tree, frame.line))]
        proven, safe = [f for f in at if f.fixable], []
        if not proven:
            reason = _said(at[0]) if at else "no semaphore argument there is a read semfix can rewrite"
            result.lines.append(f"Cannot fix it automatically: {reason}.")
            return
        result.fixed = True
    scope = _function_of(tree, frame.line)
    low, high = getattr(scope, "lineno", 1), getattr(scope, "end_lineno", 10**9)
    fixes = [f for f in analysis.findings if f.fixable and low <= f.line <= high]
    bases = {_base(f) for f in proven}
    spread = bases & (_parameters(scope) - _rebound(scope))  # a proof needs the same Ref; a safe fix does not
    same_ref = [f for f in fixes if _base(f) in bases and (f.safety == "safe" or _base(f) in spread)]
    chosen = _with_their_plans(proven + safe + same_ref, fixes)
    result.lines += [f"At line {f.line}, {_said(f)}" for f in proven + safe]
    for finding in sorted(chosen, key=lambda f: (f.line, f.column)):
        note = f"; the traceback proves `{_base(finding)}` is a Ref" if finding.safety != "safe" else ""
        edit = f"`{finding.original}` -> `{finding.replacement}`" if finding.replacement else f"remove `{finding.original.strip()}`"
        result.lines.append(f"Fix: line {finding.line}: {edit} ({finding.rule}{note})")
    if chosen:
        result.chosen, result.encoding, result.old = chosen, analysis.encoding, data
        fix_source(splice(text, chosen).encode(analysis.encoding), settings=_ANALYSIS, apply_fixes=False)  # it must still parse


def merged_fixes(explanations: list[Explanation]) -> list[tuple[Path, Path, bytes, bytes]]:
    """One rewrite per file, however many tracebacks point into it: (path, name, old, new)."""
    by_path: dict[Path, list[Explanation]] = {}
    for item in explanations:
        if item.chosen and item.path is not None:
            by_path.setdefault(item.path, []).append(item)
    merged = []
    for path, items in by_path.items():
        first, findings = items[0], {(f.line, f.column): f for item in items for f in item.chosen}
        merged.append((path, first.name or path, first.old, splice(first.old.decode(first.encoding), findings.values()).encode(first.encoding)))
    return merged
