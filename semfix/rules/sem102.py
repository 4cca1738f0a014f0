"""SEM102 semaphore-wait-dec-keyword

## What it does
Renames `semaphore_wait`'s `dec=` keyword to `value=`. Off by default: select it
(`--select SEM102` or `extend-select`).

## Why is this bad?
JAX up to 0.7.1 spelled the amount `dec`; later releases call it `value`, and a call with
`dec=` fails with `TypeError: semaphore_wait() got an unexpected keyword argument 'dec'`.

## Example
```python
pl.semaphore_wait(sem, dec=2)
```
Use instead:
```python
pl.semaphore_wait(sem, value=2)
```

## Fix safety
Safe: the keyword names the same parameter. Report-only where `value` is also given.
"""

from __future__ import annotations

import ast

from semfix.analysis.context import Context
from semfix.analysis.fixes import Decision
from semfix.analysis.nodes import Rewrite
from semfix.rules.base import Invalid, Rule

CODE = "SEM102"
_MESSAGE = "`semaphore_wait(dec=...)` is `semaphore_wait(value=...)` since JAX 0.7.2"

RULE = Rule(
    code=CODE,
    name="semaphore-wait-dec-keyword",
    summary="semaphore_wait's `dec=` keyword (JAX <= 0.7.1) is now `value=`.",
    fix="safe",
    fix_note="`value=n`; reported only where `value` is also given",
    default=False,
    docs=__doc__ or "",
    text_gate=("dec", "semaphore_wait"),  # a `dec` keyword of a call that resolves to semaphore_wait
    valid=(
        """\
from jax.experimental import pallas as pl


def pair_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 2)
    pl.semaphore_wait(sem, value=2)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl


def pair_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 2)
    pl.semaphore_wait(sem, dec=2)
""",
            """\
from jax.experimental import pallas as pl


def pair_kernel(x_ref, o_ref, sem):
    pl.semaphore_signal(sem, 2)
    pl.semaphore_wait(sem, value=2)
""",
            select=("SEM102",),
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def pair_kernel(x_ref, o_ref, sem):
    pl.semaphore_wait(sem, value=1, dec=2)
""",
            None,  # both keywords given: which one the author meant is unclear
            select=("SEM102",),
        ),
    ),
)


def check(ctx: Context, call: ast.Call, partial: bool = False) -> None:
    """`dec=` renamed `value=` on a `semaphore_wait` call, a rename of the keyword's name alone.
    Where `value` is also given (by keyword or as the second positional argument, the third of
    a `functools.partial`), the rename would repeat it: report only."""
    positional = sum(not isinstance(a, ast.Starred) for a in call.args)
    given = any(k.arg == "value" for k in call.keywords) or positional > 1 + partial
    for keyword in (k for k in call.keywords if k.arg == "dec"):
        line, column, start = ctx.text.start(keyword)  # `dec`, which the keyword starts with
        span = ((line, column, start), (line, column + len("dec"), start + len("dec")))
        if given:
            ctx.report(CODE, keyword, _MESSAGE + " (not fixed: `value` is also given)", None, span=span)
        elif ctx.report(CODE, keyword, _MESSAGE, "value", span=span):
            edit = (start, start + len("dec"), "value")
            ctx.make(Decision.of(CODE, Rewrite(call, keyword.value, keyword.value, [edit], renamed=(keyword, "value"))))
