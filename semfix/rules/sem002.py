'''SEM002 element-read-passed-as-semaphore

## What it does
Flags `sems[i]` passed as a semaphore, where `sems` is an array of semaphores, and rewrites
it to the view `sems.at[i]`.

## Why is this bad?
`sems[i]` reads one element's value out of the semaphore array; Pallas needs a Ref, so tracing
fails with `ValueError: Cannot wait on a non-semaphore Ref: semaphore[]`, or for a DMA with
`DMA source/destination/semaphore arguments must be Refs.` at `.start()`.

## Example
```python
pl.semaphore_signal(sems[slot], 1)
```
Use instead:
```python
pl.semaphore_signal(sems.at[slot], 1)
```

## Fix safety
Safe where the file proves `sems` is a Ref: `sems.at[...]` or `sems[...]` in the same scope,
or a `SemaphoreType.X((n,))` allocation in `scratch_shapes` or `run_scoped`. Unsafe where it
cannot tell (applied only with `--unsafe-fixes`). Never for a tuple of Refs (`*sems`, tuple
unpacking, literals), where `sems[i]` already is a Ref and `.at` would fail.
'''

from __future__ import annotations

from semfix.rules.base import Invalid, Rule

# Logic: today in semfix/engine/analysis.py (`_element`) with semfix/engine/evidence.py.

_UNPROVEN = """\
from jax.experimental import pallas as pl


def barrier_kernel(x_ref, o_ref, sems):
    o_ref[...] = x_ref[...]
    pl.semaphore_wait(sems[1], 1)
"""

RULE = Rule(
    code="SEM002",
    name="element-read-passed-as-semaphore",
    summary="`sems[i]` reads one semaphore of an array Ref; pass the view `sems.at[i]`. Safe where the "
    "code shows `sems` is a Ref, unsafe where it cannot tell, never for a tuple of Refs.",
    fix="safe with proof, else unsafe",
    default=True,
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def star_kernel(x_hbm, o_hbm, *sems):
    pltpu.make_async_copy(x_hbm, o_hbm, sems[0]).start()
    pl.semaphore_signal(sems[1], 1)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ring_kernel(x_hbm, o_ref, buf, sems):
    slot = pl.program_id(0) % 2
    copy = pltpu.make_async_copy(x_hbm, buf.at[slot], sems.at[slot])
    copy.start()
    copy.wait()
    pl.semaphore_signal(sems[1 - slot], 1)
""",
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ring_kernel(x_hbm, o_ref, buf, sems):
    slot = pl.program_id(0) % 2
    copy = pltpu.make_async_copy(x_hbm, buf.at[slot], sems.at[slot])
    copy.start()
    copy.wait()
    pl.semaphore_signal(sems.at[1 - slot], 1)
""",
        ),
        Invalid(_UNPROVEN, None),  # nothing shows `sems` is a Ref: reported, fix unsafe
        Invalid(_UNPROVEN, _UNPROVEN.replace("sems[1]", "sems.at[1]"), unsafe_fixes=True),
    ),
)
