"""SEM006 wrong-semaphore-kind

## What it does
Flags a semaphore argument whose kind (`SemaphoreType.REGULAR`, `DMA` or `BARRIER`) the file
proves by its allocation, and which the operation does not take: a DMA semaphore given to
`semaphore_signal`, `semaphore_wait` or `core_barrier`, or a regular or barrier semaphore given
to a DMA (`make_async_copy`, `async_copy`, and both semaphores of the remote copies). The
message names the line of the allocation. Reported only.

The kind counts only where it is proven: the argument is a kernel or `run_scoped` body
parameter (or an `.at[...]` view of one, also held in a local bound once: `ready = sems.at[1]`,
`sem = sems`, or picked out of a comprehension of them: `views[0]` of `[sems.at[i] for ...]`)
that nothing rebinds, and every allocation bound to it
(`scratch_shapes` of `pallas_call` or of JAX's grid specs, `scratch_types` of `pl.kernel`,
`run_scoped`, `core_map`, as SEM002 reads them and links them to their kernel: a factory's
call, a method, a partial held in a local, a lambda) is a `SemaphoreType.X` or
`SemaphoreType.X(shape)` of one kind. A parameter that two calls give two kinds, or that a
call gives what semfix cannot read (`scratch_shapes=f()`, `*shapes`), has none.

A DMA's semaphore counts only where JAX checks it: at its descriptor's `.wait()`
(`.wait_recv()`, `.wait_send()`), not at `.start()`. A DMA started on a regular semaphore
that the kernel then waits on with `pl.semaphore_wait(sem, n)` is fine: reported only where
the file shows its descriptor waited on, by `make_async_copy(...).wait()`, through a local
name bound to it (bound more than once: before the name is bound again in the same block, or
after the `if` or `with` whose block binds it last), in a list or tuple display bound once to
a local that a loop runs over, calling `c.wait()` on each (`for c in copies: c.wait()`, never
breaking), or returned by a def whose call is waited on so (a helper's: at that very call). A
descriptor only started, stored elsewhere, passed on or made through `functools.partial`
proves no wait, and is not reported.

The kind of an element of a scratch entry written as a list or tuple of semaphores
(`[SemaphoreType.DMA, SemaphoreType.REGULAR]`) is that element's: `pair[0]`, or `first` after
`first, second = pair`. A loop over a literal gives its target each value in turn (`for src,
sem in ((x, sems.at[0]), (y, flags.at[1]))`): each is judged as if passed, the first of a
wrong kind reported at the loop's use, the value as evidence.

## Why is this bad?
JAX checks the kind when it traces the kernel. Signal and wait take regular and barrier
semaphores: `ValueError: Must signal semaphores of the following types: {...}. Got dma_sem.`
A DMA waits on a DMA semaphore: at `.wait()`, `ValueError: dma_wait requires a DMA semaphore,
but got a regular semaphore. Use pl.semaphore_wait() instead.` (barrier semaphores too).
`core_barrier` signals and waits on its semaphore when the axis has more than one core.

## Example
```python
def kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    ...

pl.pallas_call(kernel, ..., scratch_shapes=[pltpu.SemaphoreType.REGULAR])
```
Use instead:
```python
pl.pallas_call(kernel, ..., scratch_shapes=[pltpu.SemaphoreType.DMA])
```

## Fix safety
No fix: whether the allocation or the operation is wrong, and what else uses the semaphore,
is the author's call. On by default: it reports only what the allocation proves, never a guess.
"""

from __future__ import annotations

import ast

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.scopes import Scope
from semfix.catalog import KIND_CHECKED_AT, KINDS_NEEDED, Operation, SemParam
from semfix.rules.base import Invalid, Rule

CODE = "SEM006"

RULE = Rule(
    code=CODE,
    name="wrong-semaphore-kind",
    summary="A semaphore allocated as one kind (REGULAR, DMA, BARRIER) is passed to an operation that "
    "needs another (JAX: Must signal semaphores of the following types / dma_wait requires a DMA "
    "semaphore); reported, never rewritten.",
    fix="none",
    fix_note="the finding names the line of the allocation",
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def signal_kernel(x_hbm, o_hbm, flag):
    pltpu.make_async_copy(x_hbm, o_hbm, flag).start()  # nothing waits on the descriptor
    pl.semaphore_wait(flag, 1)


def run(x, out_shape):
    return pl.pallas_call(signal_kernel, out_shape=out_shape, scratch_shapes=[pltpu.SemaphoreType.REGULAR])(x)
""",
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sems, flag):
    copy = pltpu.make_async_copy(x_hbm, o_hbm, sems.at[0])
    copy.start()
    copy.wait()
    pl.semaphore_signal(flag)
    pl.semaphore_wait(flag)


def run(x, out_shape):
    return pl.pallas_call(
        copy_kernel,
        out_shape=out_shape,
        scratch_shapes=[pltpu.SemaphoreType.DMA((2,)), pltpu.SemaphoreType.REGULAR],
    )(x)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sems):
    copy = pltpu.make_async_copy(x_hbm, o_hbm, sems.at[0])
    copy.start()
    copy.wait()
    pl.semaphore_signal(sems.at[1])


def run(x, out_shape):
    return pl.pallas_call(copy_kernel, out_shape=out_shape, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)
""",
            None,
        ),
    ),
)


def check(
    ctx: Context, call: ast.Call, operation: Operation, param: SemParam, argument: ast.expr, scope: Scope
) -> None:
    """Report the argument if its proven kind is not one the operation's parameter takes, and
    JAX checks it: a DMA's semaphore only where its descriptor may be waited on. A loop's target
    (`for src, sem in ((x, sems.at[0]), ...)`): the first value it takes that is, as evidence."""
    function, name = param.via or (operation.name, param.name)  # a helper's: what it passes it to
    needed = KINDS_NEEDED.get((function, name))
    taken = ctx.taken(argument, scope) if needed else None
    for value, where in taken or [(argument, scope)]:
        proven = ctx.semaphore(value, where) if needed else None
        if needed is None or proven is None or proven[0] in needed:
            continue
        if name in KIND_CHECKED_AT and (operation.partial or not _waited(ctx, call, operation, KIND_CHECKED_AT[name])):
            return
        kind, allocation = proven
        line, allocated, related = ctx.allocation(allocation)
        words = messages.wrong_kind(ctx.text.of(argument), kind, line, allocated, function, needed)
        ctx.report(CODE, argument, words, None, related=[*related, *([value] if taken else [])])
        return


_PARENTS = object()  # the key of what `_parents` works out once per file, in `Context.memo`
_Def = ast.FunctionDef | ast.AsyncFunctionDef


def _waited(
    ctx: Context, call: ast.Call, operation: Operation, methods: frozenset[str], sites: tuple[ast.Call, ...] = ()
) -> bool:
    """Does the file prove that the descriptor `call` makes is waited on at one of `methods`,
    those that check the kind (`KIND_CHECKED_AT`)? A helper's descriptors are those of the
    catalog calls in it, any of them waited on; `sites`: the helper calls, innermost first,
    whose defs return what a `return` in theirs returns."""
    if operation.inner:
        inner = [(c, ctx.operation(c)) for c in operation.inner if isinstance(c, ast.Call)]
        return any(op is not None and _waited(ctx, c, op, methods, (call, *sites)) for c, op in inner)
    return _reaches(ctx, call, ctx.scopes.scope_of[id(call)], methods, sites, frozenset())


def _reaches(
    ctx: Context,
    node: ast.expr,
    scope: Scope,
    methods: frozenset[str],
    sites: tuple[ast.Call, ...],
    seen: frozenset[int],
) -> bool:
    """Is the descriptor `node` (in `scope`) evaluates to waited on at one of `methods`: `node.wait()`; a
    local name bound to it, by that name (bound more than once: before it is bound again, in
    the same block); or returned, at the calls of its def? Anything else it may be handed to
    (a list, a call, `functools.partial`) proves nothing: a DMA only started may signal a
    regular semaphore, which the kernel waits on with `pl.semaphore_wait`."""
    parents = _parents(ctx)
    parent = parents.get(id(node))
    if isinstance(parent, ast.Attribute):  # `make_async_copy(...).wait()`; `.start()` returns None
        return parent.attr in methods
    if isinstance(parent, ast.Return):
        function: ast.AST | None = parent
        while function is not None and not isinstance(function, _Def):
            function = parents.get(id(function))
        if not isinstance(function, _Def) or id(function) in seen:
            return False
        if sites and _called(ctx, sites[0]) is function:
            site, sites = sites[0], sites[1:]
            return _reaches(ctx, site, ctx.scopes.scope_of[id(site)], methods, sites, seen | {id(function)})
        seen |= {id(function)}
        return any(_reaches(ctx, c, ctx.scopes.scope_of[id(c)], methods, sites, seen) for c in _calls(ctx, function))
    if isinstance(parent, (ast.List, ast.Tuple)):  # `copies = [copy_a, copy_b]`, then `for c in copies: c.wait()`
        return _waited_in_a_loop(ctx, parent, scope, methods)
    if not isinstance(parent, ast.Assign) or len(parent.targets) != 1 or not isinstance(parent.targets[0], ast.Name):
        return False
    name = parent.targets[0].id
    _, bindings = scope.lookup(name)
    if scope.kind != "function" or any(binding.declared for binding in bindings):
        return False
    if len(bindings) > 1:
        return _waited_next(ctx, parent, name, methods)
    return any(
        (access.called and len(access.steps) == 1 and access.steps[0] in methods)
        or (not access.steps and _reaches(ctx, access.name, access.scope, methods, sites, seen))
        for access in ctx.tracking().references(name, scope)
    )


def _waited_next(ctx: Context, assign: ast.Assign, name: str, methods: frozenset[str]) -> bool:
    """Is `name.wait()` (one of `methods`) called in the statements after `assign` in its
    block, before one that may bind `name` again? A block of an `if` or `with` that ends first
    goes on after that statement (`if c: copy = ... else: copy = ...`, then `copy.wait()`)."""
    parents = _parents(ctx)
    statement: ast.AST = assign
    while True:
        parent = parents[id(statement)]
        block = next((v for _, v in ast.iter_fields(parent) if isinstance(v, list) and statement in v), [])
        for following in block[block.index(statement) + 1 :]:
            nodes = list(ast.walk(following))
            if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in nodes):
                return False
            if any(_called_on(n, name, methods) for n in nodes):
                return True
        if not isinstance(parent, (ast.If, ast.With)):
            return False
        statement = parent


def _called_on(node: ast.AST, name: str, methods: frozenset[str]) -> bool:
    """Is `node` a call of one of `methods` on the name: `copy.wait()`?"""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == name
    )


def _waited_in_a_loop(ctx: Context, display: ast.List | ast.Tuple, scope: Scope, methods: frozenset[str]) -> bool:
    """Is each descriptor of a list or tuple display waited on: the display bound once to a
    local, which a `for c in copies:` loop runs over whose body calls `c.wait()` (one of
    `methods`) as a statement of its own, and neither rebinds `c` nor breaks?"""
    assign = _parents(ctx).get(id(display))
    if not isinstance(assign, ast.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
        return False
    name = assign.targets[0].id
    owner, bindings = scope.lookup(name)
    if owner is None or owner.kind != "function" or len(bindings) != 1 or bindings[0].declared:
        return False
    for access in ctx.tracking().references(name, owner):
        loop = _parents(ctx).get(id(access.top))
        if not (isinstance(loop, ast.For) and loop.iter is access.top and isinstance(loop.target, ast.Name)):
            continue
        target = loop.target.id
        waits = any(isinstance(s, ast.Expr) and _called_on(s.value, target, methods) for s in loop.body)
        nodes = [n for s in loop.body for n in ast.walk(s)]
        rebinds = any(isinstance(n, ast.Name) and n.id == target and not isinstance(n.ctx, ast.Load) for n in nodes)
        if waits and not rebinds and not any(isinstance(n, ast.Break) for n in nodes):
            return True
    return False


def _called(ctx: Context, call: ast.Call) -> _Def | None:
    """The def of the file a call by a plain name calls: the name bound once, to it."""
    if not isinstance(call.func, ast.Name):
        return None
    _, bindings = ctx.scopes.scope_of[id(call)].lookup(call.func.id)
    node = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "def" else None
    return node if isinstance(node, _Def) else None


def _calls(ctx: Context, function: _Def) -> list[ast.Call]:
    """The calls of `function` by its name (bound once, to it)."""
    return [c for c in ctx.scopes.by_name.get(function.name, ()) if _called(ctx, c) is function]


def _parents(ctx: Context) -> dict[int, ast.AST]:
    """Each node's parent, by id(); worked out once per file, only for a wrong kind at a DMA."""
    if _PARENTS not in ctx.memo:
        tree = ctx.scopes.tree
        ctx.memo[_PARENTS] = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    parents = ctx.memo[_PARENTS]
    assert isinstance(parents, dict)  # what this function keeps under the key, above
    return parents
