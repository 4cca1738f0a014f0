"""SEM001 value-read-passed-as-semaphore

## What it does
Flags a semaphore argument written `sem[...]` or `sem[()]` (also `sems.at[i][...]`) and
rewrites it to the Ref itself: `sem`, `sems.at[i]`.

## Why is this bad?
Indexing a Ref with `[...]` reads its value. Pallas needs the semaphore Ref, so tracing fails
with `ValueError: Cannot signal on a non-semaphore Ref: semaphore[]` (`wait` likewise), or for
a DMA with `DMA source/destination/semaphore arguments must be Refs.` at `.start()`.

## Example
```python
pl.semaphore_wait(sem[...], 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

The same for a local helper's argument, where the helper passes its parameter, unchanged, to
a semaphore parameter (`def _async_copy(src, dst, sem): pltpu.make_async_copy(src, dst, sem)`):
every rule reads the helper's calls as the JAX call's. A helper that tests a parameter
(`if sem is None:` ... `else:`) is read, at each call, on the branch the call takes: where it
gives that parameter None (or leaves a default of None), or what cannot be None (a view
`sems.at[i]`, a read, a constant, a parameter allocated a semaphore, a name bound once to one).
`def _emit(src, dst, sem=None)` that stores `src` as a value without a semaphore and copies it
by DMA with one passes it on at `_emit(x.at[0], o, sems.at[0])`, never at `_emit(x[0], o)`; a
call that decides nothing reads the helper whole. A helper that views its parameter
(`sem.at[slot]`) given a read (`_wait_at(sem[...], 1, 0)`) is given the Ref the read came from.

## Fix safety
Safe: dropping the read passes the very Ref the read came from. `sem.at[...]` is already a view
and is left alone. A comment inside the brackets makes the finding report-only, since the
rewrite would drop it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.nodes import Rewrite, read_target
from semfix.rules.base import Invalid, Rule

CODE = "SEM001"

RULE = Rule(
    code=CODE,
    name="value-read-passed-as-semaphore",
    summary="A semaphore argument reads the Ref with [...] or [()]; pass the Ref itself.",
    fix="safe",
    fix_note="`X[...]`, `X[()]` become `X`; a comment inside the brackets makes it report-only",
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, buf, sem):
    copy = pltpu.make_async_copy(x_hbm, buf, sem)
    copy.start()
    copy.wait()
    buf[...] = buf[...] + 1
    pl.semaphore_signal(sem, 1)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, buf, sem):
    copy = pltpu.make_async_copy(x_hbm, buf, sem[...])
    copy.start()
    copy.wait()
    pl.semaphore_signal(sem[()], 1)
""",
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, buf, sem):
    copy = pltpu.make_async_copy(x_hbm, buf, sem)
    copy.start()
    copy.wait()
    pl.semaphore_signal(sem, 1)
""",
        ),
        Invalid(
            """\
from jax.experimental import pallas as pl


def ping_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sem[  # the ping semaphore
        ...
    ], 1)
""",
            None,  # a rewrite would drop the comment inside the brackets: reported only
        ),
    ),
)


def check(
    ctx: Context,
    call: ast.Call,
    read: ast.Subscript,
    *,
    code: str = CODE,
    words: Callable[[str, str], str] = messages.value_read,
) -> Rewrite | None:
    """`X[...]` (a `read`, see nodes.read_target) to `X`: the rewrite, if its fix is accepted.
    Else None, and the read is reported (or the rule is off there): without a fix when X is
    read again (`X[...][...]`: stripping one read leaves another) or a comment would be lost."""
    whole = read_target(read)
    assert whole is not None  # `read` is one: its caller checked read_target
    innermost = whole
    while (inner := read_target(innermost)) is not None:
        innermost = inner
    cuts = ctx.cut(read, call) if innermost is whole else None
    if cuts is None:
        reason = messages.COMMENT_SUFFIX if innermost is whole else messages.NESTED_READ_SUFFIX
        ctx.report(code, read, words(ctx.text.of(read), ctx.text.of(innermost)) + reason, None)
        return None
    suggestion = ctx.text.text[ctx.text.start(read)[2] : cuts[0]]
    if not ctx.report(code, read, words(ctx.text.of(read), suggestion), suggestion):
        return None
    return Rewrite(call, read, whole, [(*cuts, "")])  # `whole` is never changed
