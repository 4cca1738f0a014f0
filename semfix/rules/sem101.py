'''SEM101 deprecated-tpu-semaphore-op

## What it does
Rewrites `pltpu.semaphore_signal`, `pltpu.semaphore_wait` and `pltpu.semaphore_read` to the
`pl.semaphore_*` functions, adding or reusing the file's pallas import and dropping TPU imports
left unused. Off by default: select it (`--select SEM101` or `extend-select`).

## Why is this bad?
The `pltpu` versions were deprecated in JAX 0.10 and removed in 0.11, where the kernel fails
with `AttributeError` when it is traced.

## Example
```python
pltpu.semaphore_wait(sem, 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

## Fix safety
Safe: the `pl` functions take the same arguments. The added import goes where the `pltpu`
import was (a function-local import stays local).
'''

from __future__ import annotations

from semfix.rules.base import Invalid, Rule

# Logic: today in semfix/engine/migrations.py with semfix/imports.py.

RULE = Rule(
    code="SEM101",
    name="deprecated-tpu-semaphore-op",
    summary="pltpu.semaphore_signal/wait/read were deprecated in JAX 0.10 and removed in 0.11; use "
    "the pl.semaphore_* functions.",
    fix="safe",
    default=False,
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pl.semaphore_wait(sem, 1)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pltpu.semaphore_wait(sem, 1)
""",
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pl.semaphore_wait(sem, 1)
""",
            select=("SEM101",),
        ),
        Invalid(
            """\
import jax
from jax.experimental.pallas import tpu as pltpu


def signal_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pltpu.semaphore_signal(sem, 1)
""",
            """\
import jax
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sem, 1)
""",
            select=("SEM101",),
        ),
    ),
)
