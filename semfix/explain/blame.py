"""What a JAX error raised at one line is about, and which of the engine's findings fix it.

`semfix explain` (semfix/explain/search.py) reads the traceback; the engine decides every
rewrite. One proof: the log only chooses the calls (following a descriptor from `.start()` or
a wait back to every copy that may have built it) and the arguments the error is about; at
each, blame takes the engine's findings, with the edits that come with them
(`_with_their_plans`). A safe fix is made. An unsafe one, what `fix --unsafe-fixes` writes, is
made only where the error is about that one argument, and said to be unsafe; elsewhere it is
named, and explain exits 1. Nothing is counted "plainly a Ref" to single an argument out.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import cast

from semfix.analysis.context import Context
from semfix.analysis.evidence import Evidence
from semfix.analysis.nodes import Text, parse
from semfix.analysis.scopes import Scope, Tracking
from semfix.analysis.suppressions import Suppressions
from semfix.catalog import Operation
from semfix.engine.loop import arguments as given_for
from semfix.engine.run import analyse
from semfix.explain.errors import BY_KEY, DMAS, ERRORS
from semfix.findings import Finding
from semfix.rules import GATES, RULES
from semfix.selection import build_settings
from semfix.settings import Launch, ReadThrough, Settings

# The rules on semaphore and DMA arguments (those the skim decides, without a text gate): the
# errors explain reads are about arguments. Unsafe fixes count: the traceback may prove them.
_ANALYSIS = build_settings(select=[code for code, gate in GATES.items() if not gate.text_gate], unsafe_fixes=True)
#: The rules that find a semaphore of the wrong kind, as the table of JAX's errors names them.
_KIND_RULES = frozenset(code for error in ERRORS if error.wrong_kind for code in error.rules)


#: Expressions whose value is never a Ref: arithmetic, comparisons, constants.
_COMPUTED = (ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Constant)


#: `Through.seen` where the log lists an installed helper's def (pytest --tb=long), so its parameters' positions.
LISTING = "pytest's listing of its def"


@dataclass(frozen=True)
class Through:
    """What a frame's callee passed on unchanged: its name, and the parameters the error is
    about, each with its position (None: keyword only); None where its source is not read.
    `seen`: where the log showed them, when its source is not on this machine (an installed
    helper's): its def in pytest's listing, or only its line (its names then keyword only)."""

    function: str
    params: tuple[tuple[str, int | None], ...] | None
    seen: str | None = None

    @property
    def unread(self) -> bool:
        """The helper's source is not read: what it does with the arguments is not seen."""
        return self.params is None or self.seen is not None


@dataclass
class Blame:
    """What to say about the error, the fixes to make, and whether they settle it."""

    lines: list[str] = field(default_factory=list)
    chosen: list[Finding] = field(default_factory=list)
    fixed: bool = False  # a fix is made at the arguments the error is about, and none is left open
    encoding: str = "utf-8"  # the source's, for writing the fixes back
    settings: Settings | None = None  # those the chosen fixes are made under, where not explain's own
    # the arguments the error is about are parameters of the function, passed on unchanged:
    # what they were given is at its caller, the traceback's frame before
    passed_on: Through | None = None


def blame(
    source: bytes,
    line: int,
    suspects: frozenset[str] | None,
    where: Callable[[int], str] = "line {}".format,
    *,
    wrong_kind: bool = False,
    shape: str | None = None,
    through: Through | None = None,
    enabled: frozenset[str] | None = None,
    traced: bool = False,
    viewed: bool = False,
    run: tuple[tuple[Launch, ...], ReadThrough] = ((), ReadThrough()),
) -> Blame:
    """The error raised at `line`: `suspects` names the catalog parameters it is about (None: a
    semaphore call's error, about whichever call on the line takes one). Raises SourceError
    for source the engine cannot read. `where` words a line of `source` (a notebook's cells are
    one module, and the user counts lines within a cell). `wrong_kind`: the error is about the
    semaphore's kind, which no rewrite settles: the findings there of the rules the error table
    names for it are named, not fixed. `shape`: the shape of the value JAX got, when not one
    semaphore; every fix of a read keeps it, so none is made. `through`: the line calls a
    function (the traceback's next frame) that passed these parameters on. `enabled`: the rules
    the project's settings run on the file (None: all); another's findings are named, never fixed.
    `traced`: JAX called the function holding the line (a kernel), so its parameters are the
    Refs JAX made, not what a caller in the traceback gave: the error is about this line.
    `viewed`: JAX got jnp's `.at` of a value (`x.at[i]`), so what it is about is `x` (a
    parameter's value is its caller's: `helper(flags[0])`, `sem.at[slot]` there).
    `run`: what the run's other modules give the file, as `semfix fix` of them gives it: the
    launches of its kernels there (`Settings.launched_by_run`), what it reads through them
    (`Settings.read_through`).

    One proof: the log only chooses the calls and the arguments; a fix is what the engine
    decides for that argument, made (and proven) by running it again with `settings_for(chosen)`.
    A safe fix is made; an unsafe one (what `fix --unsafe-fixes` writes) only where the error
    is about that one argument, and said to be unsafe."""
    linked = (
        replace(_ANALYSIS, launched_by_run=run[0], read_through=run[1]) if run[0] or run[1] != ReadThrough() else None
    )
    analysis = analyse(source, linked or _ANALYSIS, apply_fixes=False)
    findings, result = analysis.findings, Blame(encoding=analysis.encoding, settings=linked)
    scopes = Tracking()
    scopes.stars = dict(run[1].stars)
    scopes.build(parse(analysis.text))
    evidence = Context(Text(analysis.text), scopes, linked or _ANALYSIS)  # the run's links, as the rules had them
    evidence.gather()  # the kernels' allocations: a semaphore's kind, where a helper hides it from the rules
    if through is not None:
        arguments, problem = _given(scopes, line, through), None
        if through.seen and through.params:
            problem = None if arguments else _unmapped(scopes, line, through)
            result.lines += [_mapped(through, arguments)] if arguments else []
    else:
        calls, problem = _calls(scopes, evidence, line)
        if not problem and wrong_kind:
            _kind_evidence(result, evidence, calls, suspects, findings, where)
            return result
        dma = suspects is not None
        arguments = [
            u for a in _arguments(evidence, calls, dma) if suspects is None or a[0] in suspects for u in _unpacked(a)
        ]
        if suspects is not None and not problem:
            for parameter, argument, _ in _arguments(evidence, calls, dma):
                if parameter not in suspects and any(
                    f.fixable and _within(f, argument, evidence.text) for f in findings
                ):
                    result.lines.append(
                        f"`{ast.unparse(argument)}` ({parameter}): not proven by this error, left alone."
                    )
    if viewed:
        arguments = [(parameter, _viewed(argument), scope) for parameter, argument, scope in arguments]
    if problem or not arguments:
        none = "no DMA call there whose arguments semfix can read" if suspects else "no semaphore argument there"
        result.lines.append(f"Cannot fix it automatically: {problem or none}.")
        return result
    if not traced and (passed := _passed_in(arguments)) is not None:
        result.lines.append(
            f"What it is about are parameters of `{passed.function}`, passed on unchanged: its caller gave them."
        )
        result.passed_on = passed
        return result
    at = {id(a): [f for f in findings if _within(f, a, evidence.text)] for _, a, _ in arguments}
    if shape:
        _shaped(result, arguments, at, shape, where)
        return result
    unread = through if through is not None and through.unread else None  # an installed helper's, its source absent
    _decide(result, scopes, evidence, arguments, at, where, unread=unread, enabled=enabled)
    scope = arguments[-1][2].function_scope()
    low, high = getattr(scope.node, "lineno", 1), getattr(scope.node, "end_lineno", 10**9)
    fixes = [f for f in findings if f.fixable and low <= f.line <= high and (enabled is None or f.rule in enabled)]
    result.chosen = _with_their_plans(result.chosen + _same_ref(scopes, evidence, result.chosen, fixes), fixes)
    result.lines += [said_fix(finding, where) for finding in sorted(result.chosen, key=lambda f: (f.line, f.column))]
    params = [a for a in arguments if _passed_in([a]) is not None]
    if not result.chosen and params and not traced:  # nothing proven here: what the caller gave the rest may be
        result.passed_on = _passed_in(params)
        names = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a, _ in params)
        result.lines.append(f"{names}: parameters passed on unchanged; what the caller gave them is looked at too.")
    return result


def migrate(
    source: bytes, line: int, rules: tuple[str, ...], settings: Settings, where: Callable[[int], str] = "line {}".format
) -> Blame:
    """A name JAX moved, read at `line`: the migration's rules (`rules`) there, and their fixes
    in the whole file (the next run would stop at the next such name), under the project's
    settings and JAX floor, as `fix --extend-select` with those rules makes them; below the floor a
    rename is not made, and the finding says which floor it needs."""
    settings = replace(settings, enabled=settings.enabled | set(rules), unsafe_fixes=False)
    analysis = analyse(source, settings, apply_fixes=False)
    found = [f for f in analysis.findings if f.rule in rules]
    result = Blame(encoding=analysis.encoding, settings=settings)
    here = [f for f in found if f.line == line]
    result.lines += [f"At {where(f.line)}, {_said(f)}" for f in here]
    result.chosen = [f for f in found if f.fixable]
    result.lines += [said_fix(f, where) for f in result.chosen]
    result.fixed = bool(here) and all(f.fixable for f in here)
    if not here:
        result.lines.append(f"Cannot fix it automatically: {', '.join(rules)} finds nothing at {where(line)}.")
    return result


def said_fix(finding: Finding, where: Callable[[int], str] = "line {}".format) -> str:
    """A fix explain makes, in words: where, the edit, the rule, and why an unsafe one is made."""
    edit = (
        f"`{finding.original}` -> `{finding.replacement}`"
        if finding.replacement
        else f"remove `{finding.original.strip()}`"
    )
    unsafe = (
        "; unsafe: what `semfix fix --unsafe-fixes` writes, made because the error is about this argument alone"
        if finding.safety != "safe"
        else ""
    )
    return f"Fix: {where(finding.line)}: {edit} ({finding.rule}{unsafe})"


def proven_next(source: bytes, chosen: Iterable[Finding], enabled: frozenset[str] | None) -> list[Finding]:
    """The engine's safe fixes, in `source` (the file with the chosen fixes written), of the
    Refs the chosen fixes view: the log proved `sems[slot]` reads an array Ref; the file,
    rewritten to `sems.at[slot]`, now proves it to the engine, which makes the same fix of the
    Ref's other reads (the wait after the signal), where JAX would stop the next run."""
    analysis = analyse(source, _ANALYSIS, apply_fixes=False)
    scopes = Tracking()
    scopes.build(parse(analysis.text))
    evidence = Evidence(Text(analysis.text), scopes)
    fixes = [f for f in analysis.findings if f.fixable and (enabled is None or f.rule in enabled)]
    safe = [f for f in fixes if f.safety == "safe"]
    found = _same_ref(scopes, evidence, list(chosen), safe)
    return _with_their_plans(found, fixes) if found else []


def _decide(
    result: Blame,
    scopes: Tracking,
    evidence: Evidence,
    arguments: list[tuple[str, ast.expr, Scope]],
    at: dict[int, list[Finding]],
    where: Callable[[int], str],
    *,
    unread: Through | None,
    enabled: frozenset[str] | None,
) -> None:
    """Each argument's findings: a safe fix is chosen; an unsafe one only where the error is
    about this one argument, given to no helper whose source is not read (`unread`: what it does
    with it is not seen, whichever argument the log names) and the Ref it views is not a parameter of a
    function the file calls (the log proves only what one of its calls gave it); the rest are named."""
    pinned = len(arguments) == 1 and unread is None
    open_: list[str] = []
    for parameter, argument, scope in arguments:
        for finding in at[id(argument)]:
            said = f"`{ast.unparse(argument)}` ({parameter}): {_said(finding)}"
            if not finding.fixable:
                open_.append(said)
                continue
            if enabled is not None and finding.rule not in enabled:
                open_.append(f"{said} (not made: the project's settings turn {finding.rule} off for this file)")
                continue
            shared = None if finding.safety == "safe" else _shared_parameter(scopes, _base(finding), scope)
            if shared is None and finding.fix is not None and finding.fix.doubt == "rank":
                shared = "the log does not show how many indices pick one semaphore: the view may be a row"
            elif shared is None and finding.fix is not None and finding.fix.doubt == "value":
                shared = "the log does not show whether what is indexed is a Ref or a value already read out of one"
            elif shared is None and finding.fix is not None and finding.fix.doubt == "kind":
                shared = (
                    "the log shows a value was read, not whether it was read out of an array Ref (then the view"
                    " is the fix) or out of an element of a tuple of Refs (then dropping the read is)"
                )
            if finding.safety == "safe" or pinned and shared is None:
                result.chosen.append(finding)
                result.lines.append(f"At {where(finding.line)}, {_said(finding)}")
                continue
            why = shared or (
                f"the line {parameter}: the log proves nothing about the arguments inside that call"
                if unread is not None and unread.params is None
                else f"`{unread.function}`'s source is not on this machine: the log names the argument, but what"
                " the helper does with it is not seen"
                if unread is not None
                else f"the line {parameter}: the log proves nothing about the arguments inside that call"
                if len(arguments) == 1
                else f"the error is about {len(arguments)} arguments ("
                + ", ".join(f"`{ast.unparse(a)}`" for _, a, _ in arguments)
                + "), and does not say which one is not a Ref"
            )
            open_.append(f"{said} (`semfix fix --unsafe-fixes` would write `{finding.replacement}`; not made: {why})")
    comments = Suppressions(evidence.text.text)
    spans = sorted({n for _, a, _ in arguments for n in range(a.lineno, (a.end_lineno or a.lineno) + 1)})
    lines = [n for n in spans if any(comments.silence(code, [n]) for code in RULES)]
    if not result.chosen and not open_ and (lines or any(comments.silence(code, []) for code in RULES)):
        spot = f"on line {', '.join(map(str, lines))}" if lines else "for the whole file"
        result.lines.append(
            f"Not fixed: a comment {spot} (`# noqa`, `# semfix: ignore`) silences semfix there: it neither reports"
            " nor fixes this. Remove the comment and run again, or fix it by hand."
        )
    elif not result.chosen and not open_:
        names = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a, _ in arguments)
        result.lines.append(f"Cannot fix it automatically: semfix proves no fix at {names}; check by hand.")
    result.lines += [
        f"`{ast.unparse(a)}` ({p}) is computed (arithmetic, a comparison, a constant): a value, never a Ref;"
        " pass a Ref (write the value into a scratch Ref first)."
        for p, a, _ in arguments
        if isinstance(a, _COMPUTED) and not at[id(a)]
    ]
    if open_:
        result.lines.append(f"Not fixed, check by hand: {'; '.join(open_)}.")
    result.fixed = bool(result.chosen) and not open_


def _shaped(
    result: Blame,
    arguments: list[tuple[str, ast.expr, Scope]],
    at: dict[int, list[Finding]],
    shape: str,
    where: Callable[[int], str],
) -> None:
    """JAX got a Ref of `shape`, not one semaphore: every fix of a read keeps that shape, so
    none is made; the engine's findings at the arguments are named."""
    for parameter, argument, _ in arguments:
        found = at[id(argument)]
        result.lines += [f"At {where(f.line)}, {_said(f)}" for f in found if not f.fixable]
        result.lines += [
            f"Not fixed: the log proves `{f.original}` has shape {shape}: `{f.replacement}` would be a Ref of"
            " that shape, not one semaphore. Index every axis (`.at[i, j]`), or check by hand."
            for f in found
            if f.fixable
        ]
        if not found:
            result.lines.append(
                f"Not fixed: `{ast.unparse(argument)}` ({parameter}) is a Ref of shape {shape}, not one semaphore"
                f" ({', '.join(BY_KEY['shape'].rules)}: a whole semaphore array where one is needed): index every"
                " axis of it (`.at[i]`), or check by hand."
            )


def settings_for(findings: Iterable[Finding], base: Settings | None = None) -> Settings:
    """Settings under which the engine makes these fixes (found by `blame`, or by `migrate`
    under `base`) and no other, so that `explain` writes them through the same run and proof as `fix`."""
    return replace(base or _ANALYSIS, chosen=frozenset((f.line, f.column, f.end_line, f.end_column) for f in findings))


#: A copy descriptor's methods that raise JAX's DMA errors: its start, and its waits (JAX 0.12's
#: `.wait()` waits on the read, then the write; `wait_read`/`wait_write` are 0.12's names).
_DESCRIPTOR_METHODS = frozenset({"start", "wait", "wait_recv", "wait_send", "wait_read", "wait_write"})


def _calls(scopes: Tracking, evidence: Evidence, line: int) -> tuple[list[ast.Call], str | None]:
    """The catalog calls the error at `line` is about, or why they cannot be told: the calls
    spanning the line (not a call holding them, such as a `lax.cond` around a lambda's); at a
    descriptor's `.start()` or wait, every copy that may have built it."""
    spanning = [c for c in scopes.calls if c.lineno <= line <= (c.end_lineno or c.lineno)]
    for call in spanning:
        if isinstance(call.func, ast.Attribute) and call.func.attr in _DESCRIPTOR_METHODS:
            owner = call.func.value
            if isinstance(owner, ast.Call):
                return _copies_of(scopes, evidence, owner, line)
            if isinstance(owner, ast.Name):
                return _built(scopes, evidence, owner, call, line)
            if evidence.operation(call) is None:
                return [], f"the descriptor on line {line} is not a name or a call semfix can follow"
    return [c for c in spanning if evidence.operation(c) is not None], None


def _built(
    scopes: Tracking,
    evidence: Evidence,
    name: ast.Name,
    use: ast.stmt | ast.expr,
    line: int,
    function: Scope | None = None,  # the function of `use`, where it is a statement (a loop)
    listed: bool = False,
) -> tuple[list[ast.Call], str | None]:
    """The copies whose descriptor `name` may hold at `use`: every assignment of it in the
    function that can reach there (in both branches of an `if`, or lower in a loop). A
    `@pl.when` body runs where it is defined: a name it does not bind is looked up at its def,
    in the function around it. A loop variable over a list (`for copy in copies`) holds every
    copy the list is built of (`listed`: `[make_async_copy(...) for k in ...]`, or written out)."""
    function = function or scopes.scope_of[id(use)].function_scope()
    while name.id not in function.bindings and _runs_where_defined(function.node) and function.parent:
        use, function = cast(ast.FunctionDef, function.node), function.parent.function_scope()
    bindings = function.bindings.get(name.id, [])
    problem = f"`{name.id}` on line {line} is not assigned a copy descriptor in the same function"
    loops = [b.node for b in bindings if isinstance(b.node, ast.For) and isinstance(b.node.target, ast.Name)]
    holding = [loop for loop in loops if _holds(loop, use)] if len(loops) == len(bindings) else []
    if holding and isinstance(holding[-1].iter, ast.Name):  # the innermost loop binding it, around the use
        return _built(scopes, evidence, holding[-1].iter, holding[-1], line, function, listed=True)
    kinds = {"assign", "tuple_literal"} if listed else {"assign"}  # a list written out is a literal
    if not bindings or function.node is None or any(b.kind not in kinds for b in bindings):
        return [], problem
    calls: list[ast.Call] = []
    for assignment in _reaching(function.node, [b.assignment for b in bindings], use):
        for each in _elements(assignment.value, listed):
            found, why = _copies_of(scopes, evidence, each, line) if isinstance(each, ast.Call) else ([], problem)
            if why:
                return [], why
            calls += found
    return calls, None


def _unpacked(argument: tuple[str, ast.expr, Scope]) -> list[tuple[str, ast.expr, Scope]]:
    """A name a loop unpacks from a tuple written out (`for src, dst, sem in ((a, b, c), (d, e, f)):`)
    as what it takes on each pass (`c`, `f`); any other argument as it is."""
    parameter, name, scope = argument
    bindings = scope.lookup(name.id)[1] if isinstance(name, ast.Name) else []
    loop = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "element" else None
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Tuple) or not isinstance(name, ast.Name):
        return [argument]
    names = [getattr(target, "id", None) for target in loop.target.elts]
    rows = loop.iter.elts if isinstance(loop.iter, (ast.Tuple, ast.List)) else []
    if (
        names.count(name.id) != 1
        or not rows
        or any(not isinstance(row, (ast.Tuple, ast.List)) or len(row.elts) != len(names) for row in rows)
    ):
        return [argument]
    return [(parameter, cast(ast.Tuple, row).elts[names.index(name.id)], scope) for row in rows]


def _elements(value: ast.expr | None, listed: bool) -> list[ast.expr | None]:
    """What an assignment gives a name (`listed`: each element of the list it builds)."""
    if not listed:
        return [value]
    if isinstance(value, (ast.List, ast.Tuple)):
        return list(value.elts)
    return [value.elt] if isinstance(value, ast.ListComp) else [None]


def _runs_where_defined(function: ast.AST | None) -> bool:
    """A def decorated `@pl.when(...)`: its body runs there and then, once or not at all."""
    decorators = function.decorator_list if isinstance(function, ast.FunctionDef) else []
    return any(
        isinstance(d, ast.Call) and getattr(d.func, "attr", getattr(d.func, "id", None)) == "when" for d in decorators
    )


def _copies_of(
    scopes: Tracking, evidence: Evidence, call: ast.Call, line: int, depth: int = 0
) -> tuple[list[ast.Call], str | None]:
    """The catalog call that built a descriptor: the call itself, or what the function of the
    file it calls returns (`def fetch(slot): return pltpu.make_async_copy(...)`)."""
    if evidence.operation(call) is not None:
        return [call], None
    function = None
    if isinstance(call.func, ast.Name) and depth < 8:
        _, bindings = scopes.scope_of[id(call)].lookup(call.func.id)
        function = bindings[0].node if [b.kind for b in bindings] == ["def"] else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [], f"the descriptor on line {line} is built by `{ast.unparse(call.func)}`, which semfix cannot follow"
    returned = [r.value for r in _own(function) if isinstance(r, ast.Return) and r.value is not None]
    calls: list[ast.Call] = []
    for value in returned:
        found, why = (
            _copies_of(scopes, evidence, value, line, depth + 1)
            if isinstance(value, ast.Call)
            else ([], f"`{function.name}` returns `{ast.unparse(value)}`, which semfix cannot follow")
        )
        if why:
            return [], why
        calls += found
    return calls, None if calls else f"`{function.name}` returns no copy descriptor semfix can follow"


def _own(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a def's body, not those of the defs, lambdas and classes inside it."""
    for child in ast.iter_child_nodes(function):
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            yield child
            yield from _own(child)


def _reaching(
    function: ast.AST, assignments: list[ast.Assign | ast.AnnAssign], use: ast.stmt | ast.expr
) -> list[ast.Assign | ast.AnnAssign]:
    """The assignments that can reach `use`: all but those every path to it passes another of
    them on. An assignment `L[j]` in a block `L` whose statement `L[k]` (k > j) holds the use
    hides every assignment outside `L[j:k + 1]`: a path into `L[k]` from elsewhere comes
    through `L[j]` (a loop's next pass too)."""
    alive = list(assignments)
    block: list[ast.stmt] | None = getattr(function, "body", None)
    while block:
        k = next((i for i, s in enumerate(block) if _holds(s, use)), None)
        if k is None:
            break
        j = next((i for i in range(k - 1, -1, -1) if block[i] in assignments), None)
        if j is not None:
            alive = [a for a in alive if a is block[j] or any(_holds(s, a) for s in block[j + 1 : k + 1])]
        block = next((b for b in _blocks(block[k]) if any(_holds(s, use) for s in b)), None)
    return alive


def _holds(statement: ast.stmt, node: ast.stmt | ast.expr) -> bool:
    start, end = (statement.lineno, statement.col_offset), (statement.end_lineno or 0, statement.end_col_offset or 0)
    return start <= (node.lineno, node.col_offset) and (node.end_lineno or 0, node.end_col_offset or 0) <= end


def _blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement lists of a compound statement (an `if`'s body and else, a `try`'s handlers, ...)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return
    for _, value in ast.iter_fields(statement):
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            yield value
        elif isinstance(value, list):
            yield from (item.body for item in value if isinstance(item, (ast.ExceptHandler, ast.match_case)))


def _calls_of(scopes: Tracking, line: int, function: str) -> list[tuple[ast.Call, int]]:
    """The calls at `line` of `function`, or a `functools.partial(function, ...)` there, each with
    where its arguments for the function start."""
    calls: list[tuple[ast.Call, int]] = []
    for c in scopes.calls:
        if c.lineno <= line <= (c.end_lineno or c.lineno):
            called = getattr(c.func, "id", getattr(c.func, "attr", None))
            if called == function:
                calls.append((c, 0))
            elif called == "partial" and c.args and getattr(c.args[0], "id", None) == function:
                calls.append((c, 1))
    return calls


def _given(scopes: Tracking, line: int, through: Through) -> list[tuple[str, ast.expr, Scope]]:
    """The arguments a call at `line` of `through.function` gives the parameters it passed on
    (by position or keyword), or a `functools.partial(function, ...)` there, whose arguments
    come after the function; without them, the call itself."""
    found: list[tuple[str, ast.expr, Scope]] = []
    for call, shift in _calls_of(scopes, line, through.function):
        scope = scopes.scope_of[id(call)]
        if through.params is None:
            found.append((f"calls `{through.function}`, whose source semfix cannot read", call, scope))
            continue
        keywords = {k.arg: k.value for k in call.keywords}
        for name, at in through.params:
            position = None if at is None else at + shift
            positional = (
                position is not None
                and position < len(call.args)
                and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1])
            )
            argument = call.args[position] if positional and position is not None else keywords.get(name)
            if argument is not None:
                found.append((f"given to `{through.function}`'s `{name}`", argument, scope))
    return found


def _mapped(through: Through, arguments: list[tuple[str, ast.expr, Scope]]) -> str:
    """How the log names the caller's argument an installed helper (its source not here) got."""
    given = ", ".join(f"`{ast.unparse(a)}` ({p})" for p, a, _ in arguments)
    if through.seen == LISTING:
        return (
            f"`{through.function}`'s source is not on this machine; {LISTING} shows what the error is about: {given}."
        )
    names = " and ".join(f"`{name}`" for name, _ in through.params or ())
    return (
        f"`{through.function}`'s source is not on this machine; the log prints {through.seen}, which passes on its"
        f" {names}, and the call names it by keyword: {given} (unless the helper rebinds it before that line,"
        " which the log does not show)."
    )


def _unmapped(scopes: Tracking, line: int, through: Through) -> str:
    """Why the caller's argument an installed helper passed on cannot be told: the log shows
    which of its parameters (its line), not their positions (its def), and none is given by keyword."""
    names = " and ".join(f"`{name}`" for name, _ in through.params or ())
    calls = _calls_of(scopes, line, through.function)
    maybe = [a for call, shift in calls for a in call.args[shift:] if not isinstance(a, ast.Starred)]
    which = (
        f"which of {', '.join(f'`{ast.unparse(a)}`' for a in maybe)} at `{ast.unparse(calls[0][0])}` that is"
        if maybe and len(calls) == 1
        else "which argument that is"
    )
    return (
        f"`{through.function}`'s source is not on this machine and the log prints {through.seen}, not its def:"
        f" the error is about its {names}, and {which} cannot be told by position (pytest --tb=long prints"
        " the def; a keyword argument names it)"
    )


def _base(finding: Finding) -> str:
    return finding.original.split("[", 1)[0].strip()


def _same_ref(scopes: Tracking, evidence: Evidence, chosen: list[Finding], fixes: list[Finding]) -> list[Finding]:
    """The engine's safe fixes (what `fix` writes) of the other reads of a Ref a chosen fix
    reads, where its name resolves to the same binding: JAX stops at the first, and a read
    explain does not know (`semaphore_read`'s) would stop the next run."""
    scopes_at = {evidence.text.start(node)[:2]: scopes.scope_of[id(node)] for node in scopes.subscripts}

    def bound(finding: Finding) -> int | None:
        where = scopes_at.get((finding.line, finding.column - 1))
        return None if where is None else id(where.lookup(_base(finding))[1])

    refs = {bound(f) for f in chosen} - {None}
    return [f for f in fixes if f.safety == "safe" and bound(f) in refs]


def _shared_parameter(scopes: Tracking, name: str, scope: Scope) -> str | None:
    """Why a proof about `name` at one call of its function is no proof at the others: it is a
    parameter of a function the file calls (a helper), which other calls may give a tuple."""
    found, bindings = scope.lookup(name)
    function = found.node if found is not None else None
    if [b.kind for b in bindings] != ["param"] or not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    lines = sorted({c.lineno for c in scopes.calls if getattr(c.func, "id", None) == function.name})
    return (
        f"`{name}` is a parameter of `{function.name}`, which is called at line{'s' * (len(lines) > 1)} "
        f"{', '.join(map(str, lines))}: the log proves only what one call gave it"
        if lines
        else None
    )


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


def _viewed(argument: ast.expr) -> ast.expr:
    """What `x.at[i].at[j]` takes its views of: `x`."""
    while (
        isinstance(argument, ast.Subscript)
        and isinstance(argument.value, ast.Attribute)
        and argument.value.attr == "at"
    ):
        argument = argument.value.value
    return argument


def _passed_in(arguments: list[tuple[str, ast.expr, Scope]]) -> Through | None:
    """The parameters of the function holding the calls that every argument the error is about
    is, where it never rebinds them: the value each was given is its caller's."""
    function = arguments[0][2].function_scope().node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    positional = [a.arg for a in function.args.posonlyargs + function.args.args]
    params = []
    for _, argument, scope in arguments:
        if not isinstance(argument, ast.Name) or scope.function_scope().node is not function:
            return None
        found, bindings = scope.lookup(argument.id)
        if (
            found is None
            or found.function_scope() is not scope.function_scope()
            or [b.kind for b in bindings] != ["param"]
        ):
            return None
        position = positional.index(argument.id) if argument.id in positional else None
        params.append((argument.id, position))
    return Through(function.name, tuple(params))


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
