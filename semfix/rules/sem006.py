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
from semfix.catalog import KINDS_NEEDED, Operation, SemParam
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


def check(ctx: Context, operation: Operation, param: SemParam, argument: ast.expr, scope: Scope) -> None:
    """Report the argument if its proven kind is not one the operation's parameter takes."""
    needed = KINDS_NEEDED.get((operation.name, param.name))
    proven = ctx.semaphore(argument, scope) if needed else None
    if needed is None or proven is None or proven[0] in needed:
        return
    kind, allocation = proven
    written, allocated = ctx.text.of(argument), ctx.text.of(allocation)
    words = messages.wrong_kind(written, kind, allocation.lineno, allocated, operation.name, needed)
    ctx.report(CODE, argument, words, None)
