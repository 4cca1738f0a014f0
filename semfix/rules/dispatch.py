"""The order the rules run in at each catalog call: the entry points the engine's loop calls.

The loop (semfix/engine/loop.py) knows calls and arguments, never rules: it hands each
semaphore argument to `semaphore`, each DMA buffer to `buffer`, each call to `before_call` and
`after_arguments`, and the file to `start` and `finish`. Here the rules on one argument are
tried in order, a walrus and an unusual subscript are handled once for all of them, and a
carried read (`v = X[...]` used later) gets the verdict its direct form gets (`_judge`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.fixes import Decision
from semfix.analysis.nodes import Rewrite, content_read, element_read, end_of, read_target
from semfix.analysis.scopes import Scope
from semfix.catalog import Operation, SemParam
from semfix.rewrite.text import apply_edits
from semfix.rules import (
    RULES,
    sem001,
    sem002,
    sem003,
    sem004,
    sem005,
    sem006,
    sem101,
    sem102,
    sem103,
)


def start(ctx: Context) -> sem101.Renames:
    """Before the first call: what the renames (the migration to `pl.`) work out once per file."""
    return sem101.renames(ctx)


def before_call(ctx: Context, state: sem101.Renames, call: ast.Call, operation: Operation) -> None:
    """Before a call's arguments: its `device_id_type=` dropped (SEM103), then the references
    renamed up to its end, in libcst's order, but for those in a dropped keyword."""
    sem101.skip(state, sem103.check(ctx, state.drops, call, operation), ctx)
    sem101.rename(ctx, state, end_of(call))


def after_arguments(
    ctx: Context, call: ast.Call, operation: Operation, scope: Scope, semaphores: list[tuple[SemParam, ast.expr]]
) -> None:
    """After a call's arguments: each semaphore argument with its parameter (which says the
    kinds it takes), then the call's own keywords."""
    for param, argument in semaphores:
        sem006.check(ctx, call, operation, param, argument, scope)
    if operation.name == "semaphore_wait" and operation.sem_params[0].name == "sem_or_view":
        sem102.check(ctx, call, operation.partial)


def finish(ctx: Context, state: sem101.Renames) -> None:
    """After the last call: the remaining references renamed, and the renames' import edits."""
    sem101.rename(ctx, state)
    sem103.finish(ctx, state.drops)
    sem101.finish(ctx, state)


def semaphore(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope) -> None:
    """A semaphore argument of a catalog call through the rules."""
    _semaphore(ctx, call, argument, scope)


def buffer(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, partial: bool) -> None:
    """A DMA buffer argument through the rules; given to functools.partial, it is read early."""
    with ctx.holding(_LATER if partial else None):
        _buffer(ctx, call, argument, scope)


# A read given to functools.partial is made when the partial is: a DMA given the Ref copies it later.
_LATER = "functools.partial reads the buffer when it is made, the copy reads the Ref when it runs"


def _semaphore(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, *, carried: bool = True) -> None:
    """A semaphore argument through the rules, in order: a name carrying a read (SEM003); a
    slice or a whole array (SEM004); a read (SEM001), then an element read (SEM002), which
    joins SEM001's rewrite. `sems[0,]`, `sems[(0,)]`, `sems[*i]` are reported, never rewritten."""
    if isinstance(argument, ast.NamedExpr):
        _walrus(ctx, call, argument, scope, _semaphore)
        return
    if carried and isinstance(argument, ast.Name) and sem003.check(ctx, call, argument, scope, _judge(_semaphore)):
        return
    if (held := _comprehended(ctx, argument, scope)) is not None:  # `vals[0]`, `vals = [sems[i] for i in ...]`
        comprehension, read, blocker = held
        if ("comprehended", id(read)) not in ctx.memo:  # one finding, at the read, for every use
            ctx.memo["comprehended", id(read)] = True
            with ctx.holding(blocker):
                _semaphore(ctx, comprehension, read, ctx.scopes.scope_of[id(read)], carried=False)  # type: ignore[arg-type]
        return
    with ctx.holding(_unusual(argument)):
        if sem004.check(ctx, argument, scope):
            return
        rewrite: Rewrite | None = None
        current = read_target(argument) or argument  # `X` in `X[...]`
        if isinstance(argument, ast.Subscript) and current is not argument:
            rewrite = sem001.check(ctx, call, argument)
            if rewrite is None:
                return
        if element_read(current):
            rewrite = sem002.check(ctx, call, current, scope, rewrite)
        elif (viewed := ctx.viewed_read(current, scope)) is not None:  # `sems[0].at[1]`: a view of a value
            with ctx.holding(messages.held_as_value(ctx.text.of(viewed[0])) if viewed[3] else None):
                rewrite = sem002.check(ctx, call, viewed[0], viewed[2], rewrite, beyond=viewed[1])
        elif rewrite is None:  # `sem.at[slot]` in a helper `helper(sems[0], 1)` calls: a view of a value there
            for site, read, levels, where in ctx.given_to_views(current, scope):
                if ("given to a view", id(read)) not in ctx.memo:  # once, for all the helper's views
                    ctx.memo["given to a view", id(read)] = True
                    _given_to_a_view(ctx, site, read, levels, where, ctx.text.of(current))
        if rewrite is not None:
            _make(ctx, rewrite)


def _given_to_a_view(
    ctx: Context, site: ast.Call, read: ast.Subscript, levels: tuple[ast.expr, ...], scope: Scope, viewed: str
) -> None:
    """A read a helper's call gives a parameter the helper views (`given_to_views`), judged as
    passed directly with the helper's indices (`levels`) counted: a row through SEM004, `sem[...]`
    through SEM001 (the Ref it reads is what the view needs), `sems[0]` through SEM002."""
    assert isinstance(site.func, ast.Name)  # `given_to_views`: a call by the def's name
    if sem004.check(ctx, read, scope, beyond=levels):  # a row even once viewed there
        return
    rewrite: Rewrite | None = None
    element: ast.expr = read
    if (whole := read_target(read)) is not None:
        words = functools.partial(messages.value_given_to_a_view, helper=site.func.id, viewed=viewed)
        rewrite, element = sem001.check(ctx, site, read, words=words), whole
        if rewrite is None:
            return
    if element_read(element):
        words = functools.partial(messages.given_to_a_view, helper=site.func.id, viewed=viewed)
        rewrite = sem002.check(ctx, site, element, scope, rewrite, words=words, beyond=levels)
    if rewrite is not None:
        _make(ctx, rewrite)


def _buffer(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, *, carried: bool = True) -> None:
    """A DMA buffer through SEM005, which reuses SEM001-SEM003 (never SEM004: a whole array
    is the usual buffer); as for semaphores, a walrus and an unusual subscript."""
    if isinstance(argument, ast.NamedExpr):
        _walrus(ctx, call, argument, scope, _buffer)
        return
    with ctx.holding(_unusual(argument)):
        rewrite = sem005.check(ctx, call, argument, scope, _judge(_buffer) if carried else None)
    if rewrite is not None:
        _make(ctx, rewrite)


def _make(ctx: Context, rewrite: Rewrite) -> None:
    """Declare an argument's rewrite as a decision, of the finding that just accepted it."""
    ctx.make(Decision.of(ctx.findings[-1].rule, rewrite))


#: The direct form of a carried read is judged with every rule on and safe fixes only.
_DIRECT = frozenset(RULES)


def _judge(rule: Callable[..., None]) -> sem003.Judge:
    """The verdict `rule` (`_semaphore` or `_buffer`) gives a read passed directly to the call:
    a carried read is fixed to what it is fixed to, or reported as it is."""

    def judge(ctx: Context, call: ast.Call, read: ast.expr, scope: Scope) -> sem003.Verdict:
        with ctx.trial(_DIRECT) as (findings, fixes):
            rule(ctx, call, read, scope, carried=False)
        rewrites = [rewrite for fix in fixes for rewrite in fix.rewrites]
        fixed = [r for r in rewrites if r.argument is read]
        safe = all(f.applied and f.safety == "safe" for f in findings)
        if len(fixed) != len(rewrites) or len(fixed) != 1 or not safe:
            return sem003.Verdict(findings)
        start, end = ctx.text.start(read)[2], ctx.text.end(read)[2]
        return sem003.Verdict(findings, apply_edits(ctx.text.text, start, end, fixed[0].edits), fixed[0].replacement)

    return judge


def _comprehended(ctx: Context, argument: ast.expr, scope: Scope) -> tuple[ast.expr, ast.Subscript, str | None] | None:
    """`vals[k]`, where the local `vals` is bound once to a comprehension of reads (`[sems[i] for
    i in ...]`, `tuple(sems[i] for ...)`, `{i: sems[i] for ...}`): each element is the value the
    read makes, so the read is what the rules judge, where it is, as if passed directly; with the
    comprehension, and why its fix is not made (None: `vals` is read only as such arguments, so
    its elements may be Refs)."""
    if not (isinstance(argument, ast.Subscript) and isinstance(argument.value, ast.Name)):
        return None
    name = argument.value.id
    owner, bindings = scope.lookup(name)
    if owner is None or len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].declared:
        return None
    made = bindings[0].value
    if isinstance(made, ast.Call) and len(made.args) == 1 and not made.keywords and ctx.built(made, owner):
        made = made.args[0]  # `tuple(... for ...)`, `list(... for ...)`
    element = made.value if isinstance(made, ast.DictComp) else getattr(made, "elt", None)  # `{i: sems[i] for ...}`
    if not isinstance(made, (ast.ListComp, ast.GeneratorExp, ast.DictComp)) or not content_read(element):
        return None
    uses = ctx.tracking().references(name, owner) if owner.kind == "function" else []
    only = uses and all(isinstance(u.top, ast.Subscript) and id(u.top) in ctx.semaphore_args for u in uses)
    blocker = None if only else f"`{name}` is also read as the values, or outside its function"
    assert isinstance(element, ast.Subscript)  # a content read is one
    return made, element, blocker


def _unusual(argument: ast.expr) -> str | None:
    """`x[0,]`, `x[(0,)]`, `x[*i]`: reported, never rewritten."""
    unusual = (
        isinstance(argument, ast.Subscript)
        and isinstance(argument.slice, ast.Tuple)
        and (
            any(isinstance(e, ast.Starred) for e in argument.slice.elts)
            or (len(argument.slice.elts) == 1 and isinstance(argument.slice.elts[0], ast.Constant))
        )
    )
    return "an unusual subscript" if unusual else None


def _walrus(ctx: Context, call: ast.Call, original: ast.NamedExpr, scope: Scope, rule: Callable[..., None]) -> None:
    """`f(s := sem[...])`: the rules (`rule`: `_semaphore` or `_buffer`) apply to the value. The fix makes `s` hold
    the Ref instead of the value read, so it is applied only when nothing can read `s`."""
    count = len(ctx.fixes)
    target = original.target
    blocker: str | None = None
    if scope.kind != "function":
        blocker = f"`{ctx.text.of(target)}` is not a local name, and would hold the Ref instead of the value"
    else:
        assert scope.node is not None  # a function scope's node: its def or lambda (`ScopeBuilder`)
        if _spelled(scope.node, target.id) > 1:  # by spelling: `global s`, nested reads, loops
            blocker = f"`{target.id}` is used elsewhere, and would hold the Ref instead of the value"
    with ctx.holding(blocker):
        rule(ctx, call, original.value, scope, carried=False)
    if len(ctx.fixes) > count:
        decision = ctx.fixes.pop()
        inner = decision.rewrites[0]
        wrapped = Rewrite(call, original, ast.NamedExpr(target=target, value=inner.replacement), inner.edits)
        ctx.make(Decision(decision.rule, tuple(wrapped.edits), (wrapped,), findings=decision.findings))


# Where each node type spells a name, as libcst counts its Name nodes (a list: each entry).
_SPELLINGS = {
    "Name": "id",
    "Attribute": "attr",
    "keyword": "arg",
    "arg": "arg",
    "Global": "names",
    "Nonlocal": "names",
    "FunctionDef": "name",
    "AsyncFunctionDef": "name",
    "ClassDef": "name",
    "ExceptHandler": "name",
    "MatchAs": "name",
    "MatchStar": "name",
    "MatchMapping": "rest",
    "MatchClass": "kwd_attrs",
    "TypeVar": "name",
    "ParamSpec": "name",
    "TypeVarTuple": "name",
}


def _spelled(node: ast.AST, name: str) -> int:
    """How often `name` is written as a name anywhere in `node`, as libcst counts its Name
    nodes: reads and stores, attributes, keywords, parameters, definitions, imports,
    `global` and `nonlocal`, `except ... as`, capture patterns and type parameters."""
    count = 0
    for current in ast.walk(node):
        kind = type(current).__name__
        if isinstance(current, ast.alias):
            count += current.name.split(".").count(name) + (current.asname == name)
        elif isinstance(current, ast.ImportFrom):
            count += (current.module or "").split(".").count(name)
        elif kind in _SPELLINGS:
            spelled = getattr(current, _SPELLINGS[kind])
            count += spelled.count(name) if isinstance(spelled, list) else spelled == name
    return count
