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
and never made for a tuple or list of Refs, nor a string index into a dict of them (`sync_copy`
takes pytrees of Refs, where `refs[0:2]` and `bufs["k"]` are right).

A variable carrying a read (`v = x_ref[...]`) is fixed as SEM003 does, and only where nothing
may write the Ref: the copy then reads it when the DMA runs, not when the value was read. Flow
is not followed (before or after the read, in loops, all count), nor are other names for the
buffer, so `x_ref` must be a parameter of the very function holding the read (not
`alias = x_ref`, `top = x_ref.at[0]`, nor an enclosing function's), and that function must hold:
- no use of `x_ref` but a read, its `.shape`, `.dtype` or `.ndim`, or a DMA source (a store,
  a DMA destination, or a call given it or a view of it may write it);
- no store into a subscript of anything but a parameter Ref, no other DMA into anything but
  one, no nested function, and no assignment or loop that may give a Ref another name;
- no call but a builtin's, an array's method, a DMA descriptor's `.start()`/`.wait()`, or
  JAX's or NumPy's that writes no Ref (`pl.store`, the atomics), calls back into no function
  it is given (`jax.lax.fori_loop`, `pl.when`, `pl.run_scoped`: a body given as a parameter
  may write the very buffer), and is given no callable and no holder's attribute (a holder's
  `self.st[...] = ...` may write the very buffer).
Two parameter Refs that alias one buffer (`input_output_aliases`) are not modelled. Whole Refs
are the usual buffers: SEM004 does not apply here. A read given to `functools.partial` of a DMA
is reported, not fixed: the partial reads it when it is made, the copy would read the Ref later.
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
        rewrite = sem002.check(ctx, call, current, scope, rewrite, code=CODE, words=messages.buffer_view)
    return rewrite


def _written(ctx: Context, plan: sem003.Carried, scope: Scope) -> str | None:
    """Why the Ref may hold other data when the DMA runs than at the read: one walk of the
    function, whose parameter the Ref must be, for any access to its name that may write it
    and for anything that may write it under another name (see the docs). None when none."""
    root = unchain(plan.ref)[0]
    owner, bindings = scope.lookup(root.id) if isinstance(root, ast.Name) else (None, [])
    if not isinstance(root, ast.Name) or not bindings:
        return f"`{messages.one_line(ctx.text.of(plan.ref))}` may be written outside this file"
    bound = next((b for b in bindings if b.kind not in ("param", "star_param")), None)
    if bound is not None:  # `alias = x_ref`: writes through `x_ref` or other names are not followed
        line = getattr(bound.node, "lineno", None)
        return f"`{root.id}` is bound {f'at line {line} ' if line else ''}in the file: the Ref may have other names, and writes through them are not followed"
    if owner is not scope:  # a closure's read: what its caller runs before the copy is not seen
        return f"the read is not in the function whose parameter `{root.id}` is, and what runs around it is not followed"

    accesses = {id(a.top): a for a in ctx.tracking().references(root.id, scope)}
    into = {id(node) for argument in ctx.destinations for node in ast.walk(argument)}
    sources = {id(argument) for argument in ctx.sources}  # the whole argument: not `f(x_ref)` in it
    uses = {id(use) for use in plan.uses}
    for node in ast.walk(scope.node):  # type: ignore[arg-type]
        where = f"at line {getattr(node, 'lineno', '?')}"
        access = accesses.get(id(node))
        if access is not None and id(access.name) in into:
            return f"`{messages.one_line(ctx.text.of(node))}` {where} is a DMA destination, and the DMA copies the Ref as it is when it runs"
        if access is not None and not _reads(access) and id(node) not in sources:
            return f"`{messages.one_line(ctx.text.of(node))}` {where} may write the Ref, and the DMA copies the Ref as it is when it runs"
        if node is not scope.node and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return f"the function {where} may write the Ref under another name, and it is not followed"
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) and not _parameter(node, scope):
            return f"`{messages.one_line(ctx.text.of(node))}` {where} writes a Ref, maybe this one under another name"
        if isinstance(node, ast.Call) and not _writes_nothing(ctx, node, scope, uses):
            return f"`{messages.one_line(ctx.text.of(node.func))}(...)` {where} may write the Ref under another name"
        if isinstance(node, ast.Assign) and _may_alias(node.value, scope) or isinstance(node, (ast.For, ast.AsyncFor)) and not isinstance(node.iter, ast.Call):
            return f"line {node.lineno} may give a Ref another name, and writes through it are not followed"
    return None


def _reads(access: Access) -> bool:
    """Does the access only read: its chain reads data (a subscript not on `.at`, after which
    it holds a value) or starts with `.shape`, `.dtype` or `.ndim`?"""
    steps = access.steps
    if access.context is not ast.Load:
        return False
    if steps and steps[0] in _METADATA:
        return True
    return any(step is None and (index == 0 or steps[index - 1] != "at") for index, step in enumerate(steps))


def _parameter(node: ast.expr, scope: Scope) -> bool:
    """Is `node` a parameter Ref (bound once, as a parameter), read or viewed: `o_ref`,
    `o_ref.at[i]`, `o_ref[0:8]`? Parameters are taken to be distinct buffers (see the docs),
    unlike an attribute of one (`self.st`), which another name may hold."""
    root, steps, _ = unchain(node)
    bindings = scope.lookup(root.id)[1] if isinstance(root, ast.Name) else []
    return len(bindings) == 1 and bindings[0].kind == "param" and all(step in (None, "at") for step in steps)


def _may_alias(value: ast.expr, scope: Scope) -> bool:
    """Could `name = value` name a Ref: a name that is not an import, an attribute chain or a
    view of one (`alias = stage`, `top = stage.at[0]`, `st = self.st`)?"""
    root, steps, _ = unchain(value)
    if not isinstance(root, ast.Name) or read_target(value) is not None or _METADATA.intersection(steps):  # type: ignore[arg-type]
        return False  # a call's result, a constant, a read `X[...]`, `x_ref.shape[0]`
    return not any(b.kind == "import" for b in scope.lookup(root.id)[1])


#: Builtins a kernel uses for indices; and JAX's functions that write a Ref they are given.
_BUILTINS = frozenset({"range", "len", "min", "max", "int", "float", "bool", "abs", "slice", "tuple", "list", "enumerate", "zip", "divmod"})
_WRITERS = frozenset({"store", "swap", "addupdate", "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas"})
#: JAX's functions that call a function they are given, which may write the Ref: a body this
#: file defines is seen (and refused) as one, but a parameter or an import is any code at all.
_CALLS_BACK = frozenset({
    "fori_loop", "while_loop", "cond", "switch", "scan", "map", "associative_scan", "reduce", "reduce_window",
    "custom_root", "custom_linear_solve", "platform_dependent", "when", "loop", "run_scoped", "run_state",
    "core_map", "kernel", "pallas_call", "emit_pipeline", "emit_pipeline_with_allocations", "run_on_first_core",
    "jit", "vmap", "pmap", "shard_map", "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
    "hessian", "checkpoint", "remat", "named_call", "pure_callback", "io_callback", "callback", "tree_map",
    "eval_shape", "make_jaxpr", "custom_vjp", "custom_jvp", "piecewise", "apply_along_axis", "apply_over_axes",
    "vectorize", "frompyfunc",
})
_NOT_INERT = _WRITERS | _CALLS_BACK


def _writes_nothing(ctx: Context, call: ast.Call, scope: Scope, uses: set[int]) -> bool:
    """Is the call a builtin's, an array's method, `.start()`/`.wait()` of a descriptor JAX
    made, or JAX's or NumPy's that writes no Ref and is given nothing that could reach one by
    another name? A DMA writes nothing of concern if it copies the carried value (its
    destination is judged as an access) or only into parameter Refs."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in _BUILTINS and not scope.lookup(func.id)[1]:
        return True
    if isinstance(func, ast.Attribute) and func.attr in ("start", "wait"):
        made = func.value  # the descriptor, or the name of each of its assignments
        values = [getattr(b.node, "value", None) for b in scope.lookup(made.id)[1]] if isinstance(made, ast.Name) else [made]
        return bool(values) and all(isinstance(v, ast.Call) and _jax(ctx, v, scope) for v in values)
    if isinstance(func, ast.Attribute) and (
        read_target(func.value) is not None or isinstance(func.value, ast.Call) and _writes_nothing(ctx, func.value, scope, uses)
    ):
        return True  # `x_ref[...].astype(int)`: a method of an array, which writes nothing
    names = _jax(ctx, call, scope)
    if not names or any(name.rpartition(".")[2] in _NOT_INERT for name in names):
        return False
    if not all(_inert(argument, scope) for argument in (*call.args, *(k.value for k in call.keywords))):
        return False
    inside = {id(node) for node in ast.walk(call)}
    if not any(op is not None and op.buffer_params for op in map(lookup, names)) or uses & inside:
        return True
    into = [d for d in ctx.destinations if id(d) in inside]  # another DMA: where it writes
    return bool(into) and all(_parameter(d, scope) for d in into)


def _jax(ctx: Context, call: ast.Call, scope: Scope) -> set[str]:
    """The qualified names the callee may be, if all are JAX's, NumPy's or `math`'s; else none."""
    names = ctx.qualified(call.func, scope) or set()
    return names if all(name.split(".", 1)[0] in ("jax", "numpy", "math") for name in names) else set()


def _inert(argument: ast.expr, scope: Scope) -> bool:
    """Can a JAX call given this neither call back into code nor reach a Ref by another name:
    no lambda, no function defined in or imported into the file, no attribute of anything but a module or a
    parameter Ref (`self.st`, a holder's attribute, may be the very buffer)?"""
    roots = {id(node.value) for node in ast.walk(argument) if isinstance(node, ast.Attribute)}  # `pl` in `pl.ds`
    for node in ast.walk(argument):
        if isinstance(node, ast.Lambda):
            return False
        if isinstance(node, ast.Name) and any(b.kind == "def" or b.kind == "import" and id(node) not in roots for b in scope.lookup(node.id)[1]):
            return False  # a function, defined here or imported
        if isinstance(node, ast.Attribute) and not _parameter(node, scope):
            root = unchain(node)[0]
            if not isinstance(root, ast.Name) or any(b.kind != "import" for b in scope.lookup(root.id)[1]):
                return False
    return True
