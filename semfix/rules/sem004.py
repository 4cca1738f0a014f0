"""SEM004 non-scalar-semaphore

## What it does
Flags a slice (`sems.at[0:2]`, `sems[1:]`) or a whole semaphore array passed where one
semaphore is needed. Reported only.

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
No fix: which semaphore was meant (or whether a loop was) is the author's call.
"""

from __future__ import annotations

import ast

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.evidence import Kind
from semfix.analysis.nodes import has_slice, read_target
from semfix.analysis.scopes import Scope
from semfix.rules.base import Invalid, Rule

CODE = "SEM004"

RULE = Rule(
    code=CODE,
    name="non-scalar-semaphore",
    summary="A slice or a whole semaphore array is passed where one semaphore is needed "
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
    ),
)


def check(ctx: Context, argument: ast.expr, scope: Scope) -> bool:
    """Is the argument a slice, or a whole semaphore array (read or not)? Reported if so."""
    whole = read_target(argument)
    sliced = has_slice(argument) or has_slice(whole)  # `sems.at[0:2][...]` reads two
    if (
        sliced
        or ctx.kind(argument, scope) is Kind.ARRAY
        or (whole is not None and ctx.kind(whole, scope) is Kind.ARRAY)
    ):
        ctx.report(CODE, argument, messages.non_scalar(ctx.text.of(argument), whole_array=not sliced), None)
        return True
    return False
