'''SEM003 value-carried-through-variable

## What it does
Flags a variable that holds a value read from a semaphore Ref (`done = sem[...]`) and is then
passed as the semaphore; rewrites each use to the Ref and drops the assignment.

## Why is this bad?
The variable holds the semaphore's value, not the semaphore, so tracing fails at the call with
`ValueError: Cannot signal on a non-semaphore Ref: semaphore[]`, a line away from the read.

## Example
```python
done = sem[...]
pl.semaphore_wait(done, 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

## Fix safety
Safe when the variable is assigned once, used only as semaphore arguments in the same block,
and the Ref is not rebound in between. Otherwise every use is reported with the line of the read.
'''

from __future__ import annotations

from semfix.rules.base import Invalid, Rule

# Logic: today in semfix/engine/carried.py.

RULE = Rule(
    code="SEM003",
    name="value-carried-through-variable",
    summary="A variable holds a value read from a semaphore Ref and is passed as the semaphore; pass "
    "the Ref and drop the variable when that is its only use.",
    fix="safe",
    default=True,
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl


def count_kernel(sem, o_ref):
    count = pl.semaphore_read(sem)
    o_ref[0] = count
    pl.semaphore_wait(sem, count)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    done = sem[...]
    pl.semaphore_signal(done, 1)
    pl.semaphore_wait(done, 1)
""",
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sem, 1)
    pl.semaphore_wait(sem, 1)
""",
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def handshake_kernel(x_ref, o_ref, sem):
    done = sem[...]
    o_ref[0] = done
    pl.semaphore_wait(done, 1)
""",
            None,  # `done` is also used as a value: dropping it would change the kernel
        ),
    ),
)
