"""SEM004 non-scalar-semaphore

## What it does
Flags a slice (`sems.at[0:2]`, `sems[1:]`, `sems.at[pl.ds(0, 2)]`), a row, or a whole semaphore
array passed where one semaphore is needed. Reported only. A row is a view or read that gives
fewer indices than its allocation has dimensions (`sems.at[i]`, `sems[i]` or `sems.at[i][...]`
of a `SemaphoreType.DMA((2, 2))`), where the parameter's every allocation writes its shape as
a tuple of that length (a shape held in a name proves no rank); carried through a variable
(`row = sems[i]`), it is reported at the use.

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
from semfix.analysis.resolution import axes
from semfix.analysis.scopes import Scope
from semfix.catalog import SLICES
from semfix.rules.base import Invalid, Rule

CODE = "SEM004"

RULE = Rule(
    code=CODE,
    name="non-scalar-semaphore",
    summary="A slice, a row or a whole semaphore array is passed where one semaphore is needed "
    "(JAX: non-()-shaped semaphore); reported, never rewritten.",
    fix="none",
    fix_note="which semaphore was meant is the author's call",
    default=True,
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


def check(ctx: Context, argument: ast.expr, scope: Scope) -> bool:
    """Is the argument a slice, a row, or a whole semaphore array (read or not)? Reported if so."""
    whole = read_target(argument)
    base, levels = _views(whole or argument)
    sliced = bool(levels) and any(_slice(ctx, i, scope) for i in levels[-1])  # `sems.at[0:2][...]` reads two
    rank = None if sliced or not levels else ctx.rank(base, scope)
    used = sum(not _slice(ctx, i, scope) for level in levels for i in level)
    if rank is not None and rank[0] > used:
        shape = rank[1]
        words = messages.row(ctx.text.of(argument), rank[0] - used, rank[0], shape.lineno, ctx.text.of(shape))
        ctx.report(CODE, argument, words, None, related=[shape])
        return True
    seen = None if rank is not None or sliced or not levels else ctx.axes_indexed(base, scope)
    if seen is not None and axes(seen) > used:  # `flags.at[stage, 0]` in the scope: `flags[stage]` is a row
        words = messages.row_seen(ctx.text.of(argument), axes(seen) - used, axes(seen), seen.lineno, ctx.text.of(seen))
        ctx.report(CODE, argument, words, None, related=[seen])
        return True
    if (
        sliced
        or ctx.kind(argument, scope) is Kind.ARRAY
        or (whole is not None and ctx.kind(whole, scope) is Kind.ARRAY)
    ):
        ctx.report(CODE, argument, messages.non_scalar(ctx.text.of(argument), whole_array=not sliced), None)
        return True
    return False


def _views(node: ast.expr) -> tuple[ast.expr, list[list[ast.expr]]]:
    """What `sems.at[i].at[j]` or `sems.at[i][j]` indexes (`sems`), and the indices of each
    subscript, innermost first; no indices for an index that may stand for any number of
    them (`...`, `*idx`). Only `.at` views are followed, and an element read outermost."""
    levels: list[list[ast.expr]] = []
    while isinstance(node, ast.Subscript) and (is_at(node.value) or not levels):
        indices = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(i, ast.Starred) or (isinstance(i, ast.Constant) and i.value is Ellipsis) for i in indices):
            return node, []
        levels.insert(0, list(indices))
        node = node.value.value if is_at(node.value) else node.value
    return node, levels


def _slice(ctx: Context, index: ast.expr, scope: Scope) -> bool:
    """Does the index keep its dimension: `a:b`, or one of Pallas's slices (`pl.ds(0, 2)`)?"""
    return isinstance(index, ast.Slice) or (isinstance(index, ast.Call) and ctx.resolves_to(index.func, scope, SLICES))
