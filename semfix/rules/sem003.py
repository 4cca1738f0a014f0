"""SEM003 value-carried-through-variable

## What it does
Flags a variable that holds a value read from a semaphore Ref (`done = sem[...]`,
`done = sems[1]`, `done: jax.Array = sem[...]`) and is then passed as the semaphore; rewrites
each use to what the read passed directly is fixed to (`sem`, `sems.at[1]`) and drops the
assignment.

## Why is this bad?
The variable holds the semaphore's value, not the semaphore, so tracing fails at the call with
`ValueError: Cannot signal on a non-semaphore Ref: semaphore[]`, a line away from the read.

## Example
```python
done = sem[...]
pl.semaphore_wait(done, 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

## Fix safety
A carried read gets the verdict of the read passed directly (`pl.semaphore_wait(sems[1])`),
from the very same rules: SEM001's fix; SEM002's view only where its evidence proves `sems` a
Ref (its unsafe fix is never made here); SEM004's report, at the use, for a slice or a whole
semaphore array; nothing for an item of a tuple of Refs, which is a Ref already.

Then it is safe when the variable is a function's local assigned once, used only as semaphore
arguments in the same block, and the Ref is not rebound in between. A class's or module's name may be
read as an attribute elsewhere, and `eval`, `exec`, `locals()`, `vars()`, `dir()` or a nested
`nonlocal` reach a local by name, so those are reported. The expression passed instead is read
again at each use, so a Ref its indices read (`slot_ref` in `sems.at[slot_ref[0]]`) must hold
the same data there: it must be a parameter of the function holding the read, written nowhere
in it in any way (a store through any chain of views, `pl.store` or an atomic, a DMA into it or
a view of it, a call or another name given it), checked exactly as SEM005 checks its buffer.
Otherwise every use is reported with the line of the read.

A read in a literal that a loop target or an unpacked name takes (`for sem in (sems[0], sems[1])`,
`for src, dst in ((x[0], y), ...)`, `a, b = sems[0], sems[1]`, or through a name bound once to
the literal) is reported at the read, and fixed there, to what the read passed directly is fixed
to, where that is safe and the name is as above: a function's local bound once, used only as
such arguments, in the same scope, seen by no `eval` or `nonlocal`, and the literal written in
the loop or the assignment itself. The value is then made where it was, so nothing is read
again elsewhere; for a DMA buffer (SEM005) nothing may write the Ref, as for a carried read.
"""

from __future__ import annotations

import ast
import copy
import tokenize
from collections.abc import Callable
from typing import NamedTuple

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.fixes import Decision, Removal
from semfix.analysis.nodes import (
    Rewrite,
    alone_on_its_lines,
    content_read,
    enclosing,
    end_of,
    first_line,
    holder,
    read_target,
    tokens,
    unpacked,
)
from semfix.analysis.scopes import Access, Binding, Scope
from semfix.analysis.writes import index_reads, written
from semfix.findings import Finding
from semfix.patterns import compiled
from semfix.rules import sem004
from semfix.rules.base import Invalid, Rule

CODE = "SEM003"
#: What a use and the dropped assignment are told; another rule passes its own.
WORDS = (
    "`{name}` holds a value read from the semaphore Ref at line {line}; pass the Ref `{ref}`",
    "`{assign}` only carried the read to semaphore arguments; removed with them",
    "`{read}` reads a value out of the semaphore Ref, which reaches the semaphore argument `{name}` at line "
    "{line} as a {how}; pass the Ref `{ref}`",
)

RULE = Rule(
    code=CODE,
    name="value-carried-through-variable",
    summary="A variable holds a value read from a semaphore Ref and is passed as the semaphore; pass "
    "the Ref and drop the variable when that is its only use.",
    fix="safe",
    fix_note="each use becomes what the read passed directly is fixed to, and the assignment goes, where the "
    "variable is a local assigned once and used only as semaphores; else every use is reported",
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl


def count_kernel(sem, o_ref):
    count = pl.semaphore_read(sem)
    o_ref[0] = count
    pl.semaphore_wait(sem, count)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    done = sem[...]
    pl.semaphore_signal(done, 1)
    pl.semaphore_wait(done, 1)
""",
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sem, 1)
    pl.semaphore_wait(sem, 1)
""",
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    done = sem[...]
    o_ref[0] = done
    pl.semaphore_wait(done, 1)
""",
            None,  # `done` is also used as a value: dropping it would change the kernel
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def ring_kernel(slot_ref, sems):
    done = sems.at[slot_ref[0]][...]
    slot_ref.at[0:1][...] = 1 - slot_ref[0:1]
    pl.semaphore_wait(done, 1)
""",
            None,  # `sems.at[slot_ref[0]]` at the wait would read the index written since the read
        ),
    ),
)

_UNDECIDED = object()
# After a statement alone on its lines: an optional `;`, then a comment.
_SOLE_END = compiled(r"[ \t]*(?:;[ \t]*)?(?:#[^\r\n]*)?(?:\r\n?|\n)?\Z")


#: Another rule's own reason a carried read must not be rewritten (SEM005: the Ref may be written
#: before a use), given the Ref, its scope, the statement carrying the read and its uses' ids.
Guard = Callable[[Context, ast.expr, Scope, ast.stmt, set[int]], "str | None"]


class Verdict(NamedTuple):
    """What the rules decide for the read passed directly (`f(X[...])` for `v = X[...]; f(v)`):
    its findings, and where they fix it safely, the text passed instead and its node."""

    findings: list[Finding]
    fix: str | None = None
    replacement: ast.expr | None = None


#: The rules' verdict on a read passed directly as the argument of the call (the engine's).
Judge = Callable[[Context, ast.Call, ast.expr, Scope], Verdict]


class Carried:
    """`v = X[...]` (or `X[i]`, `X[0:8]`, `v: T = ...`) whose `v` reaches the arguments a rule
    looks at. One plan per assignment, shared by its uses: either every use is rewritten to
    pass what the read passed directly is fixed to (`X`, `X.at[i]`), and the assignment goes
    with its line, or nothing is fixed."""

    __slots__ = ("assign", "read", "uses", "body", "code", "words", "verdict", "blocker", "decision", "fix")

    def __init__(
        self,
        assign: ast.Assign | ast.AnnAssign,
        read: ast.Subscript,
        uses: list[ast.Name],
        body: list[ast.stmt] | None,
        code: str,
        words: tuple[str, str, str],
        verdict: Verdict,
    ) -> None:
        self.assign, self.read, self.uses = assign, read, uses  # `read`: `X[...]`, the value assigned
        self.body = body  # the statement list holding the assignment
        self.code, self.words, self.verdict = code, words, verdict
        self.blocker: str | None = None  # why the rewrite is not safe; None when it is
        self.decision: object = _UNDECIDED
        self.fix: Decision | None = None  # once decided and accepted: every use rewritten and the assignment removed

    @property
    def ref(self) -> ast.expr:
        """X, the Ref the value was read from."""
        return self.read.value


def check(
    ctx: Context,
    call: ast.Call,
    use: ast.Name,
    scope: Scope,
    judge: Judge,
    *,
    code: str = CODE,
    words: tuple[str, str, str] = WORDS,
    arguments: set[int] | None = None,
    guard: Guard | None = None,
) -> bool:
    """`v = X[...]` then `f(v)`: pass what `f(X[...])` is fixed to (`judge` says), and drop the
    assignment with its line. False when no read plans for `v`, or the read passed directly
    has no finding (the other rules then look at it). A use is one of `arguments` (by id; by
    default the semaphore arguments); `guard` adds the calling rule's own blocker."""
    _, bindings = scope.lookup(use.id)
    args = ctx.semaphore_args if arguments is None else arguments
    found = (_plan(ctx, call, b, code, words, args, guard, judge) for b in reversed(bindings) if b.kind == "read")
    plan = next((p for p in found if p is not None), None)
    if plan is None:
        return _unpacked(ctx, call, use, scope, judge, code, words, args, guard)
    verdict = plan.verdict
    if verdict.fix is None and (shape := next((f for f in verdict.findings if f.rule == sem004.CODE), None)):
        related = (plan.assign, *shape.related)
        ctx.report(shape.rule, use, messages.carried(use.id, plan.assign.lineno, shape.message), None, related=related)
        return True
    suggestion = verdict.fix or next((f.replacement for f in verdict.findings if f.replacement), None)
    shown = messages.one_line(suggestion or ctx.text.of(plan.ref))
    message = words[0].format(name=use.id, line=plan.assign.lineno, ref=shown)
    if plan.blocker is not None:
        ctx.report(code, use, f"{message} (not fixed: {plan.blocker})", None, related=[plan.assign])
    elif (decision := decide(ctx, plan)) is None:
        ctx.report(
            code, use, f"{message} (not fixed: a use or the assignment is silenced)", None, related=[plan.assign]
        )
    elif not decision:  # the plan is not made (not every use chosen): no use is rewritten
        ctx.report(code, use, message, verdict.fix, made=False, related=[plan.assign])
    elif ctx.report(code, use, message, verdict.fix, related=[plan.assign]):
        # accepted, so the verdict has a fix, made with its node (`Verdict`), and `decide` made the plan's
        assert verdict.fix is not None and verdict.replacement is not None and plan.fix is not None
        start, end = ctx.text.start(use)[2], ctx.text.end(use)[2]
        replacement = copy.deepcopy(verdict.replacement)
        rewrite = Rewrite(call, use, replacement, [(start, end, verdict.fix)])
        plan.fix = ctx.join(plan.fix, rewrite)
    return True


def _unpacked(
    ctx: Context,
    call: ast.Call,
    use: ast.Name,
    scope: Scope,
    judge: Judge,
    code: str,
    words: tuple[str, str, str],
    arguments: set[int],
    guard: Guard | None,
) -> bool:
    """`for v in (X[i], ...)`, `for a, v in ((d, X[...]), ...)`, `a, v = d, X[i]`: each read `v`
    takes from the literal (or from a name bound once to one) reaches the argument. Each is
    reported at the read, once, and fixed there to what the read passed directly is fixed to
    (the value is then made where it was, the Ref is read at the same place) where that fix is
    safe and `v`, as a plain carried read's variable, is a local used only as such arguments."""
    owner, bindings = scope.lookup(use.id)
    found = False
    for binding in bindings:
        statement = binding.node
        if owner is None or binding.kind not in ("unpack", "element", "other"):
            continue
        if not isinstance(statement, (ast.For, ast.Assign)):
            continue
        given = statement.iter if isinstance(statement, ast.For) else statement.value
        through = given.id if isinstance(given, ast.Name) else None
        source = None
        if through is not None:  # `pairs = ((...), ...)` then `for a, b in pairs`
            holder_scope, held = owner.lookup(through)
            source = held[0].value if holder_scope is not None and [b.kind for b in held] == ["tuple_literal"] else None
        for read in unpacked(statement, use.id, source) or ():
            if not content_read(read) or (code, id(read)) in ctx.memo:
                found |= bool(ctx.memo.get((code, id(read))))
                continue
            assert isinstance(read, ast.Subscript)  # a content read is one
            verdict = judge(ctx, call, read, owner)
            ctx.memo[code, id(read)] = bool(verdict.findings)
            if not verdict.findings:
                continue
            found = True
            how = "loop target" if isinstance(statement, ast.For) else "name unpacked"
            suggestion = verdict.fix or next((f.replacement for f in verdict.findings if f.replacement), None)
            shown = messages.one_line(suggestion or ctx.text.of(read.value))
            message = words[2].format(
                read=messages.one_line(ctx.text.of(read)), name=use.id, line=use.lineno, how=how, ref=shown
            )
            blocker = (
                _refused(ctx, read, verdict)
                if verdict.fix is None
                else _in_place(ctx, read, verdict.fix, statement, through, owner, use.id, arguments, guard)
            )
            if blocker is not None:
                ctx.report(code, read, f"{message} (not fixed: {blocker})", None, related=[use])
            elif ctx.report(code, read, message, verdict.fix, related=[use]):
                assert verdict.fix is not None and verdict.replacement is not None  # no blocker: fixed (`Verdict`)
                start, end = ctx.text.start(read)[2], ctx.text.end(read)[2]
                rewrite = Rewrite(statement, read, copy.deepcopy(verdict.replacement), [(start, end, verdict.fix)])
                ctx.make(Decision.of(code, rewrite))
    return found


def _in_place(
    ctx: Context,
    read: ast.Subscript,
    fix: str,
    statement: ast.For | ast.Assign,
    through: str | None,
    scope: Scope,
    name: str,
    arguments: set[int],
    guard: Guard | None,
) -> str | None:
    """Why the read in a literal is not made `fix` where it is; None when it may be: `name`
    holds only what the literal gives it and is read only as such arguments (see `_blocker`)."""
    references = ctx.tracking().references(name, scope) if scope.kind == "function" else []
    other = any(id(access.name) not in arguments for access in references)
    if (local := _only_local(scope, name, references, other)) is not None:
        return local
    if through is not None:
        return f"the values come through `{through}`, which other code may read"
    if ctx.text.of(read).count("#") != fix.count("#"):
        return "a comment inside it would be lost"
    return guard(ctx, read.value, scope, statement, {id(a.name) for a in references}) if guard else None


def _plan(
    ctx: Context,
    call: ast.Call,
    binding: Binding,
    code: str,
    words: tuple[str, str, str],
    arguments: set[int],
    guard: Guard | None,
    judge: Judge,
) -> Carried | None:
    """The plan for one `v = X[...]`, shared by its uses; None if none of `arguments` uses it,
    or the read passed directly (as the argument of `call`, the first use's) has no finding."""
    if (code, id(binding)) not in ctx.memo:
        tracking = ctx.tracking()
        assign = binding.assignment
        target = assign.targets[0] if isinstance(assign, ast.Assign) else assign.target
        assert isinstance(target, ast.Name)  # a "read" binding's one target (`ScopeBuilder`)
        scope, name = tracking.scope_of_read[id(assign)], target.id
        references = [] if name in scope.declared else tracking.references(name, scope)
        end = (assign.end_lineno, assign.end_col_offset)
        uses = [  # as libcst links them: a read before the assignment, in its scope, is not its use
            a.name
            for a in references
            if id(a.name) in arguments and (a.scope is not scope or (a.name.lineno, a.name.col_offset) >= end)
        ]
        verdict = judge(ctx, call, binding.value, scope) if uses else None
        plan = None
        if verdict is not None and verdict.findings:
            bodies: dict[int, tuple[list[ast.stmt], list[int]]] = {}
            chain = enclosing(tracking.tree, assign.lineno, bodies)
            # None when the assignment shares a line with a statement that holds it (`if x: v = ...`)
            body = holder(tracking.tree, assign, bodies)[1] if chain and chain[-1] is assign else None
            read = binding.value
            assert isinstance(read, ast.Subscript)  # the value of a "read" binding: `X[...]`
            plan = Carried(assign, read, uses, body, code, words, verdict)
            if verdict.fix is None:
                plan.blocker = _refused(ctx, read, verdict)
            else:
                plan.blocker = _blocker(ctx, plan, scope, name, references) or (
                    guard and guard(ctx, plan.ref, scope, assign, {id(use) for use in uses})
                )
        ctx.memo[code, id(binding)] = plan
    kept = ctx.memo[code, id(binding)]
    assert kept is None or isinstance(kept, Carried)  # what this function keeps under the key, above
    return kept


def _refused(ctx: Context, read: ast.expr, verdict: Verdict) -> str:
    """Why the read passed directly is not fixed: its first finding says. An unsafe fix is not
    offered for the carried read, which needs the direct form's safe one."""
    reason = verdict.findings[0].message.removesuffix(messages.UNSAFE_SUFFIX)
    return f"`{messages.one_line(ctx.text.of(read))}` passed directly is not fixed safely either: {reason}"


def _only_local(scope: Scope, name: str, references: list[Access], other_use: bool) -> str | None:
    """Why `name` is not a local that only the carried reads' uses read, assigned once and seen
    by nothing else (`other_use`: a reference that is not such a use); None when it is. Both the
    carried assignment and a read in a literal a name takes ask it."""
    if scope.kind != "function":
        return f"`{name}` is a name of the {scope.kind}, which other code may read as its attribute"
    if len(scope.bindings[name]) > 1:
        return f"`{name}` is assigned more than once"
    if other_use:
        return f"`{name}` is also used for something else"
    if any(access.scope is not scope for access in references):
        return f"`{name}` is used in a nested scope"
    assert scope.node is not None  # a function scope's node: its def or lambda (`ScopeBuilder`)
    return _seen_by_name(scope.node, name)


def _blocker(ctx: Context, plan: Carried, scope: Scope, name: str, references: list[Access]) -> str | None:
    """Why the rewrite is not safe; None when it is. The expression passed instead is read
    again at each use: every name in it must keep its value, and every Ref its indices read
    its contents (`slot_ref` in `sems.at[slot_ref[0]]`), written in no way at all."""
    assign, ref = plan.assign, plan.ref
    if (local := _only_local(scope, name, references, len(plan.uses) != len(references))) is not None:
        return local
    if plan.body is None or not alone_on_its_lines(assign, ctx.text, _SOLE_END):
        return "the assignment shares its line with other statements"
    if _commented(ctx, assign, plan.body):
        return "a comment on the assignment would be lost"
    plain = isinstance(ref, (ast.Name, ast.Attribute, ast.Subscript))
    if not plain or any(isinstance(n, ast.Call) for n in ast.walk(plan.read)):
        return "the Ref expression is not a plain name or view"
    rebound = ctx.unstable(ref, scope) or (None if read_target(plan.read) else ctx.unstable(plan.read.slice, scope))
    if rebound is not None:
        return rebound
    uses = {id(use) for use in plan.uses}
    for index in index_reads(plan.read):
        if (changed := written(ctx, index, scope, assign, uses)) is not None:
            return changed
    first, last = plan.body[0], plan.body[-1]
    low, high = (first_line(first), first.col_offset), (last.end_lineno, last.end_col_offset)
    if any(not low <= (u.lineno, u.col_offset) <= high for u in plan.uses):
        return f"`{name}` is assigned conditionally"
    return None


#: Builtins that see a function's locals by name, not through a reference to them.
_INTROSPECTION = frozenset({"eval", "exec", "locals", "vars", "dir", "breakpoint"})


def _seen_by_name(function: ast.AST, name: str) -> str | None:
    """Why the local `name` may be reached without a reference the scopes record: a call
    to a builtin that sees locals by name (`eval("v")`, `locals()`), or a nested `nonlocal
    name`, which would have nothing to bind to once the assignment is gone."""
    for node in ast.walk(function):
        if isinstance(node, ast.Nonlocal) and name in node.names:
            return f"a nested function declares `nonlocal {name}` at line {node.lineno}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _INTROSPECTION:
            return f"`{node.func.id}(...)` at line {node.lineno} may see `{name}` by name"
    return None


def _commented(ctx: Context, assign: ast.Assign | ast.AnnAssign, body: list[ast.stmt]) -> bool:
    """A comment on the assignment's lines, or on the lines just above it that libcst
    gives it (those not indented deeper than it after a block, which that block keeps)."""
    own = ctx.text.text[ctx.text.starts[assign.lineno - 1] : ctx.text.after(end_of(assign)[0])]
    if "#" in own and any(t.type == tokenize.COMMENT for t in tokens(own)):
        return True
    index = next(i for i, s in enumerate(body) if s is assign)
    previous = body[index - 1] if index else None
    floor = (previous.end_lineno or 0) if previous is not None else 0  # a parsed statement's is never None
    above: list[int] = []  # the indentation of each comment line just above, up to code
    for number in range(assign.lineno - 1, floor, -1):
        line = ctx.text.line(number)
        stripped = line.lstrip(" \t")
        if stripped.startswith("#"):
            above.append(len(line) - len(stripped))
        elif stripped.strip():
            break
    kept = hasattr(previous, "body") and all(indent > assign.col_offset for indent in above)  # by the block before
    return bool(above) and not kept


def decide(ctx: Context, plan: Carried) -> bool | None:
    """Decided once per assignment without a blocker: all its uses are rewritten and it is
    removed with its line, or none. True: rewrite; False: report only; None: the rule is off
    or silenced on a use or on the removal's lines."""
    if plan.decision is _UNDECIDED:
        assign, text = plan.assign, ctx.text
        applied = None
        if not ctx.off(plan.code, {u.lineno for u in plan.uses} | {assign.lineno}):
            span = ctx.whole_lines(assign)
            end = span[1][2]
            message = plan.words[1].format(assign=messages.one_line(text.of(assign)))
            # explain chooses fixes by place: the plan is made only if every use of it is chosen
            chosen = ctx.settings.chosen is None or all(ctx.accepts(plan.code, use, True) for use in plan.uses)
            applied = ctx.report(plan.code, assign, message, "" if chosen else None, span=span, related=plan.uses)
            if applied:  # the plan's one fix: the assignment removed, then each use rewritten (`check`)
                assert plan.body is not None  # `check` decides only a plan without a blocker (`_blocker`)
                removed = Removal(plan.body, assign)
                removal = Decision(plan.code, ((span[0][2], end, ""),), (removed,), settles=False)
                plan.fix = ctx.make(removal)
        plan.decision = applied
    decision = plan.decision
    assert decision is None or isinstance(decision, bool)  # decided above
    return decision
