"""SEM102 semaphore-wait-dec-keyword

## What it does
Renames `semaphore_wait`'s `dec=` keyword to `value=`, or, where the project's JAX floor is
below 0.7.2 (or none is declared), passes the amount by position, which every JAX reads. Off
by default: select it (`--select SEM102` or `extend-select`).

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
Safe: the keyword names the same parameter, and the position is the amount's on every JAX.
Report-only where `value` is also given, and below a floor of 0.7.2 where the amount cannot
move to its position (another keyword before it, `*args`, the semaphore given by keyword).
`getattr(pltpu, "semaphore_wait")` called, or given to `functools.partial`, is checked as a
plain call is: resolution reads the builtin `getattr` with a constant name as the name it gives.
"""

from __future__ import annotations

import ast

from semfix.analysis.context import Context
from semfix.analysis.fixes import Decision
from semfix.analysis.nodes import Rewrite
from semfix.catalog import WAIT_VALUE_KEYWORD_FROM
from semfix.jax_versions import spelled
from semfix.rules.base import Invalid, Rule

CODE = "SEM102"
_FROM = spelled(WAIT_VALUE_KEYWORD_FROM)
_MESSAGE = f"`semaphore_wait(dec=...)` is `semaphore_wait(value=...)` since JAX {_FROM}"
_BELOW = f"the JAX floor is below {_FROM}, so the amount is passed by position, which every JAX reads"
_NO_POSITION = f"the JAX floor is below {_FROM} and the amount cannot be passed by position here"

RULE = Rule(
    code=CODE,
    name="semaphore-wait-dec-keyword",
    summary="semaphore_wait's `dec=` keyword (JAX <= 0.7.1) is now `value=`.",
    fix="safe",
    fix_note="`value=n` from a JAX floor of 0.7.2, else by position; reported only where `value` is also given",
    docs=__doc__ or "",
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
            target_jax="0.7.2",
        ),
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
    pl.semaphore_wait(sem, 2)
""",
            select=("SEM102",),  # no floor declared: `value=` would fail on JAX 0.7.1 and older
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
    """`dec=` renamed `value=` on a `semaphore_wait` call, a rename of the keyword's name alone,
    where the JAX floor has `value=`; below it the amount moves to its position, where every JAX
    reads it. Where `value` is also given (by keyword or as the second positional argument, the
    third of a `functools.partial`), the rename would repeat it: report only."""
    positional = sum(not isinstance(a, ast.Starred) for a in call.args)
    given = any(k.arg == "value" for k in call.keywords) or positional > 1 + partial
    by_name = ctx.settings.target_jax >= WAIT_VALUE_KEYWORD_FROM
    for keyword in (k for k in call.keywords if k.arg == "dec"):
        line, column, start = ctx.text.start(keyword)  # `dec`, which the keyword starts with
        span = ((line, column, start), (line, column + len("dec"), start + len("dec")))
        movable = call.keywords[0] is keyword and len(call.args) == positional == 1 + partial
        if given or not (by_name or movable):
            why = "`value` is also given" if given else _NO_POSITION
            ctx.report(CODE, keyword, f"{_MESSAGE} (not fixed: {why})", None, span=span)
        elif by_name and ctx.report(CODE, keyword, _MESSAGE, "value", span=span):
            edit = (start, start + len("dec"), "value")
            ctx.make(Decision.of(CODE, Rewrite(call, keyword.value, keyword.value, [edit], renamed=(keyword, "value"))))
        elif not by_name:  # `dec=` and what follows it up to the amount go
            span = (span[0], ctx.text.start(keyword.value))
            if ctx.report(CODE, keyword, f"{_MESSAGE}; {_BELOW}", "", span=span):
                edit = (start, span[1][2], "")
                ctx.make(
                    Decision.of(CODE, Rewrite(call, keyword.value, keyword.value, [edit], renamed=(keyword, None)))
                )
