'''SEM102 semaphore-wait-dec-keyword

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
'''

from __future__ import annotations

from semfix.rules.base import Invalid, Rule

# Logic: today in semfix/engine/analysis.py (`_rename_dec`).

RULE = Rule(
    code="SEM102",
    name="semaphore-wait-dec-keyword",
    summary="semaphore_wait's `dec=` keyword (JAX <= 0.7.1) is now `value=`.",
    fix="safe",
    default=False,
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
