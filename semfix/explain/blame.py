"""What a JAX error raised at one line is about, and which of the engine's findings fix it.

`semfix explain` (semfix/explain/search.py) reads the traceback; the engine decides every rewrite:
blame takes the findings it makes at the arguments the error is about, with the edits that
come with them (`_with_their_plans`). The traceback adds one piece of evidence the static
rules lack: an argument it points at is proven not to be a Ref, so `sems[i]` there reads a
semaphore-array Ref and the unsafe `sems.at[i]` rewrite becomes safe, there and for the other reads
of the same Ref in the same function when that Ref is a parameter the function never
rebinds. Evidence is only what the error names: JAX's DMA check covers the source,
destination and semaphore together, so it proves an argument only when that is the one
argument that is not plainly a Ref.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from semfix.analysis.evidence import Evidence
from semfix.analysis.nodes import Text, is_at, parse, unchain
from semfix.analysis.scopes import Scope, Tracking
from semfix.catalog import Operation
from semfix.engine.loop import arguments as given_for
from semfix.engine.run import analyse
from semfix.explain.errors import DMAS, ERRORS
from semfix.findings import Finding
from semfix.rules import RULES
from semfix.selection import build_settings
from semfix.settings import Settings

# The rules on semaphore and DMA arguments (those the skim decides, without a text gate): the
# errors explain reads are about arguments. Unsafe fixes count: the traceback may prove them.
_ANALYSIS = build_settings(select=[code for code, rule in RULES.items() if not rule.text_gate], unsafe_fixes=True)
#: The rules that find a semaphore of the wrong kind, as the table of JAX's errors names them.
_KIND_RULES = frozenset(code for error in ERRORS if error.wrong_kind for code in error.rules)


@dataclass
class Blame:
    """What to say about the error, the fixes to make, and whether they settle it."""

    lines: list[str] = field(default_factory=list)
    chosen: list[Finding] = field(default_factory=list)
    fixed: bool = False  # every argument the error may be about is fixed
    encoding: str = "utf-8"  # the source's, for writing the fixes back
    # the arguments the error is about are the parameters of a helper of the file, passed on
    # unchanged: what they were given is at the caller of that def (the name), the frame of
    # the line's function or of the def it is nested in
    follow_caller: str | None = None


def blame(
    source: bytes,
    line: int,
    suspects: frozenset[str] | None,
    where: Callable[[int], str] = "line {}".format,
    *,
    wrong_kind: bool = False,
    shape: str | None = None,
) -> Blame:
    """The error raised at `line`: `suspects` names the DMA parameters it is about (None: a
    semaphore call's error, about whichever call on the line takes one). Raises SourceError
    for source the engine cannot read. The fixes are made (and proven) by running the engine
    again with `settings_for(chosen)`. `where` words a line of `source` (a notebook's cells
    are one module, and the user counts lines within a cell). `wrong_kind`: the error is about
    the semaphore's kind, which no rewrite settles: the findings there of the rules the error
    table names for it are named, not fixed. `shape`: the shape of the value JAX got, when
    not one semaphore (`semaphore[2]`); every fix of a read keeps it, so none is made."""
    analysis = analyse(source, _ANALYSIS, apply_fixes=False)
    findings, result = analysis.findings, Blame(encoding=analysis.encoding)
    scopes = Tracking()  # `_plainly_ref` reads its accesses
    scopes.build(parse(analysis.text))
    evidence = Evidence(Text(analysis.text), scopes)
    evidence.gather()  # the kernels' allocations: a semaphore's kind, where a helper hides it from the rules
    calls, problem = _descriptor_calls(scopes, line) if suspects is not None else (_calls_at(scopes, line), None)
    if problem:
        result.lines.append(f"Cannot follow the descriptor back to its copy: {problem}.")
        return result
    if wrong_kind:
        _kind_evidence(result, evidence, calls, suspects, findings, where)
        return result
    owner = _passed_in(evidence, calls, suspects)
    if owner is not None:
        result.lines.append(f"What it is about are parameters of `{owner}`, passed on unchanged: its caller gave them.")
        result.follow_caller = owner
        return result
    if suspects is not None:
        proven, safe = _dma_evidence(result, evidence, calls, suspects, findings)
    else:
        at = [f for f in findings if any(_within(f, call, evidence.text) for call in calls)]
        proven, safe = [f for f in at if f.fixable], []
        if not proven:
            reason = _said(at[0]) if at else "no semaphore argument there is a read semfix can rewrite"
            result.lines.append(f"Cannot fix it automatically: {reason}.")
            return result
        if shape:
            result.lines += [
                f"Not fixed: the log proves `{f.original}` has shape {shape}: `{f.replacement}` would be a Ref of"
                " that shape, not one semaphore. Index every axis (`.at[i, j]`), or check by hand."
                for f in proven
            ]
            return result
        result.fixed = True
    scope = scopes.scope_of[id(calls[-1])].function_scope()  # the function of the innermost call
    low, high = getattr(scope.node, "lineno", 1), getattr(scope.node, "end_lineno", 10**9)
    fixes = [f for f in findings if f.fixable and low <= f.line <= high]
    bases = {_base(f) for f in proven}
    # a proof spreads to the same Ref: a parameter the function never rebinds, where the name
    # resolves to it (not in a comprehension, lambda or nested function binding its own); a
    # safe fix needs none
    scopes_at = {evidence.text.start(node)[:2]: scopes.scope_of[id(node)] for node in scopes.subscripts}
    spread = {_bound_at(f, scopes_at) for f in proven if _kinds_here(_base(f), scope) == ["param"]}
    spread &= {id(scope.lookup(base)[1]) for base in bases}
    same_ref = [f for f in fixes if _base(f) in bases and (f.safety == "safe" or _bound_at(f, scopes_at) in spread)]
    result.chosen = _with_their_plans(proven + safe + same_ref, fixes)
    result.lines += [f"At {where(f.line)}, {_said(f)}" for f in proven + safe]
    for finding in sorted(result.chosen, key=lambda f: (f.line, f.column)):
        note = f"; the traceback proves `{_base(finding)}` is a Ref" if finding.safety != "safe" else ""
        edit = (
            f"`{finding.original}` -> `{finding.replacement}`"
            if finding.replacement
            else f"remove `{finding.original.strip()}`"
        )
        result.lines.append(f"Fix: {where(finding.line)}: {edit} ({finding.rule}{note})")
    return result


def settings_for(findings: Iterable[Finding]) -> Settings:
    """Settings under which the engine makes these fixes (found by `blame`) and no other, so
    that `explain` writes them through the same run and proof as `fix`."""
    return replace(_ANALYSIS, chosen=frozenset((f.line, f.column, f.end_line, f.end_column) for f in findings))


#: A copy descriptor's methods that raise JAX's DMA errors: its start, and its waits (JAX 0.12's
#: `.wait()` waits on the read, then the write; `wait_read`/`wait_write` are 0.12's names).
_DESCRIPTOR_METHODS = frozenset({"start", "wait", "wait_recv", "wait_send", "wait_read", "wait_write"})


def _calls_at(scopes: Tracking, line: int) -> list[ast.Call]:
    return [c for c in scopes.calls if c.lineno <= line <= (c.end_lineno or c.lineno)]


def _descriptor_calls(scopes: Tracking, line: int) -> tuple[list[ast.Call], str | None]:
    """For a DMA error raised at `.start()` or a wait (`.wait()`, `.wait_recv()`, ...): the calls
    that built the descriptor."""
    for call in _calls_at(scopes, line):
        owner = (
            call.func.value if isinstance(call.func, ast.Attribute) and call.func.attr in _DESCRIPTOR_METHODS else None
        )
        if isinstance(owner, ast.Call):
            return [owner], None
        if isinstance(owner, ast.Name):
            bindings = scopes.scope_of[id(call)].function_scope().bindings.get(owner.id, [])
            built = [
                b.value
                for b in bindings
                if b.kind == "assign" and isinstance(b.value, ast.Call) and b.assignment.lineno <= line
            ]
            problem = f"`{owner.id}` on line {line} is not assigned a copy descriptor in the same function"
            return built[-1:], None if built else problem
        if owner is not None:
            return [], f"the descriptor on line {line} is not a name or a call semfix can follow"
    return _calls_at(scopes, line), None


def _base(finding: Finding) -> str:
    return finding.original.split("[", 1)[0].strip()


def _bound_at(finding: Finding, at: dict[tuple[int, int], Scope]) -> int | None:
    """What the finding's base name resolves to where it is written (the id of its bindings);
    None for a finding at no subscript."""
    where = at.get((finding.line, finding.column - 1))
    return None if where is None else id(where.lookup(_base(finding))[1])


def _kinds_here(name: str, scope: Scope) -> list[str] | None:
    """How the function of `scope` binds `name` (["param"]: as a parameter, once); None if it does not."""
    found, bindings = scope.lookup(name)
    return (
        [b.kind for b in bindings] if found is not None and found.function_scope() is scope.function_scope() else None
    )


def _plainly_ref(node: ast.expr, scope: Scope, evidence: Evidence) -> bool:
    """A parameter, an attribute of one, or a `.at[...]` view of either: nothing read out of a Ref.

    Only a parameter is proven: the name must resolve to one, bound nowhere else (of this
    function, or of the function it is captured from: a `pl.when` body's `doubled` assigned
    `x_ref[...] * 2` in the kernel is a value). A name the file does not bind, or binds
    otherwise, may hold a value; so may an attribute assigned or deleted where the name is seen.
    """
    while isinstance(node, ast.Subscript) and is_at(node.value):
        node = node.value.value
    root, steps, _ = unchain(node)
    if not isinstance(root, ast.Name) or None in steps or "at" in steps:
        return False
    found, bindings = scope.lookup(root.id)
    if found is None or [b.kind for b in bindings] != ["param"] or bindings[0].declared:
        return False
    written = (a.steps for a in evidence.tracking().references(root.id, scope) if a.context is not ast.Load)
    return not any(0 < len(chain) <= len(steps) and steps[: len(chain)] == chain for chain in written)


def _within(finding: Finding, node: ast.expr, text: Text) -> bool:
    """Whether the finding lies inside the node (in characters, as the engine counts them)."""
    start, end = text.start(node), text.end(node)
    return (start[0], start[1] + 1) <= (finding.line, finding.column) and (finding.end_line, finding.end_column) <= (
        end[0],
        end[1] + 1,
    )


def _said(finding: Finding) -> str:
    """The engine's finding, as `check` words it."""
    return f"{finding.rule} {finding.message}"


def _arguments(evidence: Evidence, calls: list[ast.Call], dma: bool) -> list[tuple[str, ast.expr, Scope]]:
    """The arguments of the calls' catalog operations (`dma`: a DMA's buffers and semaphores;
    else the semaphores), each with the catalog parameter it is given to (through a helper of
    the file, the one the helper passes it on to) and the scope it is written in."""
    found = []
    for call in calls:
        operation = evidence.operation(call)
        if operation is None or (dma and not _copies(operation)):
            continue
        params = operation.buffer_params + operation.sem_params if dma else operation.sem_params
        scope = evidence.scopes.scope_of[id(call)]
        for param in params:
            name = param.via[1] if param.via else param.name
            found += [(name, argument, scope) for argument in given_for((param,), call)]
    return sorted(found, key=lambda item: (item[1].lineno, item[1].col_offset))


def _copies(operation: Operation) -> bool:
    """A DMA, or a helper passing on to one: what the DMA texts are about."""
    return bool(operation.buffer_params) or any(p.via is not None and p.via[0] in DMAS for p in operation.sem_params)


def _passed_in(evidence: Evidence, calls: list[ast.Call], suspects: frozenset[str] | None) -> str | None:
    """The def whose parameters, never rebound, every argument the error is about is: the
    function holding the calls, or a def it is nested in (a step function's closure); for a
    DMA's error (`suspects`), also an `.at[...]` view of one, a Ref where the parameter is one.
    The value each was given is that def's caller's. None where they are not all one def's."""
    about = [a for a in _arguments(evidence, calls, suspects is not None) if suspects is None or a[0] in suspects]
    owners = set()
    for _, argument, scope in about:
        while suspects is not None and isinstance(argument, ast.Subscript) and is_at(argument.value):
            argument = argument.value.value
        found, bindings = scope.lookup(argument.id) if isinstance(argument, ast.Name) else (None, [])
        if found is None or [b.kind for b in bindings] != ["param"]:
            return None
        owners.add(found.node)
    (owner, *others) = owners or {None}
    return owner.name if not others and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _dma_evidence(
    result: Blame, evidence: Evidence, calls: list[ast.Call], about: frozenset[str], findings: Sequence[Finding]
) -> tuple[list[Finding], list[Finding]]:
    """(fixes the DMA error proves, fixes safe on their own); names every suspect argument.

    JAX's message covers several arguments at once: it proves which one is not a Ref only when
    every other one is plainly a Ref. A suspect left unfixed keeps `result.fixed` false.
    """
    arguments = _arguments(evidence, calls, dma=True)
    suspects = [(p, a) for p, a, scope in arguments if p in about and not _plainly_ref(a, scope, evidence)]
    if not suspects:
        why = (
            "every argument the error is about looks like a Ref there"
            if arguments
            else "no DMA call there whose arguments semfix can read"
        )
        result.lines.append(f"Cannot fix it automatically: {why}.")
        return [], []
    one = len(suspects) == 1
    proven: list[Finding] = []
    open_ = []
    for parameter, argument in suspects:
        inside = [f for f in findings if _within(f, argument, evidence.text)]
        usable = [f for f in inside if f.fixable and (one or f.safety == "safe")]
        proven += usable
        reported = [f": {_said(f)}" for f in inside if not f.fixable]  # the engine's reason it does not fix
        if not usable:
            open_.append(f"`{ast.unparse(argument)}` ({parameter}){''.join(reported[:1])}")
    if not one:
        names = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a in suspects)
        result.lines.append(
            f"The error does not say which of these is not a Ref ({names}): only fixes safe on their own are made."
        )
    if open_:
        result.lines.append(f"Not fixed, check by hand: {'; '.join(open_)}.")
    for parameter, argument, _ in arguments:
        if parameter not in about and any(f.fixable and _within(f, argument, evidence.text) for f in findings):
            result.lines.append(f"`{ast.unparse(argument)}` ({parameter}): not proven by this error, left alone.")
    result.fixed = not open_
    return (proven, []) if one else ([], proven)


def _kind_evidence(
    result: Blame,
    evidence: Evidence,
    calls: list[ast.Call],
    about: frozenset[str] | None,
    findings: Sequence[Finding],
    where: Callable[[int], str],
) -> None:
    """A semaphore of the wrong kind: the findings of the rules that find it (the error table's)
    at the semaphore arguments the error is about (`about`; None: every one of the calls), each
    naming the allocation that proves it."""
    arguments = [a for name, a, _ in _arguments(evidence, calls, dma=False) if about is None or name in about]
    found = [f for f in findings if f.rule in _KIND_RULES and any(_within(f, a, evidence.text) for a in arguments)]
    result.lines += [f"At {where(f.line)}, {_said(f)}" for f in found]
    if not found:
        result.lines.append(
            "Cannot point at the semaphore: semfix proves a semaphore's kind only from its allocation"
            " (`SemaphoreType.X` in `scratch_shapes`, a grid spec or `run_scoped`) bound to a parameter"
            " passed as it is or as an `.at[...]` view."
        )
    result.lines.append("No fix: allocate the semaphore as the kind the operation takes, or pass one that is.")


def _with_their_plans(chosen: list[Finding], fixes: list[Finding]) -> list[Finding]:
    """The chosen fixes with the fixes the engine makes only together with them: those of the
    same decision (a carried read's plan rewrites every use of the name and removes its
    assignment, or nothing), which share its edits (`Fix.edits`). `fixes` are those of the
    function that holds them all."""
    decisions = {f.fix.edits for f in chosen if f.fix is not None and f.fix.edits}
    together = [f for f in fixes if f.fix is not None and f.fix.edits in decisions]
    return list({(f.line, f.column): f for f in chosen + together}.values())
