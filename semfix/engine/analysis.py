"""The engine's loop: each catalog call of one parsed file through the rules, in libcst's order.

`Engine` resolves the calls to catalog operations and gathers the evidence (its `Context`),
then, call by call, hands each semaphore argument to the rules (`_semaphore`), each DMA buffer
to SEM005 (`_buffer`), each semaphore argument with its parameter (which says the kinds it
takes) to SEM006, and `semaphore_wait`'s keywords to SEM102; SEM101's references are renamed
as the loop passes them.
The rules (semfix/rules/) record findings and declare their fixes in the Context, which
semfix/engine/run.py applies and semfix/rewrite/proof.py checks.
"""

from __future__ import annotations

import ast
import bisect
import itertools
from collections.abc import Callable

from semfix.catalog import SemParam
from semfix.engine.context import Context
from semfix.engine.nodes import Rewrite, element_read, read_target
from semfix.engine.scopes import Scope
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
)
from semfix.settings import Settings


class Engine(Context):
    """A Context that runs the rules over its file."""

    def run(self) -> None:
        self.gather()
        calls = [(call, op) for call in self.scopes.relevant_calls() if (op := self.operation(call)) is not None]
        calls.sort(key=lambda item: (item[0].end_lineno, item[0].end_col_offset))
        semaphores = [_arguments(operation.sem_params, call) for call, operation in calls]
        buffers = [_arguments(operation.buffer_params, call) for call, operation in calls]
        self.semaphore_args = {id(a) for found in semaphores for a in found}
        self.buffer_args = {id(a) for found in buffers for a in found}
        for call, operation in calls:  # where a DMA copies from, and where it copies into
            for param in operation.buffer_params:
                (self.sources if param.name.startswith("src") else self.destinations).extend(_arguments((param,), call))
        arguments = [(call, [*found, *more]) for (call, _), found, more in zip(calls, semaphores, buffers)]
        renames = sem101.renames(self)
        for (call, operation), (_, found) in zip(calls, arguments):
            sem101.rename(self, renames, (call.end_lineno, call.end_col_offset))  # type: ignore[arg-type]
            scope = self.scopes.scope_of[id(call)]
            for argument in sorted(found, key=lambda a: (a.lineno, a.col_offset)):
                if id(argument) in self.buffer_args:
                    with self.holding(_LATER if operation.partial else None):
                        _buffer(self, call, argument, scope)
                else:
                    _semaphore(self, call, argument, scope)
            for param in operation.sem_params:
                for argument in _arguments((param,), call):
                    sem006.check(self, operation, param, argument, scope)
            if operation.name == "semaphore_wait" and operation.sem_params[0].name == "sem_or_view":
                sem102.check(self, call, operation.partial)
        sem101.rename(self, renames)
        sem101.finish(self, renames)
        starts = sorted(self.text.start(call)[2] for call, _ in calls)
        for low, high in ((self.text.start(a)[2], self.text.end(a)[2]) for _, found in arguments for a in found):
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:  # the fixes would nest: none is made
                self.hold("a semaphore or DMA call inside one of their arguments")
                return


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
    with ctx.holding(_unusual(argument)):
        if sem004.check(ctx, argument, scope):
            return
        rewrite: Rewrite | None = None
        current = read_target(argument) or argument  # `X` in `X[...]`
        if current is not argument:
            rewrite = sem001.check(ctx, call, argument)  # type: ignore[arg-type]
            if rewrite is None:
                return
        if element_read(current):
            rewrite = sem002.check(ctx, call, current, scope, rewrite)  # type: ignore[arg-type]
        if rewrite is not None:
            ctx.rewrites.append(rewrite)


def _buffer(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, *, carried: bool = True) -> None:
    """A DMA buffer through SEM005, which reuses SEM001-SEM003 (never SEM004: a whole array
    is the usual buffer); as for semaphores, a walrus and an unusual subscript."""
    if isinstance(argument, ast.NamedExpr):
        _walrus(ctx, call, argument, scope, _buffer)
        return
    with ctx.holding(_unusual(argument)):
        rewrite = sem005.check(ctx, call, argument, scope, _judge(_buffer) if carried else None)
    if rewrite is not None:
        ctx.rewrites.append(rewrite)


#: The direct form of a carried read is judged with every rule on and safe fixes only.
_DIRECT = Settings(frozenset(RULES))


def _judge(rule: Callable[..., None]) -> sem003.Judge:
    """The verdict `rule` (`_semaphore` or `_buffer`) gives a read passed directly to the call:
    a carried read is fixed to what it is fixed to, or reported as it is."""

    def judge(ctx: Context, call: ast.Call, read: ast.expr, scope: Scope) -> sem003.Verdict:
        with ctx.trial(_DIRECT) as (findings, rewrites):
            rule(ctx, call, read, scope, carried=False)
        fixed = [r for r in rewrites if r.argument is read]
        safe = all(f.applied and f.safety == "safe" for f in findings)
        if len(fixed) != len(rewrites) or len(fixed) != 1 or not safe:
            return sem003.Verdict(findings)
        start, end = ctx.text.start(read)[2], ctx.text.end(read)[2]
        return sem003.Verdict(findings, apply_edits(ctx.text.text, start, end, fixed[0].edits), fixed[0].replacement)

    return judge


def _unusual(argument: ast.expr) -> str | None:
    """`x[0,]`, `x[(0,)]`, `x[*i]`: reported, never rewritten."""
    unusual = isinstance(argument, ast.Subscript) and isinstance(argument.slice, ast.Tuple) and (
        any(isinstance(e, ast.Starred) for e in argument.slice.elts)
        or (len(argument.slice.elts) == 1 and isinstance(argument.slice.elts[0], ast.Constant))
    )
    return "an unusual subscript" if unusual else None


def _walrus(ctx: Context, call: ast.Call, original: ast.NamedExpr, scope: Scope, rule: Callable[..., None]) -> None:
    """`f(s := sem[...])`: the rules (`rule`: `_semaphore` or `_buffer`) apply to the value. The fix makes `s` hold the Ref
    instead of the value read, so it is applied only when nothing can read `s`."""
    count = len(ctx.rewrites)
    target = original.target
    if scope.kind != "function":
        blocker: str | None = f"`{ctx.text.of(target)}` is not a local name, and would hold the Ref instead of the value"
    elif _spelled(scope.node, target.id) > 1:  # type: ignore[arg-type]  # by spelling: `global s`, nested reads, loops
        blocker = f"`{target.id}` is used elsewhere, and would hold the Ref instead of the value"
    else:
        blocker = None
    with ctx.holding(blocker):
        rule(ctx, call, original.value, scope, carried=False)
    if len(ctx.rewrites) > count:
        inner = ctx.rewrites.pop()
        ctx.rewrites.append(Rewrite(call, original, ast.NamedExpr(target=target, value=inner.replacement), inner.edits))


# Where each node type spells a name, as libcst counts its Name nodes (a list: each entry).
_SPELLINGS = {
    "Name": "id", "Attribute": "attr", "keyword": "arg", "arg": "arg", "Global": "names", "Nonlocal": "names",
    "FunctionDef": "name", "AsyncFunctionDef": "name", "ClassDef": "name", "ExceptHandler": "name",
    "MatchAs": "name", "MatchStar": "name", "MatchMapping": "rest", "MatchClass": "kwd_attrs",
    "TypeVar": "name", "ParamSpec": "name", "TypeVarTuple": "name",
}


def _spelled(node: ast.AST, name: str) -> int:
    """How often `name` is written as a name anywhere in `node`, as libcst counts its Name
    nodes: reads and stores, attributes, keywords, parameters, definitions, imports,
    `global` and `nonlocal`, `except ... as`, capture patterns and type parameters."""
    count = 0
    for current in ast.walk(node):
        kind = type(current).__name__
        if kind == "alias":
            count += current.name.split(".").count(name) + (current.asname == name)  # type: ignore[attr-defined]
        elif kind == "ImportFrom":
            count += (current.module or "").split(".").count(name)  # type: ignore[attr-defined]
        elif kind in _SPELLINGS:
            spelled = getattr(current, _SPELLINGS[kind])
            count += spelled.count(name) if isinstance(spelled, list) else spelled == name
    return count


def _arguments(params: tuple[SemParam, ...], call: ast.Call) -> list[ast.expr]:
    """The call's arguments for `params` in source order: by position (up to a `*args`) and by keyword."""
    positions, names = {p.position for p in params}, {p.name for p in params}
    positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
    found = [a for i, a in enumerate(positional) if i in positions] + [k.value for k in call.keywords if k.arg in names]
    return sorted(found, key=lambda a: (a.lineno, a.col_offset))
