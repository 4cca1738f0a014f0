"""SEM005 value-passed-as-dma-buffer

## What it does
Flags a DMA source or destination given a value read from a Ref (`x_ref[...]`, `x_ref[i]`,
`x_ref[0:8]`, or a variable holding such a read) instead of the Ref or a view of it, in
`make_async_copy`, `async_copy`, `sync_copy`, `make_async_remote_copy`, `async_remote_copy`
and the Mosaic GPU `copy_gmem_to_smem` and `copy_smem_to_gmem`; rewrites it to the Ref
(`x_ref`) or the view (`x_ref.at[i]`, `x_ref.at[0:8]`).

## Why is this bad?
A DMA copies between Refs. A value fails with `ValueError: DMA source/destination/semaphore
arguments must be Refs.` at `.start()` (the message does not say which argument), or for the
Mosaic GPU copies with ``Can only call `copy_gmem_to_smem` on a `Ref` ``.

## Example
```python
pltpu.make_async_copy(x_ref[...], o_hbm.at[0:8], sem).start()
```
Use instead:
```python
pltpu.make_async_copy(x_ref, o_hbm.at[0:8], sem).start()
```

## Fix safety
`x_ref[...]`, `x_ref[()]` to `x_ref`, and `x_ref.at[i][...]` to `x_ref.at[i]`: safe, as for
SEM001 (the very Ref the read came from). `x_ref[i]` and slices `x_ref[0:8]` to `x_ref.at[...]`:
in a kernel, reading `x_ref[idx]` and viewing `x_ref.at[idx]` go through the same indexer, so
the view holds exactly the elements the read would; an index a view does not take (a negative
step, an index array) fails at trace time instead of copying other data. So the fix is safe
where the file proves `x_ref` is a Ref, exactly as SEM002 (same evidence), unsafe elsewhere,
and never made for a tuple or list of Refs, nor a string index into a dict of them (`sync_copy`
takes pytrees of Refs, where `refs[0:2]` and `bufs["k"]` are right).

A variable carrying a read (`v = x_ref[...]`, `v = x_ref[0:8]`) is fixed as SEM003 does (to
what the read passed directly is fixed to), and only where nothing may write the Ref, nor a
Ref its indices read (`cursor_ref` in `x_ref.at[cursor_ref[0]]`): the copy then reads them when
the DMA runs, not when the value was read. Flow is not followed (before or after the read, in
loops, all count), nor are other names for the buffer, so `x_ref` must be a parameter of the
very function holding the read (not `alias = x_ref`, `top = x_ref.at[0]`, nor an enclosing
function's), and that function must hold (semfix/analysis/writes.py checks it, for SEM003 too):
- no use of `x_ref` but a read, its `.shape`, `.dtype` or `.ndim`, a DMA source, or an index
  of a DMA destination (a store through any view, a DMA into it or a view of it, or a call
  given it or a view of it may write it);
- no store into a subscript of anything but a parameter Ref, no other DMA into anything but
  one, no nested function, and no assignment or loop that may give a Ref another name (a
  store into a parameter Ref, `o_ref[0] = v`, gives none);
- no call but a builtin's, an array's method, a DMA descriptor's `.start()`/`.wait()`, or
  JAX's or NumPy's that writes no Ref (`pl.store`, the atomics), calls back into no function
  it is given (`jax.lax.fori_loop`, `pl.when`, `pl.run_scoped`: a body given as a parameter
  may write the very buffer), and is given no callable and no holder's attribute (a holder's
  `self.st[...] = ...` may write the very buffer).
Two parameter Refs that alias one buffer (`input_output_aliases`) are not modelled. Whole Refs
are the usual buffers: SEM004 does not apply here. A read given to `functools.partial` of a DMA
is reported, not fixed: the partial reads it when it is made, the copy would read the Ref later.
"""

from __future__ import annotations

import ast

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.nodes import Rewrite, is_at, read_target
from semfix.analysis.scopes import Scope
from semfix.analysis.writes import written
from semfix.rules import sem001, sem002, sem003
from semfix.rules.base import Invalid, Rule

CODE = "SEM005"
WORDS = (
    "`{name}` holds a value read from the Ref at line {line} and is passed as a DMA buffer; pass the Ref `{ref}`",
    "`{assign}` only carried the read to DMA buffers; removed with them",
    "`{read}` reads a value out of the Ref, which reaches the DMA buffer `{name}` at line {line} as a {how}; "
    "pass the Ref `{ref}`",
)

_HEADER = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


"""

RULE = Rule(
    code=CODE,
    name="value-passed-as-dma-buffer",
    summary="A DMA source or destination reads the Ref (`x_ref[...]`, `x_ref[i]`, `x_ref[0:8]`); pass the Ref "
    "or the view `x_ref.at[...]`. Views are safe where the code shows `x_ref` is a Ref, never for a tuple of Refs.",
    fix="safe with proof, else unsafe",
    fix_note="`x_ref[...]` becomes `x_ref` as in SEM001; `x_ref[i]`, `x_ref[0:8]` the view `x_ref.at[...]` as "
    "in SEM002; a carried read as in SEM003, only where nothing in its function may write the Ref",
    docs=__doc__ or "",
    settles=False,  # another fix's new `.at` view may prove the Ref: an unsafe finding may turn safe
    valid=(
        _HEADER
        + """\
def copy_kernel(x_hbm, o_hbm, buf, sems, *parts):
    pltpu.make_async_copy(x_hbm.at[0:8], buf, sems.at[0]).start()
    pltpu.sync_copy(parts[0], o_hbm)
""",
    ),
    invalid=(
        Invalid(
            _HEADER
            + """\
def copy_kernel(x_ref, o_hbm, sem):
    copy = pltpu.make_async_copy(x_ref[...], o_hbm[0:8], sem)
    copy.start()
    copy.wait()
    o_hbm.at[8:16][...] = x_ref[...]
""",
            _HEADER
            + """\
def copy_kernel(x_ref, o_hbm, sem):
    copy = pltpu.make_async_copy(x_ref, o_hbm.at[0:8], sem)
    copy.start()
    copy.wait()
    o_hbm.at[8:16][...] = x_ref[...]
""",
        ),
        Invalid(
            _HEADER
            + """\
def copy_kernel(x_ref, o_hbm, sem):
    rows = x_ref[...]
    x_ref[...] = rows + 1
    pltpu.async_copy(rows, o_hbm, sem).wait()
""",
            None,  # `x_ref` is written after the read: passing it would copy other data
        ),
    ),
)


def check(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, judge: sem003.Judge | None) -> Rewrite | None:
    """A DMA buffer through the rules SEM005 reuses, with its own code and words: a name
    carrying a read (SEM003's plan, judged by `judge` as the read passed directly, and
    `_written`; None: not a carried read's own use); a read (SEM001), then the element or
    slice read under it (SEM002, joining the read's rewrite). The rewrite, if accepted."""
    if isinstance(argument, ast.Name):
        if judge is not None:
            sem003.check(
                ctx, call, argument, scope, judge, code=CODE, words=WORDS, arguments=ctx.buffer_args, guard=written
            )
        return None
    rewrite: Rewrite | None = None
    current = read_target(argument) or argument  # `X` in `X[...]`
    if isinstance(argument, ast.Subscript) and current is not argument:
        rewrite = sem001.check(ctx, call, argument, code=CODE, words=messages.buffer_read)
        if rewrite is None:
            return None
    if isinstance(current, ast.Subscript) and not is_at(current.value) and read_target(current) is None:
        rewrite = sem002.check(ctx, call, current, scope, rewrite, code=CODE, words=messages.buffer_view)
    elif (viewed := ctx.viewed_read(current, scope)) is not None:  # `bufs[0].at[1]`: a view of a value
        with ctx.holding(messages.held_as_value(ctx.text.of(viewed[0])) if viewed[3] else None):
            rewrite = sem002.check(
                ctx, call, viewed[0], viewed[2], rewrite, code=CODE, words=messages.buffer_view, beyond=viewed[1]
            )
    return rewrite
