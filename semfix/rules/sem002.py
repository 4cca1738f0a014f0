"""SEM002 element-read-passed-as-semaphore

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
Safe where the file proves `sems` is a Ref and how many indices pick one semaphore of it.
A Ref: a `.at[...]` view (`sems.at[s][0]`, or `window[0]`
after `window = sems.at[s]`: a view is always a Ref, but see its rank below), `sems.at[...]` or
`sems[...]` in the same scope (an attribute chain such as `c.sems` only where each name in it
resolves to the same binding: a comprehension, lambda or class body binding its own `c` proves
nothing about the function's), or a `SemaphoreType.X((n,))` allocation in `run_scoped`, in `scratch_shapes` of
`pallas_call` itself or of JAX's own grid specs (also one held in a local used nowhere else;
not a helper's call, which may add entries), or in `scratch_types` of `pl.kernel` (a list or
tuple by position; a dict by name, `dict(sems=...)` or `{"sems": ...}`, with no `**` entry and
changed nowhere; each body of a list of bodies, `body=[k1, k2]`; an allocation placed on one of
Pallas's meshes, `DMA((2,)) @ mesh`, is that allocation; not pallas_call's dict), also through
a decorator (`@functools.partial(pl.pallas_call, ...)`, `@functools.partial(pl.run_scoped,
...)`, `@pl.core_map(mesh, scratch_shapes=...)`, `@pl.kernel(..., scratch_types=...)`), for a
kernel launched as a def of the file, `functools.partial` of one (held in a local bound once
too: `kernel = functools.partial(_kernel, n=n)`), a factory's call (`make_kernel(2)`, where
the factory, undecorated or `functools.cache`d, returns one linked def at its every `return`),
a method (`self.kernel` of a class the file does not subclass, `K.kernel`; plain, static or
class methods no attribute store rebinds) or a lambda passing its parameters on, in order
(`lambda *refs: _kernel(*refs, n=2)`; what a partial or a lambda gives a parameter itself is not
read: nothing is proven of that parameter); any other launch links nothing, and
only where every launcher of the kernel is read: one whose scratch semfix cannot see
(`scratch_shapes=make()`, a parameter, `**options`) leaves the allocation unproven. Not where
the code tests its type (`isinstance(sems, tuple)`, `hasattr(sems, "at")`: it expects a tuple
too). Unsafe where it cannot tell (applied only with `--unsafe-fixes`). Never, and not
reported, where `sems[i]` already is a Ref and `.at` would fail: a tuple of Refs (`*sems`, a
slice of it such as `refs[0:2]` or a name assigned one, a starred unpacking target, literals,
an output written as a pytree node in `out_shape` or `out_specs` such as
`(pltpu.SemaphoreType.DMA(()),) * 2`, a parameter that any allocation makes a tuple, also held
in a NamedTuple's field or a dataclass's (stored nowhere in the file): `held.pair` after `held = Held(sems,
pair)`, is what the call gave the field), a container the file builds (a list, tuple or dict
display or comprehension, `tuple(... for ...)`, `dict(zip(...))`, `jax.tree.map` over a
container, a local helper's returned comprehension, a scratch entry written so, or `self.sems`
that every store in the file sets to one and no `.at` views), or a string index
(`sems["load"]`: a dict of Refs). Nor where the allocation's shape
has more dimensions than `sems[i]` gives indices: that reads a row, and `sems.at[i]` would pass
one (SEM004 reports it). Where the allocation is a semaphore array whose shape semfix cannot
read (`X(shape)` of a parameter) or whose launches disagree, the number of indices that pick
one semaphore is not proven: unsafe. A view proves a Ref, not its rank: `window[c]` after
`window = self.sems.at[s]` is safe only where the allocation of `self.sems` shows its rank, or
the file's semaphore arguments that view it (`sem=self.sems.at[s, c]`, in any method of the
class for `self.`; a view's read `sems.at[s][...]` too, which SEM001 makes the view) all give
one number of indices, and `window.at[c]` gives it; else unsafe. So does any other use: where
the allocation is out of sight, `sems.at[1]` handed to a class, or `sems[...]` read, proves a
Ref of one dimension or more, never how many; `sems[0]` is then safe only where the semaphore
arguments show one index picks one semaphore, else unsafe.
`sems[i][j]` of a proven Ref is reported with the view `sems.at[i, j]`, never fixed:
`sems[i].at[j]` would be jnp's `.at` of a value. A name an assignment unpacks
(`buf, sems = refs`) may hold a tuple too: fixed only where the file proves it a Ref
(`sems.at[0]`), else not reported; a loop's (`for buf, sems in ...`) may differ at each pass,
so never, unless the loop runs over a literal (written there, or held by a name bound once)
whose values there hold no tuple of Refs (`for src, sem in ((x, sems.at[0]), (y, b))`): then
`sem[0]` is reported, as for a parameter (its fix unsafe unless the scope proves `sem` a Ref).
`sems[0].at[1]` views a value (jnp's `.at`): where the file shows `sems` a Ref (`refs[0].at[1]`
of a tuple of Refs is common, and right), fixed to `sems.at[0].at[1]`, safe as above with the
outer view's indices counted in the rank; `row = sems[0]` then `row.at[1]` is reported at the
read, not fixed. `vals[k]`, where a local `vals` is a comprehension of reads (`[sems[i] for i
in ...]`), is judged at the read `sems[i]`, fixed there only where `vals` is read as semaphore
arguments alone. `.at` goes just before `[`: a comment or line break around the index
stays. Each branch of a conditional expression (`sems[0] if first else sems[1]`) is an argument
of its own.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import replace
from typing import Literal

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.evidence import Kind
from semfix.analysis.nodes import Rewrite, element_read, keyed_by_text
from semfix.analysis.scopes import Scope
from semfix.analysis.views import indices, unview
from semfix.findings import Fix
from semfix.rewrite.text import apply_edits
from semfix.rules.base import Invalid, Rule

CODE = "SEM002"

_UNPROVEN = """\
from jax.experimental import pallas as pl


def barrier_kernel(x_ref, o_ref, sems):
    o_ref[...] = x_ref[...]
    pl.semaphore_wait(sems[1], 1)
"""

RULE = Rule(
    code=CODE,
    name="element-read-passed-as-semaphore",
    summary="`sems[i]` reads one semaphore of an array Ref; pass the view `sems.at[i]`. Safe where the "
    "code shows `sems` is a Ref, unsafe where it cannot tell, never for a tuple of Refs.",
    fix="safe with proof, else unsafe",
    fix_note="`sems.at[i]`, where the file proves `sems` a Ref of that rank (its `SemaphoreType.X((n,))` "
    "allocation, or `.at[...]` views given as semaphores with one number of indices); "
    "never for a tuple or dict of Refs",
    docs=__doc__ or "",
    settles=False,  # another fix's new `.at` view may prove the Ref: an unsafe finding may turn safe
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def star_kernel(x_hbm, o_hbm, *sems):
    pltpu.make_async_copy(x_hbm, o_hbm, sems[0]).start()
    pl.semaphore_signal(sems[1], 1)
""",
        """\
from jax.experimental import pallas as pl


def named_kernel(x_ref, o_ref, sems, *refs):
    pairs = refs[0:2]
    pl.semaphore_signal(sems["load"], 1)
    pl.semaphore_signal(pairs[1], 1)
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


_TYPE_TESTS = frozenset({"isinstance", "hasattr", "getattr", "type"})


_TYPE_TESTED = object()  # the key of what `_type_tested` works out once per file, in `Context.memo`


def _type_tested(ctx: Context, key: object) -> bool:
    """Does the code test what `key` names (`isinstance(sems, tuple)`, `hasattr(sems, "at")`)?
    Then it expects something else than a Ref there too (a tuple of Refs, where `sems[i]` is
    right): evidence from one branch must not rewrite another."""
    if _TYPE_TESTED not in ctx.memo:
        ctx.memo[_TYPE_TESTED] = {
            ctx.key(c.args[0], ctx.scopes.scope_of[id(c)])
            for c in ctx.scopes.calls
            if isinstance(c.func, ast.Name) and c.func.id in _TYPE_TESTS and c.args
        }
    tested = ctx.memo[_TYPE_TESTED]
    assert isinstance(tested, set)  # what this function keeps under the key, above
    return key in tested


def _proven(ctx: Context, base: ast.expr, scope: Scope) -> bool:
    """Does the file show `base` is a Ref: `base.at[...]` or `base[...]` in the same scope?
    For an attribute chain the texts match, so both it and the proof must keep their Ref."""
    key = ctx.key(base, scope)
    if key is None or key not in ctx.proofs():
        return False
    return not isinstance(base, ast.Attribute) or (
        ctx.unstable(base, scope) is None and any(ctx.unstable(p, s) is None for p, s in ctx.proof_sites[key])
    )


def _evidence(ctx: Context, base: ast.expr, scope: Scope) -> str | None:
    """Why the file shows `base` is a Ref, in words; None where it does not: an array
    allocation, a view (`unview`: `window = sems.at[s]` too), or `base.at[...]` or `base[...]`
    in the scope (`_proven`)."""
    if ctx.kind(base, scope) is Kind.ARRAY:
        return messages.ALLOCATED_ARRAY
    if unview(base, scope).levels:
        return messages.VIEWED
    return "" if _proven(ctx, base, scope) else None


def _unranked(ctx: Context, element: ast.Subscript, scope: Scope, one: bool, beyond: tuple[ast.expr, ...]) -> bool:
    """Is `element` read out of an allocated semaphore array, or (`one`: a semaphore argument,
    not a buffer, whose view may have any shape) out of any other Ref, where the file does not
    show that the element's indices pick one semaphore: an allocation's shape semfix cannot read
    (`X(shape)`), launches that disagree, an allocation out of sight and no rank shown
    (`rank_shown`: a use, `sems.at[1]` handed to a class, proves a Ref of rank 1 or more, never
    which), or another number of indices? `beyond`: the indices of views
    taken of the element (`sems[0].at[1]`), which pick semaphores too once it is a view."""
    view = unview(element.value, scope)
    if ctx.kind(view.base, view.scope) is Kind.ARRAY:
        rank = ctx.rank(view.base, view.scope)
    elif one:
        rank = ctx.rank_shown(view.base, view.scope)
    else:
        return False
    entries, counted = indices(element, scope)
    outer = [i for level in view.levels for i in level] + list(beyond)
    used = len(entries) + sum(not ctx.keeps_dimension(i, view.scope) for i in outer)
    counted = counted and not any(isinstance(i, ast.Starred) or _ellipsis(i) for i in beyond)
    return rank is None or not (counted and view.counted) or rank[0] != used


def _ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis


def _one_view(ctx: Context, element: ast.Subscript, scope: Scope) -> str | None:
    """`sems.at[i, j]` for `sems[i][j]`, where neither index keeps a dimension."""
    inner = element.value
    assert isinstance(inner, ast.Subscript)  # an element read's value: `_evidence` found it one
    parts = [*indices(inner, scope)[0], *indices(element, scope)[0]]
    if any(ctx.keeps_dimension(p, scope) or isinstance(p, ast.Starred) for p in parts):
        return None
    return f"{ctx.text.of(inner.value)}.at[{', '.join(ctx.text.of(p) for p in parts)}]"


def check(
    ctx: Context,
    call: ast.Call,
    element: ast.Subscript,
    scope: Scope,
    previous: Rewrite | None,
    *,
    code: str = CODE,
    words: Callable[..., str] = messages.element_read,
    beyond: tuple[ast.expr, ...] = (),
) -> Rewrite | None:
    """`X[i]` to `X.at[i]`, with the safety the docs give. After SEM001's rewrite `previous`
    (`X[i][...]`) the view joins it: one rewrite, one finding. `beyond`: the indices of the
    views the argument takes of `X[i]` (`X[i].at[j]`: jnp's `.at` of a value, `X.at[i].at[j]` once fixed)."""
    base = element.value
    kind = ctx.kind(base, scope)
    if kind is Kind.TUPLE or keyed_by_text(element):  # `sems[i]` or `sems["load"]` already is a Ref
        return previous
    if element_read(base) and _evidence(ctx, base.value, scope) is not None:  # `sems[i][j]`: `.at` of a value
        ctx.report(code, element, messages.read_of_a_read(ctx.text.of(element), _one_view(ctx, element, scope)), None)
        return previous
    evidence = _evidence(ctx, base, scope)
    if beyond and evidence is None:  # `refs[0].at[1]` of a tuple of Refs is common and right: only a proven Ref's
        return previous
    unranked = evidence is not None and _unranked(ctx, element, scope, code == CODE, beyond)
    # `X[i][j]` with `X` not shown a tuple of Refs: `X[i]` may be a value read out of a Ref
    doubt: Literal["rank", "value", "kind"] | None = (
        "rank"
        if unranked
        else "value"
        if element_read(base) and ctx.kind(base.value, scope) is not Kind.TUPLE
        else None
    )
    safe = evidence is not None and not unranked and not _type_tested(ctx, ctx.key(base, scope))
    gap = ctx.bracket(element)
    if gap is None:  # text before `[` that no known source holds: reported, not cut
        ctx.report(code, element, messages.not_cut(ctx.text.of(element)), None)
        return previous
    cut = gap.end() - 1  # `.at` just before `[` keeps every byte around it, comments included
    insert = (cut, cut, ".at")
    start, end = ctx.text.start(element)[2], ctx.text.end(element)[2]
    view = ctx.text.text[start:cut] + ".at" + ctx.text.text[cut:end]
    message = words(ctx.text.of(element), view, safe=safe, evidence=evidence, base=ctx.text.of(base))
    if unranked:
        message = messages.rank_unproven(ctx.text.of(element), view, ctx.text.of(unview(base, scope).base))
    replacement = copy.deepcopy(element)
    replacement.value = ast.Attribute(value=replacement.value, attr="at", ctx=ast.Load())
    if previous is None:
        return (
            Rewrite(call, element, replacement, [insert])
            if ctx.report(code, element, message, view, safe=safe, doubt=doubt)
            else None
        )
    if not ctx.accepts(code, element, safe, finding=previous.argument):  # the finding it joins is the read's
        ctx.report(code, element, message, view, safe=safe, doubt=doubt)
        return previous
    edits = sorted([*previous.edits, insert])
    suggestion = apply_edits(
        ctx.text.text, ctx.text.start(previous.argument)[2], ctx.text.end(previous.argument)[2], edits
    )
    last = ctx.findings[-1]
    joined = messages.read_then_view(last.message, suggestion, safe=safe)
    applicability = last.fix.applicability if safe and last.fix is not None else "unsafe"
    # `X[i][()]` of an `X` not shown a Ref: a tuple of Refs' element read too (`X[i]` is the fix then)
    kept = doubt or (last.fix.doubt if last.fix is not None else None) or ("kind" if evidence is None else None)
    ctx.findings[-1] = replace(last, fix=Fix(suggestion, applicability, doubt=kept), message=joined)
    return Rewrite(call, previous.argument, replacement, edits)
