"""SEM006 wrong-semaphore-kind

## What it does
Flags a semaphore argument whose kind (`SemaphoreType.REGULAR`, `DMA` or `BARRIER`) the file
proves by its allocation, and which the operation does not take: a DMA semaphore given to
`semaphore_signal`, `semaphore_wait` or `core_barrier`, or a regular or barrier semaphore given
to a DMA (`make_async_copy`, `async_copy`, and both semaphores of the remote copies). The
message names the line of the allocation. Reported only.

The kind counts only where it is proven: the argument is a kernel or `run_scoped` body
parameter (or an `.at[...]` view of one) that nothing rebinds, and every allocation bound to it
(`scratch_shapes` of `pallas_call` or of JAX's grid specs, `scratch_types` of `pl.kernel`,
`run_scoped`, `core_map`, as SEM002 reads them) is a `SemaphoreType.X` or
`SemaphoreType.X(shape)` of one kind. A parameter that two calls give two kinds, or that a
call gives what semfix cannot read (`scratch_shapes=f()`, `*shapes`), has none.

A DMA's semaphore counts only where JAX checks it: at its descriptor's `.wait()`
(`.wait_recv()`, `.wait_send()`), not at `.start()`. A DMA started on a regular semaphore
that the kernel then waits on with `pl.semaphore_wait(sem, n)` is fine: not reported where
the file shows nothing waits on its descriptor (`make_async_copy(...).start()`, an
`async_copy(...)` statement, or a local name bound once whose every use is `.start()`). A
descriptor handed on (returned, stored, passed) is reported: it is kept to be waited on.

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
    default=True,
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
    JAX checks it: a DMA's semaphore only where its descriptor may be waited on."""
    function, name = param.via or (operation.name, param.name)  # a helper's: what it passes it to
    needed = KINDS_NEEDED.get((function, name))
    proven = ctx.semaphore(argument, scope) if needed else None
    if needed is None or proven is None or proven[0] in needed:
        return
    if name in KIND_CHECKED_AT and not operation.partial and _never_waited(ctx, call, operation, name):
        return
    kind, allocation = proven
    written, allocated = ctx.text.of(argument), ctx.text.of(allocation)
    words = messages.wrong_kind(written, kind, allocation.lineno, allocated, function, needed)
    ctx.report(CODE, argument, words, None, related=[allocation])


_PARENTS = object()  # the key of what `_parents` works out once per file, in `Context.memo`


def _never_waited(ctx: Context, call: ast.Call, operation: Operation, param: str) -> bool:
    """Does the file show that nothing waits on the descriptor `call` makes at a method that
    checks `param`'s kind (`KIND_CHECKED_AT`)? True where it is dropped (`...start()`, a
    statement of its own) or held by a local name bound once whose every use is a call of a
    method that does not (`copy.start()`). A descriptor handed on (returned, stored, passed,
    aliased) is handed on to be waited on: False, and the kind is reported. A helper's
    descriptors are those of the catalog calls in it, each never waited on."""
    if operation.inner:
        inner = [(c, ctx.operation(c)) for c in operation.inner if isinstance(c, ast.Call)]
        return all(op is not None and _never_waited(ctx, c, op, param) for c, op in inner)
    scope = ctx.scopes.scope_of[id(call)]
    methods = KIND_CHECKED_AT[param]
    parent = _parents(ctx).get(id(call))
    if isinstance(parent, ast.Attribute):  # `make_async_copy(...).start()`: `.start()` returns None
        return parent.attr not in methods
    if isinstance(parent, ast.Expr):
        return True
    target = parent.targets[0] if isinstance(parent, ast.Assign) and len(parent.targets) == 1 else None
    if not isinstance(target, ast.Name) or scope.kind != "function":
        return False
    _, bindings = scope.lookup(target.id)
    if len(bindings) != 1 or bindings[0].declared:
        return False
    return all(
        access.called and len(access.steps) == 1 and access.steps[0] not in methods
        for access in ctx.tracking().references(target.id, scope)
    )


def _parents(ctx: Context) -> dict[int, ast.AST]:
    """Each node's parent, by id(); worked out once per file, only for a wrong kind at a DMA."""
    if _PARENTS not in ctx.memo:
        tree = ctx.scopes.tree
        ctx.memo[_PARENTS] = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    parents = ctx.memo[_PARENTS]
    assert isinstance(parents, dict)  # what this function keeps under the key, above
    return parents
