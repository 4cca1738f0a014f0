"""SEM004 non-scalar-semaphore

## What it does
Flags a slice (`sems.at[0:2]`, `sems[1:]`, `sems.at[pl.ds(0, 2)]`), a row, or a whole semaphore
array passed where one semaphore is needed. Reported only. A row is a view or read that gives
fewer indices than its allocation has dimensions (`sems.at[i]`, `sems[i]` or `sems.at[i][...]`
of a `SemaphoreType.DMA((2, 2))`), where the parameter's every allocation writes its shape as
a tuple of that length (`(2, 2)`, `(2,) * 2`, or a name bound once to one; a parameter proves
no rank), or where a view of it in the scope shows more dimensions (`sems.at[i, j]`,
`sems.at[i].at[j]`, `row.at[j]` after `row = sems.at[i]`, or `_wait_at(sems.at[i], 1, slot)`
where the helper `_wait_at` views `sem.at[slot]`, unless the call leaves `slot` to its
default; for `self.sems`, a view in any method of its class). A read given to a helper that
views its parameter counts the helper's indices too (`_wait_at(flags[1], 1, 0)`, where
`_wait_at` waits on `sem.at[slot]`, of a 3-D `flags`). A view held in a local bound once
(`out_sem = sems.at[1]`) is the view, a local bound once to the array (`row = sems`) or a pick
out of a comprehension of it (`views[0]` of `[sems for i in ...]`) the array; an index held in
a local bound once to a tuple (`idx = (half, slot)`) gives its entries. Carried through a
variable (`row = sems[i]`), it is reported at the use. A loop's target over a literal (`for
sem in (sems.at[0, 0], sems.at[1])`) is each value in turn: the first that is a row is reported
at the use.

## Why is this bad?
Semaphore operations take exactly one semaphore; tracing fails with
`ValueError: Cannot signal on a non-()-shaped semaphore: (2,)`.

## Example
```python
pl.semaphore_signal(sems.at[0:2], 1)
```
Use instead, for example:
```python
pl.semaphore_signal(sems.at[0], 1)
pl.semaphore_signal(sems.at[1], 1)
```

## Fix safety
No fix: which semaphore was meant (or whether a loop was) is the author's call. A row read
(`sems[i]`) is never made the view `sems.at[i]`, which would still be a row.
"""

from __future__ import annotations

import ast

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.evidence import Kind
from semfix.analysis.nodes import is_at, read_target
from semfix.analysis.scopes import Scope
from semfix.analysis.views import View, indices, picked, unview
from semfix.rules.base import Invalid, Rule

CODE = "SEM004"

RULE = Rule(
    code=CODE,
    name="non-scalar-semaphore",
    summary="A slice, a row or a whole semaphore array is passed where one semaphore is needed "
    "(JAX: non-()-shaped semaphore); reported, never rewritten.",
    fix="none",
    fix_note="which semaphore was meant is the author's call",
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl


def fan_out_kernel(x_ref, o_ref, sems):
    o_ref[...] = x_ref[...]
    for i in range(2):
        pl.semaphore_signal(sems.at[i], 1)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl


def fan_out_kernel(x_ref, o_ref, sems):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sems.at[0:2], 1)
""",
            None,
        ),
        Invalid(
            """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def grid_kernel(x_ref, o_ref, sems):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sems[pl.program_id(0)], 1)  # a row of two: `.at` would not pick one


def run(x):
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return pl.pallas_call(grid_kernel, out_shape=shape, scratch_shapes=[pltpu.SemaphoreType.REGULAR((2, 2))])(x)
""",
            None,
        ),
    ),
)


def check(
    ctx: Context, argument: ast.expr, scope: Scope, at: ast.expr | None = None, beyond: tuple[ast.expr, ...] = ()
) -> bool:
    """Is the argument a slice, a row, or a whole semaphore array (read or not)? Reported if so
    (at `at`, where given: the loop target that takes it); for a loop's target (`for src, sem in
    ((x, sems.at[0]), ...)`), the first value it takes that is. `beyond`: the indices a helper
    given the argument views it with (`sem.at[slot]` there)."""
    if at is None and (taken := ctx.taken(argument, scope)) is not None:
        return any(check(ctx, value, where, argument, beyond) for value, where in taken)
    at, given = (argument, []) if at is None else (at, [argument])  # a loop's value: evidence where it is written
    whole = read_target(argument)
    view, levels = _views(whole or argument, scope, beyond)
    base, scope_of_base = view.base, view.scope
    sliced = bool(levels) and any(ctx.keeps_dimension(i, scope) for i in levels[-1])  # `sems.at[0:2][...]`: two
    rank = None if sliced or not levels else ctx.rank(base, scope_of_base)
    used = sum(not ctx.keeps_dimension(i, scope) for level in levels for i in level)
    if rank is not None and rank[0] > used:
        line, shape, related = ctx.allocation(rank[1])
        words = messages.row(ctx.text.of(at), rank[0] - used, rank[0], line, shape)
        ctx.report(CODE, at, words, None, related=[*related, *given])
        return True
    seen = None if rank is not None or sliced or not levels else ctx.axes_indexed(base, scope_of_base)
    if seen is not None and seen[0] > used:  # `flags.at[stage, 0]` in the scope: `flags[stage]` is a row
        axes, shown = seen
        words = messages.row_seen(ctx.text.of(at), axes - used, axes, shown.lineno, ctx.text.of(shown))
        ctx.report(CODE, at, words, None, related=[shown, *given])
        return True
    if sliced or (
        not beyond
        and (
            ctx.kind(argument, scope) is Kind.ARRAY
            or (whole is not None and ctx.kind(whole, scope) is Kind.ARRAY)
            or ((alias := _alias(whole or argument, scope)) is not None and ctx.kind(*alias) is Kind.ARRAY)
        )
    ):
        allocated = ctx.rank(base, scope_of_base)  # the allocation is evidence too: review follows it
        related = ctx.allocation(allocated[1])[2] if allocated else []
        words = messages.non_scalar(ctx.text.of(at), whole_array=not sliced)
        ctx.report(CODE, at, words, None, related=[*related, *given])
        return True
    return False


def _alias(node: ast.expr, scope: Scope) -> tuple[ast.expr, Scope] | None:
    """The Ref `node` names whole through a local (`one = sems`) or a comprehension's pick
    (`views[0]` of `[sems for i in ...]`), with the scope it is written in; None for another."""
    view = unview(node, scope)
    return (view.base, view.scope) if not view.levels and view.base is not node else None


def _views(node: ast.expr, scope: Scope, beyond: tuple[ast.expr, ...]) -> tuple[View, list[tuple[ast.expr, ...]]]:
    """What `sems.at[i].at[j]`, `sems.at[i][j]` or `row[j]` (`row = sems.at[i]`) views, and
    the indices of each subscript, innermost first: the views (`unview`), then an element read
    outermost, then `beyond`. No indices where one may stand for any number of them (`...`, `*idx`)."""
    read: list[tuple[ast.expr, ...]] = []
    counted = True
    if isinstance(node, ast.Subscript) and not is_at(node.value) and picked(node, scope) is None:
        entries, counted = indices(node, scope)
        read, node = [entries], node.value
    view = unview(node, scope)
    more = [beyond] if beyond else []
    return view, [*view.levels, *read, *more] if counted and view.counted else []
