"""Whether a Ref a rewrite reads again may hold other data at the use than at the read.

The rules on carried reads replace a variable holding a read (`v = X[...]`) by an expression
that is evaluated again at each use: a DMA copies the buffer `X` as it is when it runs, and for
semaphores and buffers alike, an index that reads a Ref (`sems.at[slot_ref[0]]`) reads it again. A Ref's `.at[...]`
views share its memory, so any way of writing it counts: a store through any chain of views,
`pl.store` and the atomics, a DMA into it or a view of it, a call or another name given it.
`written` is the one check for every Ref such an expression reads; `index_reads` finds them in indices.

Flow is not followed (before or after the read, in loops, all count), nor are other names, so
the Ref must be a parameter of the very function holding the read, and that function must
hold nothing that may write it under any name: see the DMA buffer rule's docs (semfix/rules/), which list what counts.
"""

from __future__ import annotations

import ast

from semfix import messages
from semfix.analysis.context import Context
from semfix.analysis.nodes import content_read, read_target, unchain
from semfix.analysis.scopes import Access, Scope
from semfix.catalog import lookup

_METADATA = frozenset({"shape", "dtype", "ndim"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def index_reads(node: ast.expr) -> list[ast.expr]:
    """The Refs the indices in `node` read, once each, in source order: `X` in each `X[i]` (not a
    view `X.at[i]`) inside an index, nested ones too (`slot_ref` in `sems.at[slot_ref[0]][...]`).
    A Python container indexed there (`offsets[k]`) counts too: nothing tells it from a Ref."""
    indices = [n.slice for n in ast.walk(node) if isinstance(n, ast.Subscript)]
    found = {
        id(n.value): n.value
        for index in indices
        for n in ast.walk(index)
        if isinstance(n, ast.Subscript) and content_read(n)
    }
    return sorted(found.values(), key=lambda n: (n.lineno, n.col_offset))


def written(ctx: Context, ref: ast.expr, scope: Scope, carrier: ast.stmt, uses: set[int]) -> str | None:
    """Why the Ref `ref` (a name, or a chain or view under one) may hold other data at a use
    than at the read: one walk of the function, whose parameter the Ref's name must be, for any
    access to that name that may write it and for anything that may write it under another name.
    `carrier` is the carried read's assignment, which names no Ref (its value is a read of a Ref
    the fix proved one), and `uses` (ids) its variable's uses: a DMA given one copies the value
    read. None when nothing may write it."""
    root = unchain(ref)[0]
    shown = f"`{messages.one_line(ctx.text.of(ref))}`"
    owner, bindings = scope.lookup(root.id) if isinstance(root, ast.Name) else (None, [])
    if not isinstance(root, ast.Name) or not bindings:
        return f"{shown} may be written outside this file"
    bound = next((b for b in bindings if b.kind not in ("param", "star_param")), None)
    if bound is not None:  # `alias = x_ref`: writes through `x_ref` or other names are not followed
        line = getattr(bound.node, "lineno", None)
        return (
            f"`{root.id}` is bound {f'at line {line} ' if line else ''}in the file: the Ref may have other names, "
            "and writes through them are not followed"
        )
    if owner is not scope:  # a closure's read: what its caller runs before the use is not seen
        return (
            f"the read is not in the function whose parameter `{root.id}` is, and what runs around it is not followed"
        )

    accesses = {id(a.top): a for a in ctx.tracking().references(root.id, scope)}
    into = {id(node) for argument in ctx.destinations for node in _written_names(argument)}
    sources = {id(argument) for argument in ctx.sources}  # the whole argument: not `f(x_ref)` in it
    again = f"and {shown} is read again at the use"
    assert scope.node is not None  # the scope binding a parameter is its def's or lambda's
    for node in ast.walk(scope.node):
        where = f"at line {getattr(node, 'lineno', '?')}"
        access = accesses.get(id(node))  # then `node` is `access.top`
        if access is not None and id(access.name) in into:
            return f"`{messages.one_line(ctx.text.of(access.top))}` {where} is a DMA destination, {again}"
        if access is not None and not _reads(access) and id(node) not in sources:
            return f"`{messages.one_line(ctx.text.of(access.top))}` {where} may write {shown}, {again}"
        if node is not scope.node and isinstance(node, _DEFINITIONS):
            return f"the function {where} may write {shown} under another name, and it is not followed"
        stored = isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del))
        if isinstance(node, ast.Subscript) and stored and not _parameter(node, scope):
            return f"`{messages.one_line(ctx.text.of(node))}` {where} writes a Ref, maybe {shown} under another name"
        if isinstance(node, ast.Call) and not _writes_nothing(ctx, node, scope, uses):
            return f"`{messages.one_line(ctx.text.of(node.func))}(...)` {where} may write {shown} under another name"
        if (
            isinstance(node, ast.Assign)
            and node is not carrier
            and not _stored(node, scope)
            and _may_alias(node.value, scope)
            or isinstance(node, (ast.For, ast.AsyncFor))
            and not isinstance(node.iter, ast.Call)
        ):
            return f"line {node.lineno} may give a Ref another name, and writes through it are not followed"
    return None


def _written_names(destination: ast.expr) -> list[ast.AST]:
    """What a DMA destination writes, as the names that reach it: the root of its chain
    (`o_hbm` in `o_hbm.at[cursor_ref[0]]`: the index is only read), each item's of a pytree
    of Refs, and anything in a destination of another shape (a call's result)."""
    if isinstance(destination, (ast.Tuple, ast.List)):
        return [node for item in destination.elts for node in _written_names(item)]
    root = unchain(destination)[0]
    return [root] if isinstance(root, ast.Name) else list(ast.walk(destination))


def _stored(assign: ast.Assign, scope: Scope) -> bool:
    """Does the assignment only store into parameter Refs (`o_ref[0] = v`)? Its value then goes
    into a Ref's memory, and no name is given to it."""
    return all(isinstance(t, ast.Subscript) and _parameter(t, scope) for t in assign.targets)


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
    if not isinstance(root, ast.Name) or read_target(value) is not None:
        return False  # a call's result, a constant, a read `X[...]`
    if _METADATA.intersection(steps):
        return False  # `x_ref.shape[0]`
    return not any(b.kind == "import" for b in scope.lookup(root.id)[1])


#: Builtins a kernel uses for indices; and JAX's functions that write a Ref they are given.
_BUILTINS = frozenset(
    {
        "range",
        "len",
        "min",
        "max",
        "int",
        "float",
        "bool",
        "abs",
        "slice",
        "tuple",
        "list",
        "enumerate",
        "zip",
        "divmod",
    }
)
_WRITERS = frozenset(
    {
        "store",
        "swap",
        "addupdate",
        "atomic_add",
        "atomic_and",
        "atomic_or",
        "atomic_xor",
        "atomic_max",
        "atomic_min",
        "atomic_xchg",
        "atomic_cas",
    }
)
#: JAX's functions that call a function they are given, which may write the Ref: a body this
#: file defines is seen (and refused) as one, but a parameter or an import is any code at all.
_CALLS_BACK = frozenset(
    {
        "fori_loop",
        "while_loop",
        "cond",
        "switch",
        "scan",
        "map",
        "associative_scan",
        "reduce",
        "reduce_window",
        "custom_root",
        "custom_linear_solve",
        "platform_dependent",
        "when",
        "loop",
        "run_scoped",
        "run_state",
        "core_map",
        "kernel",
        "pallas_call",
        "emit_pipeline",
        "emit_pipeline_with_allocations",
        "run_on_first_core",
        "jit",
        "vmap",
        "pmap",
        "shard_map",
        "grad",
        "value_and_grad",
        "vjp",
        "jvp",
        "linearize",
        "jacfwd",
        "jacrev",
        "hessian",
        "checkpoint",
        "remat",
        "named_call",
        "pure_callback",
        "io_callback",
        "callback",
        "tree_map",
        "eval_shape",
        "make_jaxpr",
        "custom_vjp",
        "custom_jvp",
        "piecewise",
        "apply_along_axis",
        "apply_over_axes",
        "vectorize",
        "frompyfunc",
    }
)
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
        bound = scope.lookup(made.id)[1] if isinstance(made, ast.Name) else []
        values = [getattr(b.node, "value", None) for b in bound] if isinstance(made, ast.Name) else [made]
        return bool(values) and all(isinstance(v, ast.Call) and _jax(ctx, v, scope) for v in values)
    if isinstance(func, ast.Attribute) and (
        read_target(func.value) is not None
        or isinstance(func.value, ast.Call)
        and _writes_nothing(ctx, func.value, scope, uses)
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
        bindings = scope.lookup(node.id)[1] if isinstance(node, ast.Name) else []
        if any(b.kind == "def" or b.kind == "import" and id(node) not in roots for b in bindings):
            return False  # a function, defined here or imported
        if isinstance(node, ast.Attribute) and not _parameter(node, scope):
            root = unchain(node)[0]
            if not isinstance(root, ast.Name) or any(b.kind != "import" for b in scope.lookup(root.id)[1]):
                return False
    return True
