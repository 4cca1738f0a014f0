'''SEM005 value-passed-as-dma-buffer

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
and never made for a tuple or list of Refs (`sync_copy` takes pytrees of Refs, where
`refs[0:2]` is right). A variable carrying a read (`v = x_ref[...]`) is fixed as SEM003 does,
and only when nothing in its scope may write the Ref: the copy then reads the Ref when the DMA
runs, not when the value was read, so any store into it, any call or DMA destination given it
or a view of it, or any other use than a read, a DMA source or its `.shape`, `.dtype`, `.ndim`
makes it report-only
(flow is not followed: before or after the read, loops and nested functions count), and so does
a Ref name that is not a parameter (`alias = x_ref`, `top = x_ref.at[0]`): its other names are
not followed. Nor are other names for the same buffer, so the function must also hold no
store into a subscript of anything but a parameter Ref, no other DMA into anything but one, no
nested function, no assignment or loop that may give a Ref another name, and no call but a
builtin's, an array's method, a DMA descriptor's `.start()`/`.wait()`, or JAX's or NumPy's
that writes no Ref (`pl.store`, the atomics) and is given no callable and no holder's
attribute (a holder's `self.st[...] = ...` may write the very buffer).
Two parameter Refs that alias one buffer (`input_output_aliases`) are not modelled. Whole Refs are the usual
buffers: SEM004 does not apply here.
'''

from __future__ import annotations

import ast

from semfix import messages
from semfix.catalog import lookup
from semfix.engine.context import Context
from semfix.engine.nodes import Rewrite, is_at, read_target, unchain
from semfix.engine.scopes import Access, Scope
from semfix.rules import sem001, sem002, sem003
from semfix.rules.base import Invalid, Rule

CODE = "SEM005"
WORDS = (
    "`{name}` holds a value read from the Ref at line {line} and is passed as a DMA buffer; pass the Ref `{ref}`",
    "`{assign}` only carried the read to DMA buffers; removed with them",
)
_METADATA = frozenset({"shape", "dtype", "ndim"})

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
    default=True,
    docs=__doc__ or "",
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


def check(ctx: Context, call: ast.Call, argument: ast.expr, scope: Scope, *, carried: bool = True) -> Rewrite | None:
    """A DMA buffer through the rules SEM005 reuses, with its own code and words: a name
    carrying a read (SEM003's plan, and `_written`); a read (SEM001), then the element or
    slice read under it (SEM002, joining the read's rewrite). The rewrite, if accepted."""
    if isinstance(argument, ast.Name):
        if carried:
            sem003.check(ctx, call, argument, scope, code=CODE, words=WORDS, arguments=ctx.buffer_args, guard=_written)
        return None
    rewrite: Rewrite | None = None
    current = read_target(argument) or argument  # `X` in `X[...]`
    if current is not argument:
        rewrite = sem001.check(ctx, call, argument, code=CODE, words=messages.buffer_read)  # type: ignore[arg-type]
        if rewrite is None:
            return None
    if isinstance(current, ast.Subscript) and not is_at(current.value) and read_target(current) is None:
        floor = ctx.text.start(argument)[2] if current is not argument else None
        rewrite = sem002.check(ctx, call, current, scope, rewrite, floor, code=CODE, words=messages.buffer_view)
    return rewrite


def _written(ctx: Context, plan: sem003.Carried, scope: Scope) -> str | None:
    """Why the Ref may hold other data when the DMA runs than at the read: any access to its
    name in the scope that may write it (see `_reads`), or that is in a DMA destination (where
    a fix makes a read the Ref written). A DMA source only reads. None when there is none."""
    root = plan.ref
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name) or not scope.lookup(root.id)[1]:
        return f"`{messages.one_line(ctx.text.of(plan.ref))}` may be written outside this file"
    bound = next((b for b in scope.lookup(root.id)[1] if b.kind not in ("param", "star_param")), None)
    if bound is not None:  # `alias = x_ref`: writes through `x_ref` or other names are not followed
        line = getattr(bound.node, "lineno", None)
        return f"`{root.id}` is bound {f'at line {line} ' if line else ''}in the file: the Ref may have other names, and writes through them are not followed"

    elsewhere = _written_elsewhere(ctx, plan, scope)
    if elsewhere is not None:
        return elsewhere
    into = [(ctx.text.start(a)[2], ctx.text.end(a)[2]) for a in ctx.destinations]
    sources = {id(a) for a in ctx.sources}  # the whole argument: not `f(x_ref)` in it
    for access in ctx.tracking().references(root.id, scope):
        start = ctx.text.start(access.name)[2]
        where = f"`{messages.one_line(ctx.text.of(access.top))}` at line {access.name.lineno}"
        if any(low <= start < high for low, high in into):
            return f"{where} is a DMA destination, and the DMA copies the Ref as it is when it runs"
        if not _reads(access) and id(access.top) not in sources:
            return f"{where} may write the Ref, and the DMA copies the Ref as it is when it runs"
    return None


#: Calls that write no Ref: what JAX, NumPy and `math` export (the catalog's DMAs aside), and
#: builtins a kernel uses for indices.
_PURE_MODULES = ("jax", "numpy", "math")
_BUILTINS = frozenset({"range", "len", "min", "max", "int", "float", "bool", "abs", "slice", "tuple", "list", "enumerate", "zip", "divmod"})


def _written_elsewhere(ctx: Context, plan: sem003.Carried, scope: Scope) -> str | None:
    """Why some other name may write the same buffer in the read's function: the Ref may also
    be a holder's attribute set elsewhere (`self.st`), a second parameter, or a helper's
    closure, and names are not followed across those. So any store into a subscript, any DMA
    other than the carried read's own copies, any nested function and any call other than
    JAX's, NumPy's, a builtin's or a DMA descriptor's `.start()`/`.wait()` makes the read
    report-only. None when the function has none of them."""
    function = scope.node
    if function is None:
        return "the read is not in a function, whose writes could be followed"
    uses = {id(use) for use in plan.uses}
    for node in ast.walk(function):
        where = f"at line {getattr(node, 'lineno', '?')}"
        if node is not function and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return f"the function {where} may write the Ref under another name, and it is not followed"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and not _parameter(node, scope):
            return f"`{messages.one_line(ctx.text.of(node))}` {where} writes a Ref, maybe this one under another name"
        if isinstance(node, ast.Call) and not _writes_nothing(ctx, node, scope, uses):
            return f"`{messages.one_line(ctx.text.of(node.func))}(...)` {where} may write the Ref under another name"
        if isinstance(node, ast.Assign) and _may_alias(node.value, scope) or isinstance(node, (ast.For, ast.AsyncFor)) and not isinstance(node.iter, ast.Call):
            return f"line {node.lineno} may give a Ref another name, and writes through it are not followed"
    return None


def _may_alias(value: ast.expr, scope: Scope) -> bool:
    """Could `name = value` name a Ref: a name that is not an import, an attribute chain or a
    view of one (`alias = stage`, `top = stage.at[0]`, `st = self.st`)?"""
    root, steps, _ = unchain(value)
    if not isinstance(root, ast.Name) or read_target(value) is not None or _METADATA.intersection(steps):  # type: ignore[arg-type]
        return False  # a call's result, a constant, a read `X[...]`, `x_ref.shape[0]`
    return not any(b.kind == "import" for b in scope.lookup(root.id)[1])


def _parameter(node: ast.expr, scope: Scope) -> bool:
    """Is `node` a parameter Ref (bound once, as a parameter), read or viewed: `o_ref`,
    `o_ref.at[i]`, `o_ref[0:8]`? Parameters are taken to be distinct buffers (see the docs),
    unlike an attribute of one (`self.st`), which another name may hold."""
    root, steps, _ = unchain(node)
    bindings = scope.lookup(root.id)[1] if isinstance(root, ast.Name) else []
    return len(bindings) == 1 and bindings[0].kind == "param" and all(step in (None, "at") for step in steps)


def _writes_nothing(ctx: Context, call: ast.Call, scope: Scope, uses: set[int]) -> bool:
    """Is the call JAX's (a DMA only if it copies the carried value), NumPy's, a builtin's, or
    `.start()`/`.wait()` of a DMA descriptor that is itself judged here?"""
    func = call.func
    if isinstance(func, ast.Name) and func.id in _BUILTINS and not scope.lookup(func.id)[1]:
        return True
    if isinstance(func, ast.Attribute) and func.attr in ("start", "wait"):
        made = func.value
        if isinstance(made, ast.Name):
            bindings = scope.lookup(made.id)[1]
            values = [getattr(b.node, "value", None) for b in bindings]
            return bool(values) and all(isinstance(v, ast.Call) and _is_jax(ctx, v, scope) for v in values)
        return isinstance(made, ast.Call) and _is_jax(ctx, made, scope)
    if isinstance(func, ast.Attribute) and _is_value(ctx, func.value, scope, uses):
        return True  # `x_ref[...].astype(int)`: a method of an array, which writes nothing
    if not _is_jax(ctx, call, scope) or _callee_name(func) in _WRITERS or not all(_inert(a, scope) for a in _arguments_of(call)):
        return False
    operations = {lookup(name) for name in ctx.qualified(func, scope) or ()}
    if not any(op is not None and op.buffer_params for op in operations) or any(id(n) in uses for n in ast.walk(call)):
        return True
    low, high = ctx.text.start(call)[2], ctx.text.end(call)[2]
    into = [d for d in ctx.destinations if low <= ctx.text.start(d)[2] < high]  # another DMA: where it writes
    return bool(into) and all(_parameter(d, scope) for d in into)


#: JAX functions that write a Ref they are given (the catalog's DMAs aside).
_WRITERS = frozenset({"store", "swap", "addupdate", "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas"})


def _callee_name(func: ast.expr) -> str | None:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


def _arguments_of(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _inert(argument: ast.expr, scope: Scope) -> bool:
    """Can a JAX call given this neither call back into code nor reach a Ref by another name:
    no lambda, no function defined in the file, no attribute of anything but a module?"""
    for node in ast.walk(argument):
        if isinstance(node, ast.Lambda):
            return False
        if isinstance(node, ast.Name) and any(b.kind == "def" for b in scope.lookup(node.id)[1]):
            return False
        if isinstance(node, ast.Attribute):
            root = unchain(node)[0]
            if not isinstance(root, ast.Name) or not all(b.kind in ("import", "param") for b in scope.lookup(root.id)[1]):
                return False
            if any(b.kind == "param" for b in scope.lookup(root.id)[1]) and not _parameter(node, scope):
                return False  # `self.st`: a holder's attribute
    return True


def _is_value(ctx: Context, node: ast.expr, scope: Scope, uses: set[int]) -> bool:
    """An array, not an object that could write: a whole read `X[...]`/`X[()]`, or the result
    of a call that writes nothing."""
    if isinstance(node, ast.Call):
        return _writes_nothing(ctx, node, scope, uses)
    return read_target(node) is not None


def _is_jax(ctx: Context, call: ast.Call, scope: Scope) -> bool:
    names = ctx.qualified(call.func, scope)
    return bool(names) and all(name.split(".", 1)[0] in _PURE_MODULES for name in names)  # type: ignore[union-attr]


def _reads(access: Access) -> bool:
    """Does the access only read: its chain reads data (a subscript not on `.at`, after which
    it holds a value) or starts with `.shape`, `.dtype` or `.ndim`?"""
    steps = access.steps
    if access.context is not ast.Load:
        return False
    if steps and steps[0] in _METADATA:
        return True
    return any(step is None and (index == 0 or steps[index - 1] != "at") for index, step in enumerate(steps))
