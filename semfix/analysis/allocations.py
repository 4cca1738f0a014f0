"""What JAX allocates for kernel and body parameters: the `Allocations` part of `Evidence`.

Kernels' scratch shapes and `run_scoped` allocations (through `pallas_call`, `pl.kernel`,
`run_scoped`, `core_map`, the grid specs, `functools.partial` and decorators) give parameters a
kind (one semaphore, or a tuple or array of them), a semaphore kind and a rank (how many indices
pick one semaphore), each with the allocation that proves it. A launch links its kernel only
where the link is plain (`_function`): what semfix cannot link, it does not prove.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections import Counter
from collections.abc import Collection, Sequence

from semfix.analysis.nodes import has_slice, is_at, source_order, walk
from semfix.analysis.resolution import Kind, Resolution
from semfix.analysis.scopes import Binding, Scope
from semfix.analysis.views import unview
from semfix.catalog import (
    CACHES,
    CORE_MAP,
    GRID_SPECS,
    KERNEL,
    KERNEL_AS_PALLAS_CALL,
    MESHES,
    PALLAS_CALL,
    PALLAS_CALL_POSITIONAL,
    PARTIAL,
    RUN_SCOPED,
    SEMAPHORE_KINDS,
    SEMAPHORE_TYPE_OWNERS,
)
from semfix.patterns import alone, compiled
from semfix.settings import Allocated, Launch

#: A def another module of the run defines, as its import names it: the import's level and
#: module, and the def's name (`from .ops import kernel`: (1, "ops", "kernel"); `from . import
#: ops` then `ops.kernel`: (1, "ops", "kernel") too).
Foreign = tuple[int, str | None, str]
#: A def `pallas_call` runs (or one another module defines), how many leading parameters and
#: which named ones are given already.
Linked = tuple[ast.FunctionDef | ast.AsyncFunctionDef | Foreign, int, set[str]]
#: A name a link to a kernel went through (`_function`): the scope binding it, its spelling, the
#: attribute read of it (`ops.kernel`), and the Name read at the link (None: a launch elsewhere).
Handle = tuple["Scope | None", str, str | None, ast.Name | None]
#: What one allocation proves of the parameter it is bound to: its kind, then its semaphore
#: kind and its rank, each with the allocation that proves it (here, or in another module).
Fact = tuple[Kind, tuple[str, ast.expr | Allocated] | None, tuple[int, ast.expr | Allocated] | None]
_UNATTRIBUTED = compiled(r"(?<![\w.])([A-Za-z_]\w*)(?!\w)(?!\s*\.\s*(?!__)[A-Za-z_])")  # `ops`, not `ops.kernel`
_DYNAMIC = compiled(r"\bglobals\(\)|\bvars\(\)|sys\.modules\b|\bgetattr\(")  # a module's names read by string
_DYNAMIC_WORDS = ("globals()", "vars()", "sys.modules", "getattr(")  # what `_DYNAMIC` may match spells one
_LINKS = 8  # links followed at most (`k = partial(k2, ...)`, `k2 = make()`, ...): a name bound to itself ends
#: Before a name: a longer one, an attribute (`string.ascii_letters`, without loading `string`).
_NAME_OR_DOT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


class Allocations(Resolution):
    """The parameters' kinds, gathered once per file (`gather`)."""

    def gather(self, imported: Collection[str] = (), *, exported: bool = False) -> None:
        """Give kernel and body parameters the kind of what JAX allocates for them: through
        `pallas_call` and `run_scoped` calls, and through what is applied to a body, as a call
        (`pl.core_map(mesh, ...)(body)`) or as the decorator nearest a def. `imported`: the
        names of the run's other modules' kernels, whose imports here read anywhere but at a
        linked launch are launches the run cannot read (`run_launches`); `exported`: a
        package's `__init__`, whose imports other modules import in turn."""
        self._trail: list[Handle] = []  # the names the link `_function` is following went through
        self._links: dict[object, tuple[ast.FunctionDef | ast.AsyncFunctionDef | Foreign, list[Handle]]] = {}
        self._attributes: dict[int, dict[tuple[str, str], list[ast.Name]]] = {}  # `_attribute_reads`
        for call in self.scopes.relevant_calls():
            scope = self.scopes.scope_of[id(call)]
            if self.operation(call) is not None:
                continue
            launcher = next((a for a in (PALLAS_CALL, KERNEL) if self.resolves_to(call.func, scope, a)), None)
            if launcher is not None:  # `pl.pallas_call(kernel, ...)`, `pl.kernel(body, ...)`
                positional = [a for a in call.args if not isinstance(a, ast.Starred)]
                keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
                named = "kernel" if launcher is PALLAS_CALL else "body"
                kernel = keywords.get(named, positional[0] if positional else None)
                if kernel is not None:
                    rest = call.args[1:] if named not in keywords else call.args
                    for body in _bodies(kernel) if launcher is KERNEL else [kernel]:
                        self._allocate(launcher, [*rest, *call.keywords], body, scope)
            elif self.resolves_to(call.func, scope, RUN_SCOPED) and call.args:
                self._allocate(RUN_SCOPED, source_order(call)[1:], call.args[0], scope)
        for call in self.scopes.calls:
            if isinstance(call.func, ast.Call) and len(call.args) == 1 and not call.keywords:
                scope = self.scopes.scope_of[id(call)]
                applied = self._applied(call.func, scope)
                if applied is not None and not isinstance(call.args[0], ast.Starred):
                    self._allocate(*applied, call.args[0], scope)
        for function in self.scopes.functions:
            if function.decorator_list:  # only the nearest one is given the def itself
                scope = self.scopes.scope_of[id(function)]
                applied = self._applied(function.decorator_list[-1], scope)
                if applied is not None:
                    self._allocate(*applied, function, scope)
        self._launched()
        if imported:
            self._imports_of(imported, exported)
        self._escaped()

    def _allocate(
        self, allocator: frozenset[str], arguments: list[ast.expr | ast.keyword], body: ast.AST, scope: Scope
    ) -> None:
        """Give `body`'s parameters the kinds of what `allocator`, given `arguments`, allocates
        for them. The order calls come in does not matter: a parameter given two kinds is a
        tuple if one is (`.at` would fail there), else has none."""
        keywords = {k.arg: k.value for k in arguments if isinstance(k, ast.keyword) and k.arg is not None}
        by_name = allocator is KERNEL  # `pl.kernel` passes a dict of scratch shapes by name; pallas_call, not
        if allocator is KERNEL:  # its parameters under pallas_call's names; a grid spec it has not
            allocator, arguments = PALLAS_CALL, [_renamed(a) for a in arguments]
            if "grid_spec" in keywords:
                return self._unprove(body, scope)
        if allocator is PALLAS_CALL:
            scratch = self._kernel_allocations(arguments, scope, by_name)
            if scratch is None:  # what this call allocates is not known: no kind is proven
                self._unprove(body, scope)
            self._bind(body, scratch or [], scope, last=True)
        elif allocator is RUN_SCOPED:
            allocations = [a for a in arguments if not (isinstance(a, ast.keyword) and a.arg == "collective_axes")]
            self._bind(body, allocations, scope)
        elif "scratch_shapes" in keywords:  # core_map: `body(*scratch_shapes)`, or `body(**scratch_shapes)`
            entries = self._scratch(keywords["scratch_shapes"], scope, by_name=True)
            if entries is not None:
                self._bind(body, entries, scope)
            else:
                self._unprove(body, scope)

    def _kernel_allocations(
        self, arguments: list[ast.expr | ast.keyword], scope: Scope, by_name: bool = False
    ) -> list[ast.expr | ast.keyword] | None:
        """What `pallas_call` given `arguments` passes its kernel's last parameters: its outputs
        (where known), then its scratch buffers; None where the scratch buffers are not known.
        `by_name`: a dict of scratch shapes is passed by name (`pl.kernel`: `body(*refs, **scratch)`).

        JAX passes a kernel its inputs, its outputs as `out_shape`'s pytree gives them, then
        its scratch buffers. Scratch shapes count only as written in `pallas_call` itself or in
        one of JAX's own grid specs (or a local bound to one): a helper's call, or a parameter,
        may hold more. An output that is a pytree node (`(pltpu.SemaphoreType.DMA(()),) * 2`) is a tuple of Refs; any
        other output is given no kind (the skim pairs only scratch shapes with parameters)."""
        given = _bound(arguments, PALLAS_CALL_POSITIONAL)
        keywords = given or {k.arg: k.value for k in arguments if isinstance(k, ast.keyword) and k.arg is not None}
        spec: dict[str, ast.expr] | None = {}
        if "grid_spec" in keywords:
            spec = self._grid_spec(keywords["grid_spec"], scope)
        scratch_shapes = keywords.get("scratch_shapes", (spec or {}).get("scratch_shapes"))
        scratch: list[ast.expr | ast.keyword] | None
        if scratch_shapes is not None:
            scratch = self._scratch(scratch_shapes, scope, by_name)
        else:  # none written: none given, unless a `**kwargs` or an unknown grid spec may give some
            scratch = [] if given is not None and spec is not None else None
        if scratch is None:
            return None
        outputs = None
        if given is not None and spec is not None:  # out_specs has out_shape's structure
            written = [keywords.get("out_shape"), keywords.get("out_specs", spec.get("out_specs"))]
            read = (self._entries(w, scope) for w in written if w is not None)
            outputs = next((entries for entries in read if entries is not None), None)
        if outputs is None:
            return scratch
        return [o if self._allocation(o, scope) is Kind.TUPLE else ast.Constant(None) for o in outputs] + scratch

    def _scratch(self, node: ast.expr, scope: Scope, by_name: bool) -> list[ast.expr | ast.keyword] | None:
        """The entries of scratch shapes: a list or tuple's, each passed by position, or where
        the launcher passes a mapping's entries by name (`by_name`: `pl.kernel`, `core_map`), a
        dict's (`dict(sem=...)`, `{"sem": ...}`), each as a keyword; None for anything else."""
        held = self._held(node, scope)
        entries = None if held is None or isinstance(held, ast.Name) else self._entries(held, scope)
        if entries is not None or not by_name:
            return None if entries is None else [*entries]
        if isinstance(held, ast.Call) and self._dict_call(held, scope):
            return list(held.keywords)
        if not isinstance(held, ast.Dict) or not all(
            isinstance(k, ast.Constant) and isinstance(k.value, str) for k in held.keys
        ):
            return None
        return [
            ast.keyword(arg=k.value, value=v)
            for k, v in zip(held.keys, held.values)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)  # all are: checked above
        ]

    @staticmethod
    def _dict_call(node: ast.Call, scope: Scope) -> bool:
        """`dict(sem=..., buf=...)`: the builtin (no binding of `dict` anywhere the call sees),
        given keywords alone."""
        builtin = _named(node.func, "dict") and not scope.lookup("dict")[1]
        return builtin and not node.args and all(k.arg is not None for k in node.keywords)

    def _grid_spec(self, node: ast.expr, scope: Scope) -> dict[str, ast.expr] | None:
        """The arguments of a call to one of JAX's grid specs, by parameter name; None for
        anything else, or where a `*args` or `**kwargs` hides which are given. A name bound
        once to such a call (`grid_spec = pltpu.PrefetchScalarGridSpec(...)`) and used nowhere
        else is that call: its attributes may be changed only through another use."""
        if isinstance(node, ast.Name):
            owner, bindings = scope.lookup(node.id)
            if len(bindings) == 1 and bindings[0].kind == "assign" and not bindings[0].declared and owner:
                if len(getattr(bindings[0].node, "targets", ())) == 1 and not self._used_elsewhere(node, scope):
                    node, scope = bindings[0].value, owner
        if not isinstance(node, ast.Call):
            return None
        orders = {GRID_SPECS.get(name) for name in self.jax_names(node.func, scope, fallback=True) or ()}
        order = orders.pop() if len(orders) == 1 else None
        return _bound(source_order(node), order) if order is not None else None

    def _applied(self, node: ast.expr, scope: Scope) -> tuple[frozenset[str], list[ast.expr | ast.keyword]] | None:
        """What `node(body)` is, when it hands JAX `body` where JAX allocates for it: the JAX
        function and the other arguments it gets. `functools.partial(pl.pallas_call, ...)`,
        `functools.partial(pl.kernel, ...)` and `functools.partial(pl.run_scoped, ...)` qualify
        only with keywords alone (a positional argument there would come before the body);
        `pl.core_map(mesh, ...)` and `pl.kernel(...)` given no body return a decorator.
        `pl.pallas_call` has no decorator-factory form, and `@pl.run_scoped` alone allocates nothing."""
        if not isinstance(node, ast.Call):
            return None
        if self.resolves_to(node.func, scope, PARTIAL) and len(node.args) == 1:
            allocators = (PALLAS_CALL, KERNEL, RUN_SCOPED)
            allocator = next((a for a in allocators if self.resolves_to(node.args[0], scope, a)), None)
            return (allocator, list(node.keywords)) if allocator is not None else None
        if not node.args and all(k.arg != "body" for k in node.keywords) and self.resolves_to(node.func, scope, KERNEL):
            return KERNEL, list(node.keywords)
        return (CORE_MAP, list(node.keywords)) if self.resolves_to(node.func, scope, CORE_MAP) else None

    def _function(self, node: ast.AST, scope: Scope, depth: int = 0) -> Linked | None:
        """The def `node` calls, with how many leading parameters and which named ones are already
        given (None where a `*args` or `**kwargs` hides that), linked as real code launches a
        kernel: the def or its name; `functools.partial` around one; a local bound once to one
        (`kernel = functools.partial(_kernel, n=n)`); a factory's call (`make_kernel(2)`); a
        method (`self.kernel`, `K.kernel`); a lambda passing its parameters on. None where the
        link is not plain: what semfix cannot link, it does not prove."""
        if depth > _LINKS:
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node, 0, set()
        if isinstance(node, ast.Call) and node.args and self.resolves_to(node.func, scope, PARTIAL):
            inner = self._function(node.args[0], scope, depth + 1)
            if (
                inner is None
                or any(isinstance(a, ast.Starred) for a in node.args)
                or any(k.arg is None for k in node.keywords)
            ):
                return None
            return (
                inner[0],
                inner[1] + len(node.args) - 1,
                inner[2] | {k.arg for k in node.keywords if k.arg is not None},
            )
        if isinstance(node, ast.Call):
            return self._made(node, scope, depth)
        if isinstance(node, ast.Attribute):
            return self._method(node, scope) or self._imported(node, scope)
        if isinstance(node, ast.Lambda):
            return self._passed_on(node, depth)
        if isinstance(node, ast.Name):  # a decorated def's name holds what its decorators returned
            owner, bindings = scope.lookup(node.id)
            if len(bindings) != 1 or bindings[0].declared or owner is None:
                return None
            self._trail.append((owner, node.id, None, node))
            if bindings[0].kind == "import":
                return self._imported(node, scope)
            if bindings[0].kind == "assign":  # `kernel = functools.partial(_kernel, n=n)`
                return self._function(bindings[0].value, owner, depth + 1)
            function = bindings[0].node if bindings[0].kind == "def" else None
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and not function.decorator_list:
                return function, 0, set()  # a "def" binding holds its def
        return None

    def _imported(self, node: ast.Name | ast.Attribute, scope: Scope) -> Linked | None:
        """A def another module defines, as a module-level import names it: `kernel` after `from
        .ops import kernel`, `ops.kernel` after `from . import ops` or `import pkg.ops as ops`,
        `Kernels.kernel` (`ops.Kernels.kernel`) of a class it defines (the run links it:
        `Launch`); bound once, never rebound."""
        attrs: list[str] = []
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            attrs.insert(0, head.attr)
            head = head.value
        if not isinstance(head, ast.Name) or len(attrs) > 2:
            return None
        owner, bindings = scope.lookup(head.id)
        if owner is not self.scopes.module or len(bindings) != 1 or bindings[0].kind != "import":
            return None
        foreign = _foreign(bindings[0], head.id, attrs[0] if attrs else None)
        if foreign is None:
            return None
        if attrs:
            self._trail.append((owner, head.id, attrs[0], head))
        return (*foreign[:2], ".".join([foreign[2], *attrs[1:]])), 0, set()

    def _made(self, call: ast.Call, scope: Scope, depth: int) -> Linked | None:
        """What a factory's call returns (`make_kernel(2)`): a def of the file bound once, not
        decorated (or cached: `functools.cache`), whose every `return` returns one linked def
        (`return kernel`, its nested def; `return functools.partial(_kernel, n=n)`)."""
        if isinstance(call.func, (ast.Name, ast.Attribute)) and (imported := self._imported(call.func, scope)):
            if isinstance(call.func, ast.Name):  # `make_kernel(2)` of another module: it reads its factory
                self._trail.append((self.scopes.module, call.func.id, None, call.func))
            level, module, name = imported[0]  # type: ignore[misc]
            return (level, module, f"{name}()"), 0, set()
        if not isinstance(call.func, ast.Name):
            return None
        owner, bindings = scope.lookup(call.func.id)
        factory = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "def" else None
        if not isinstance(factory, ast.FunctionDef) or bindings[0].declared:
            return None
        self._trail.append((owner, call.func.id, None, call.func))  # another call may launch what it makes
        outer = self.scopes.scope_of[id(factory)]
        if not all(
            self.resolves_to(d.func if isinstance(d, ast.Call) else d, outer, CACHES) for d in factory.decorator_list
        ):
            return None
        values = _returned(factory)
        body = self.scopes.bodies.get(id(factory))
        if body is None or not values or None in values:
            return None
        found = [self._function(v, body, depth + 1) for v in values if v is not None]
        first = found[0]
        if first is None or any(f is None or f != first for f in found):
            return None
        return first

    def _method(self, node: ast.Attribute, scope: Scope) -> Linked | None:
        """The method `self.kernel` (in a method of its class) or `K.kernel` (`K` a class of the
        file) names: a def of the class body, bound once there and stored nowhere as an
        attribute of that name, undecorated, a `staticmethod` or a `classmethod`; for `self.`,
        of a class the file subclasses nowhere (a subclass may override it). A bound method
        gives its first parameter. `Op().kernel` too: an instance made there of a class of the
        file with no bases and no `__new__` or attribute hooks, so it is that class's."""
        if isinstance(node.value, ast.Call) and isinstance(node.value.func, (ast.Name, ast.Attribute)):
            made = self._made(node.value, scope, _LINKS)
            if made is not None and isinstance(made[0], tuple):  # `Op().kernel`, `Op` of another module
                level, module, name = made[0]
                return (level, module, f"{name}.{node.attr}"), 0, set()
            if isinstance(node.value.func, ast.Name):
                return self._of_class(self._class(node.value.func, scope), node.attr, scope, instance=True)
            return None
        if not isinstance(node.value, ast.Name):
            return None
        owner, bindings = scope.lookup(node.value.id)
        if owner is None or len(bindings) != 1 or bindings[0].declared:
            return None
        binding, tree = bindings[0], self.scopes.tree
        if binding.kind == "other" and isinstance(binding.node, ast.ClassDef):  # `K.kernel`
            cls, instance = binding.node, False
        elif binding.kind == "param" and isinstance(owner.node, ast.FunctionDef):  # `self.kernel`
            method = owner.node
            classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]
            around = next((c for c in classes if method in c.body), None)
            decorators = {d.id for d in method.decorator_list if isinstance(d, ast.Name)}
            first = [*method.args.posonlyargs, *method.args.args][:1]
            if around is None or first != [binding.node] or "staticmethod" in decorators:
                return None
            cls = around
            if any(isinstance(b, ast.Name) and b.id == cls.name for c in classes for b in c.bases):
                return None
            instance = "classmethod" not in decorators
        else:
            return None
        return self._of_class(cls, node.attr, scope, instance)

    def _class(self, node: ast.Name, scope: Scope) -> ast.ClassDef | None:
        """The class of the file `Op` in `Op()` names, where what it makes is plainly an `Op`."""
        _, bindings = scope.lookup(node.id)
        cls = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "other" else None
        if not isinstance(cls, ast.ClassDef) or bindings[0].declared or cls.bases or cls.keywords:
            return None
        hooks = {"__new__", "__getattr__", "__getattribute__"}
        return None if any(getattr(d, "name", None) in hooks for d in cls.body) else cls

    def _of_class(self, cls: ast.ClassDef | None, attr: str, scope: Scope, instance: bool) -> Linked | None:
        if cls is None:
            return None
        tree = self.scopes.tree
        defs = [d for d in cls.body if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef)) and d.name == attr]
        if cls.decorator_list or len(defs) != 1 or len(self.scopes.scope_of[id(defs[0])].bindings[attr]) != 1:
            return None
        if any(
            isinstance(a, ast.Attribute) and a.attr == attr and not isinstance(a.ctx, ast.Load) for a in ast.walk(tree)
        ):
            return None
        kernel = defs[0]
        wrapped = [d.id for d in kernel.decorator_list if isinstance(d, ast.Name)]
        if (
            len(wrapped) != len(kernel.decorator_list)
            or len(wrapped) > 1
            or scope.lookup(wrapped[0] if wrapped else "")[1]
        ):
            return None  # another decorator, or `staticmethod` rebound
        if wrapped and wrapped[0] not in ("staticmethod", "classmethod"):
            return None
        given = 1 if wrapped == ["classmethod"] or (instance and not wrapped) else 0
        return kernel, given, set()

    def _passed_on(self, node: ast.Lambda, depth: int) -> Linked | None:
        """A lambda that calls a linked def with its own parameters, in order, last
        (`lambda *refs: _kernel(*refs, n=2)`, `lambda x, o, s: _kernel(n, x, o, s)`): a partial."""
        arguments, call = node.args, node.body
        if not isinstance(call, ast.Call) or arguments.posonlyargs or arguments.kwonlyargs or arguments.kwarg:
            return None
        if arguments.defaults:
            return None
        own = [a.arg for a in arguments.args] + ([arguments.vararg.arg] if arguments.vararg else [])
        if len(call.args) < len(own):
            return None
        lead, tail = call.args[: len(call.args) - len(own)], call.args[len(call.args) - len(own) :]
        passed = [t.value if isinstance(t, ast.Starred) else t for t in tail]
        starred = [isinstance(t, ast.Starred) for t in tail]
        if [getattr(p, "id", None) for p in passed] != own or starred != [False] * len(arguments.args) + (
            [True] if arguments.vararg else []
        ):
            return None
        rest = [*lead, *(k.value for k in call.keywords)]
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in lead):
            return None
        if any(isinstance(n, ast.Name) and n.id in own for r in rest for n in ast.walk(r)):
            return None
        inner = self._function(call.func, self.scopes.scope_of[id(call)], depth + 1)
        if inner is None:
            return None
        return inner[0], inner[1] + len(lead), inner[2] | {k.arg for k in call.keywords if k.arg is not None}

    def _entries(self, node: ast.expr, scope: Scope) -> list[ast.expr] | None:
        """The entries of a list or tuple display (`(x,) * 2` too), or of the one such display
        a name is bound to; None for anything else."""
        held = self._held(node, scope)
        display, times = _display(held) if held is not None else (None, 0)
        if display is None or any(isinstance(e, ast.Starred) for e in display.elts):
            return None
        return list(display.elts) * times

    def _held(self, node: ast.expr, scope: Scope) -> ast.expr | None:
        """`node`, or the one value the name `node` is bound to; None where it is bound otherwise,
        or to a list or dict with other names or uses: it may be changed (`SHAPES.append(...)`)
        before the call."""
        if not isinstance(node, ast.Name):
            return node
        _, bindings = scope.lookup(node.id)
        if len(bindings) != 1 or bindings[0].kind not in ("assign", "tuple_literal", "read"):
            return None
        value = bindings[0].value
        called = value.func if isinstance(value, ast.Call) else None
        mutable = isinstance(_display(value)[0], ast.List) or isinstance(value, ast.Dict) or _named(called, "dict")
        if mutable and (len(getattr(bindings[0].node, "targets", ())) > 1 or self._used_elsewhere(node, scope)):
            return None
        return value

    def _used_elsewhere(self, node: ast.Name, scope: Scope) -> bool:
        """Is the name read anywhere but at `node`? Called for a name with one binding, `x = [...]`.
        Most files need no access tracking to say no: not when the text spells the name only
        there and before `=` (in ASCII text every access spells it), nor when the function
        that binds it holds no other Name of that spelling (a common name such as
        `scratch_shapes`, bound in several functions)."""
        text = self.text.text
        if text.isascii():  # the name starts the pattern, so the regex engine looks for it fast
            spellings = re.finditer(rf"{re.escape(node.id)}(?!\w|\s*=(?!=))", text)
            starts = (m.start() for m in spellings if not m.start() or text[m.start() - 1] not in _NAME_OR_DOT)
            if next(starts, None) is None or next(starts, None) is None:
                return False
        owner, bindings = scope.lookup(node.id)
        if owner is not None and owner.kind == "function" and owner.node is not None:
            statement = bindings[0].assignment
            target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
            if all(n is node or n is target for n in self.names_in(owner.node).get(node.id, ())):
                return False
        return any(a.top is not node for a in self.tracking().references(node.id, scope))

    def _allocation(self, node: ast.expr, scope: Scope) -> Kind:
        if self.built(node, scope):  # `[sem] * n`, `tuple(plgpu.Barrier() for _ in range(n))` too
            return Kind.TUPLE
        if isinstance(node, ast.Call):
            names = self.jax_names(node.func, scope, fallback=True)  # `pltpu = None` fails here: not what runs
            if names and all(n.startswith(SEMAPHORE_TYPE_OWNERS) for n in names):
                items = source_order(node)
                if items:  # libcst's first Arg, whatever its kind: its value is the shape
                    first = items[0]
                    shape = first.value if isinstance(first, (ast.keyword, ast.Starred)) else first
                    if not (isinstance(shape, ast.Tuple) and not shape.elts):
                        return Kind.ARRAY
        return Kind.UNKNOWN

    def _semaphore_kind(self, node: ast.expr, scope: Scope) -> str | None:
        """The kind (`REGULAR`, `DMA`, `BARRIER`) of the semaphore or semaphore array `node`
        allocates: `SemaphoreType.X` or `SemaphoreType.X(shape)`, resolved through the imports."""
        names = self.jax_names(node.func if isinstance(node, ast.Call) else node, scope, fallback=True) or set()
        kinds = {next((name[len(o) :] for o in SEMAPHORE_TYPE_OWNERS if name.startswith(o)), None) for name in names}
        return kinds.pop() if len(kinds) == 1 and kinds <= set(SEMAPHORE_KINDS) else None

    def _elements_kind(self, node: ast.expr, scope: Scope) -> str | None:
        """The kinds of a tuple or list display of semaphores (`[DMA, REGULAR]`), in order, joined
        by commas: what each element of the container holds (`element_kind`)."""
        elements = node.elts if isinstance(node, (ast.Tuple, ast.List)) else []
        kinds = [self._semaphore_kind(e, scope) if not isinstance(e, ast.Starred) else None for e in elements]
        return ",".join(kinds) if kinds and None not in kinds else None  # type: ignore[arg-type]

    def semaphore(self, node: ast.expr, scope: Scope) -> tuple[str, ast.expr | Allocated] | None:
        """The kind of semaphore `node` is, and the allocation that proves it: for a parameter
        (or a view of one, `unview`) that every allocation bound to it gives that one kind,
        and that nothing rebinds; for an element of a container parameter whose every
        allocation holds semaphores of one kind there (`pair[0]`, or `first` after `first,
        second = pair`). None where the file does not prove it."""
        view = unview(node, scope)
        held = _element(view.base, view.scope) if not view.levels else None
        base, where = held[:2] if held else (view.base, view.scope)
        parameter = self._parameter(base, where)
        if parameter is None or (held is not None) != (self.param_kinds.get(id(parameter)) is Kind.TUPLE):
            return None
        proven = self.param_semaphores.get(id(parameter))
        return proven if held is None or proven is None else _element_kind(proven, *held[2:])

    def taken(self, node: ast.expr, scope: Scope) -> list[tuple[ast.expr, Scope]] | None:
        """What a loop's target takes at each pass (`Resolution._taken`: `for src, sem in ((x,
        sems.at[0]), (y, pair[1]))`), where `node` is one bound once, by the loop, with each
        value's scope: each pass passes its value where the target is passed."""
        if not isinstance(node, ast.Name):
            return None
        owner, bindings = scope.lookup(node.id)
        loop = bindings[0] if len(bindings) == 1 and isinstance(bindings[0].node, (ast.For, ast.AsyncFor)) else None
        if loop is None or loop.kind not in ("element", "other") or loop.declared:  # `for a, sem in`, `for sem in`
            return None
        return self._taken(node.id, loop, owner)

    def rank(self, node: ast.expr, scope: Scope) -> tuple[int, ast.expr | Allocated] | None:
        """How many indices pick one semaphore out of the parameter `node` names (a shape
        tuple's length; 0 for one semaphore), and the allocation that proves it: where every
        allocation bound to it agrees and nothing rebinds it. None where the file does not prove it."""
        parameter = self._parameter(node, scope)
        return None if parameter is None else self.param_ranks.get(id(parameter))

    def _parameter(self, node: ast.expr, scope: Scope) -> ast.AST | None:
        """The parameter `node` names (itself, or a NamedTuple's field holding it: `field`),
        where it is bound once, as a parameter, and never declared global."""
        node, scope = self.field(node, scope) or (node, scope)
        if not isinstance(node, ast.Name):
            return None
        _, bindings = scope.lookup(node.id)
        if len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].declared:
            return None
        return bindings[0].node

    def _bind(
        self, body: ast.AST, allocations: Sequence[ast.expr | ast.keyword], scope: Scope, *, last: bool = False
    ) -> None:
        """Allocations to the body's parameters, as Python passes arguments; `last`: the
        kernel's last positional parameters, as pallas_call passes scratch buffers. A kernel
        another module of the run defines is told them (`launches`), read here."""
        self._trail = []
        found = self._function(body, scope)
        if found is None:
            return
        function, given, named = found
        key = function if isinstance(function, tuple) else id(function)
        self._links.setdefault(key, (function, []))[1].extend(self._trail)
        facts = [self._fact(item, scope) for item in allocations]
        if isinstance(function, tuple):
            self._launch(function, given, named, facts if last else None)
        else:
            self._give(function, given, named, facts, last)

    def _fact(self, item: ast.expr | ast.keyword, scope: Scope) -> tuple[str | None, Fact | None]:
        """What one allocation proves, and the parameter name it is given by (None: by
        position); no fact where it may give any parameter (`*args`, `**kwargs`)."""
        if isinstance(item, ast.Starred) or isinstance(item, ast.keyword) and item.arg is None:
            return None, None
        keyword, value = (item.arg, item.value) if isinstance(item, ast.keyword) else (None, item)
        value = self._unmeshed(value, scope)
        semaphore = self._semaphore_kind(value, scope) or self._elements_kind(value, scope)
        proof = (semaphore, value) if semaphore is not None else None
        return keyword, (self._allocation(value, scope), proof, self._rank(value, scope))

    def _unmeshed(self, node: ast.expr, scope: Scope) -> ast.expr:
        """An allocation placed on a mesh (`pltpu.SemaphoreType.DMA((2,)) @ tec_mesh`) is the
        allocation: JAX's `__matmul__` with a Mesh moves only its memory space (0.10.2, 0.12.1).
        Only where the right side is one of Pallas's meshes, made in a call or in a name each of
        whose bindings assigns one (`if ...: mesh = pltpu.TensorCoreMesh(...)`, `else: mesh =
        pltpu.create_tensorcore_mesh(...)`): given anything else, JAX's `__matmul__` declines, and
        the other side's `__rmatmul__` may make anything."""
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.MatMult):
            return node
        meshes, owner = [node.right], scope
        if isinstance(node.right, ast.Name):
            bound, bindings = scope.lookup(node.right.id)
            if bound is None or not bindings or any(b.kind != "assign" or b.declared for b in bindings):
                return node
            meshes, owner = [b.value for b in bindings], bound
        made = all(isinstance(m, ast.Call) and self.resolves_to(m.func, owner, MESHES) for m in meshes)
        return node.left if made else node

    def _launch(
        self, kernel: Foreign, given: int, named: set[str], facts: list[tuple[str | None, Fact | None]] | None
    ) -> None:
        """A launch of a kernel another module defines, as data for that module: what it
        allocates, None where any is not known."""
        scratch: tuple[Allocated, ...] | None = None
        if facts is not None and all(fact is not None for _, fact in facts):
            scratch = tuple(self._allocated(fact, keyword) for keyword, fact in facts if fact is not None)
        self.launches.append((kernel[:2], Launch(kernel[2], given, tuple(sorted(named)), scratch)))

    def _allocated(self, fact: Fact, keyword: str | None) -> Allocated:
        kind, semaphore, rank = fact
        value = (semaphore or rank or (None, None))[1]
        placed = isinstance(value, ast.expr) and hasattr(value, "lineno")  # outputs are stand-ins
        return Allocated(
            kind.value,
            semaphore[0] if semaphore else None,
            rank[0] if rank else None,
            str(value.lineno) if placed and isinstance(value, ast.expr) else "",
            self.text.of(value) if placed and isinstance(value, ast.expr) else "",
            keyword,
        )

    def _give(
        self,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        given: int,
        named: set[str],
        facts: Sequence[tuple[str | None, Fact | None]],
        last: bool,
    ) -> None:
        """The facts to the def's parameters, as Python passes arguments (see `_bind`)."""
        unknown = functools.partial(self._forget, function)  # where this call's allocations are not known
        parameters = [*function.args.posonlyargs, *function.args.args]
        everyone = [*parameters, *function.args.kwonlyargs]
        by_name = {p.arg: p for p in everyone if p.arg not in named}
        # what a partial (or a lambda) gives is not read: this launch may pass any value there
        self._forget(function, [*parameters[:given], *(p for p in everyone if p.arg in named)])
        required = len(parameters) - len(function.args.defaults)
        parameters = parameters[given:]  # a partial's positional arguments come first
        count = sum(keyword is None for keyword, _ in facts)  # the others are given by name (`pl.kernel`'s dict)
        if (
            last and count
        ):  # they fill the parameters before the first one a partial names; with defaults, who knows how many
            parameters = list(itertools.takewhile(lambda p: p.arg not in named, parameters))
            if function.args.vararg is not None or count > len(parameters) or given + len(parameters) > required:
                return unknown()
            parameters = parameters[len(parameters) - count :]
        positional = iter(parameters)
        for keyword, fact in facts:
            if fact is None:
                return unknown()
            parameter = by_name.get(keyword) if keyword is not None else next(positional, None)
            if parameter is not None:
                kind, allocated, rank = fact
                previous = self.param_kinds.get(id(parameter))
                if previous not in (None, kind):  # either may reach the kernel: a tuple if one is
                    kind = Kind.TUPLE if Kind.TUPLE in (kind, previous) else Kind.UNKNOWN
                self.param_kinds[id(parameter)] = kind
                if id(parameter) in self.param_semaphores:  # two allocations: one kind, or none
                    earlier = self.param_semaphores[id(parameter)]
                    allocated = earlier if earlier and allocated and earlier[0] == allocated[0] else None
                self.param_semaphores[id(parameter)] = allocated
                if id(parameter) in self.param_ranks:  # two allocations: one rank, or none
                    earlier_rank = self.param_ranks[id(parameter)]
                    rank = earlier_rank if earlier_rank and rank and earlier_rank[0] == rank[0] else None
                self.param_ranks[id(parameter)] = rank

    def _launched(self) -> None:
        """The launches of this module's kernels in the run's other modules (`Launch`), bound
        as a launch here is: to a def bound once at the module's top, undecorated; to a method of
        a class there (`Kernels.kernel`, `Op().kernel`) or what a factory there returns
        (`make_kernel()`), as `_function` links them here. A launch that allocates what semfix
        cannot read forgets every def the name holds (a factory's kernel, a class's methods)."""
        module = self.scopes.module
        for launch in self.launched:
            if launch.kernel == "*":  # another module reads this one bare (`getattr(ops, "kernel")`)
                for bindings in module.bindings.values():
                    for binding in bindings:
                        if isinstance(binding.node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                            self._forget_all(binding.node)
                continue
            spelled = re.fullmatch(r"(\w+)(\(\))?(?:\.(\w+))?", launch.kernel)
            if spelled is None:
                continue
            name, made, attr = spelled.groups()
            bindings = module.bindings.get(name, [])
            node = bindings[0].node if len(bindings) == 1 and not bindings[0].declared else None
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            self._trail = [(module, name, None, None)]  # a read here is no launch there
            if attr and not made:
                self._trail.append((module, name, attr, None))
            found = self._linked_here(node, bool(made), attr)
            function = None if found is None else found[0]
            if launch.scratch is None or found is None or function is None or isinstance(function, tuple):
                self._forget_all(node)
                continue
            _, given, named = found
            self._links.setdefault(id(function), (function, []))[1].extend(self._trail)
            facts = [
                (
                    a.name,
                    (
                        Kind(a.kind),
                        (a.semaphore, a) if a.semaphore is not None else None,
                        (a.rank, a) if a.rank is not None else None,
                    ),
                )
                for a in launch.scratch
            ]
            self._give(function, given + launch.given, named | set(launch.named), facts, last=True)

    def _forget_all(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        """Nothing is proven of what a def or class at the module's top may launch: the def and
        what it returns as a factory, or every method of the class."""
        if isinstance(node, ast.ClassDef):
            functions = [f for f in ast.walk(node) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        else:
            made = self._linked_here(node, True, None)
            functions = [node, *([] if made is None or isinstance(made[0], tuple) else [made[0]])]
        for function in functions:
            self._forget(function)

    def _linked_here(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, made: bool, attr: str | None
    ) -> Linked | None:
        """What another module's launch of `node` (a def or class at this module's top) runs:
        the def itself, what the factory's call returns (`made`), or the class's (or its
        instance's, `made`) method `attr`."""
        module = self.scopes.module
        if isinstance(node, ast.ClassDef):
            cls = self._class(ast.Name(node.name), module) if made else node
            return self._of_class(cls, attr, module, instance=made) if attr else None
        if attr is not None or node.decorator_list and not made:
            return None
        if not made:
            return node, 0, set()
        call = ast.Call(ast.Name(node.name), [], [])
        found = self._made(call, module, 0)
        self._trail = [h if h[3] is not call.func else (*h[:3], None) for h in self._trail]
        return found

    def _escaped(self) -> None:
        """A kernel a launch proves things of, reached another way too (`k = kernel` launched
        with a list; `KERNELS = [kernel]`; `ops.kernel` in a module whose launches are not read)
        may be launched with anything: each name a link went through is read only at the links,
        or nothing is proven of the kernel."""
        linked = {id(h[3]): h[:3] for _, trail in self._links.values() for h in trail if h[3] is not None}
        for target, trail in self._links.values():
            if any(self._read_elsewhere(*handle, linked) for handle in {h[:3] for h in trail}):
                if isinstance(target, tuple):
                    self.launches.append((target[:2], Launch(target[2], 0, (), None)))
                else:
                    self._forget(target)

    def _imports_of(self, kernels: Collection[str], exported: bool) -> None:
        """Each import here of a kernel of `kernels` (`from .ops import kernel`, or `ops` read as
        `ops.kernel`) is a name a link to it goes through (`_escaped`), linked or not; `exported`,
        one the run cannot follow."""
        module, text = self.scopes.module, self.text.text
        for name, bindings in module.bindings.items():
            if not any(binding.kind == "import" for binding in bindings):
                continue
            attrs = [None]  # `name` read bare, then as `name.kernel`
            if name + "." in text or re.search(rf"{re.escape(name)}\s", text):
                attrs += set(re.findall(alone(name) + r"\s*\.\s*(\w+)", text)).intersection(kernels)
            normal = self._normal  # as Python reads names (NFKC)
            module_like = name + "." in normal or self._dynamic or "vars(" in normal  # `ops.x`, `getattr(ops, ...)`
            bare = module_like and self._read_bare(name, len(bindings))
            for binding in bindings:
                if binding.kind != "import":
                    continue
                every = _foreign(binding, name, "*")  # `ops` itself read: any of its kernels
                if bare and every is not None:
                    self.launches.append((every[:2], Launch("*", 0, (), None)))
                for attr in attrs:
                    foreign = _foreign(binding, name, attr)
                    if foreign is not None and foreign[2] in kernels:
                        self._links.setdefault(foreign, (foreign, []))[1].append((module, name, attr, None))
                        if exported:
                            self.launches.append((foreign[:2], Launch(foreign[2], 0, (), None)))

    def _read_bare(self, name: str, bound: int) -> bool:
        """Is the module-level `name` (a module of the run, `from . import ops`) read other than as
        `ops.attr`: `getattr(ops, "kernel")`, `vars(ops)`, `ops.__dict__`, handed on? Then any of
        its kernels may be launched where the run cannot see."""
        if self._unattributed[name] <= bound:  # the imports themselves
            return False
        module = self.scopes.module
        attributes = self._attribute_reads(module)
        read = {id(n) for (head, attr), names in attributes.items() if head == name and attr[:2] != "__" for n in names}
        return any(id(n) not in read and isinstance(n.ctx, ast.Load) for n in self._names_of(module).get(name, ()))

    @functools.cached_property
    def _unattributed(self) -> Counter[str]:
        """How often each identifier is spelled other than after or before a dot (`ops.__dict__`
        counts): one search of the text for `_read_bare`."""
        return Counter(_UNATTRIBUTED.findall(self._normal))

    @functools.cached_property
    def _dynamic(self) -> bool:
        """Does the module read names by string (`_DYNAMIC`)? Searched once, where the text spells
        one of its words (`in` is many times faster than the pattern's `\\b`)."""
        text = self._normal
        return any(word in text for word in _DYNAMIC_WORDS) and _DYNAMIC.search(text) is not None

    @functools.cached_property
    def _normal(self) -> str:
        """The text with its identifiers as Python reads them (NFKC): `ｇetattr` is `getattr`."""
        text = self.text.text
        return text if text.isascii() else _nfkc(text)

    def _read_elsewhere(
        self, owner: Scope | None, name: str, attr: str | None, linked: dict[int, tuple[Scope | None, str, str | None]]
    ) -> bool:
        """Is `name` (`name.attr`) read in `owner`, nested defs included, anywhere but at the
        Names `linked`? Spelled nowhere else, no walk is needed (Python reads an identifier as
        its NFKC form, so that is the text counted); a Name of that spelling a nested scope binds
        counts too (where unsure, it is read). A module's name spelled as a string where the
        module reads its own names by string (`getattr(sys.modules[__name__], "kernel")`,
        `globals()["kernel"]`) is read there too."""
        text, spelling = self.text.text, alone(name) + (rf"\s*\.\s*{re.escape(attr)}" if attr else "")
        if (
            owner is self.scopes.module
            and attr is None
            and self._dynamic
            and re.search(rf"[\"']{re.escape(name)}[\"']", text)
        ):
            return True
        normal = self._normal
        bound = 0 if attr or owner is None else len(owner.bindings.get(name, ()))
        bound += list(linked.values()).count((owner, name, attr))
        if normal.count(attr or name) <= bound:  # the spelling's count is at most this
            return False
        if len(re.findall(rf"{spelling}(?!\w)", normal)) <= bound:
            return False
        if attr is not None:
            return any(id(n) not in linked for n in self._attribute_reads(owner).get((name, attr), ()))
        return any(id(n) not in linked and isinstance(n.ctx, ast.Load) for n in self._names_of(owner).get(name, ()))

    def _names_of(self, owner: Scope | None) -> dict[str, list[ast.Name]]:
        return self.names_in(self._node_of(owner))

    def _node_of(self, owner: Scope | None) -> ast.AST:
        node = owner.node if owner is not None and owner.kind == "function" and owner.node is not None else None
        return node if node is not None else self.scopes.tree

    def _attribute_reads(self, owner: Scope | None) -> dict[tuple[str, str], list[ast.Name]]:
        """`ops.kernel` read in `owner`'s node, nested defs included: the Names `ops`, by ("ops", "kernel")."""
        node = self._node_of(owner)
        if id(node) not in self._attributes:
            reads: dict[tuple[str, str], list[ast.Name]] = {}
            for child in walk(node):
                if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name):
                    reads.setdefault((child.value.id, child.attr), []).append(child.value)
            self._attributes[id(node)] = reads
        return self._attributes[id(node)]

    def _rank(self, node: ast.expr, scope: Scope) -> tuple[int, ast.expr] | None:
        """How many indices pick one semaphore out of what `node` allocates: 0 for
        `SemaphoreType.X` and `SemaphoreType.X(())`, the length of a shape written as a tuple
        display (`X((2, 2))`, `X(shape=(4,))`, `X((2,) * 2)`) or held in a name bound once to
        one (`X(SHAPE)`); None for anything else (`X(shape)`, a parameter: it is not proven)."""
        if self._semaphore_kind(node, scope) is None:
            return None
        if not isinstance(node, ast.Call):
            return 0, node
        items = source_order(node)
        first = items[0] if items else None
        shape = first.value if isinstance(first, ast.keyword) and first.arg == "shape" else first
        if not isinstance(shape, ast.expr) or isinstance(shape, ast.Starred):  # `X(*shape)`, `X(dtype=...)`
            return None
        entries = self._entries(shape, scope)
        return None if entries is None else (len(entries), node)

    def _unprove(self, body: ast.AST, scope: Scope) -> None:
        """A call hands `body` allocations semfix cannot read: none of its parameters has a
        proven semaphore kind, rank or array, whatever other calls allocate for them (a tuple
        stays one: `.at` would fail on it wherever it reaches the kernel)."""
        found = self._function(body, scope)
        function = None if found is None else found[0]
        if isinstance(function, tuple) and found is not None:
            self._launch(function, found[1], found[2], None)
        elif function is not None and not isinstance(function, tuple):
            self._forget(function)

    def _forget(
        self, function: ast.FunctionDef | ast.AsyncFunctionDef, parameters: Sequence[ast.arg] | None = None
    ) -> None:
        """Nothing is proven of the def's parameters (`parameters`: of these only)."""
        arguments = function.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        for parameter in every if parameters is None else parameters:
            self.param_semaphores[id(parameter)] = self.param_ranks[id(parameter)] = None
            if self.param_kinds.get(id(parameter)) is not Kind.TUPLE:
                self.param_kinds[id(parameter)] = Kind.UNKNOWN


@functools.lru_cache(maxsize=4)
def _nfkc(text: str) -> str:
    import unicodedata  # here: most files are ASCII, and a check of one loads it for none

    return unicodedata.normalize("NFKC", text)


def _foreign(binding: Binding, bound: str, attr: str | None) -> Foreign | None:
    """The def of another module an import binding (of the name `bound`) gives, read bare or as
    `bound.attr`: `from .ops import kernel`, `ops.kernel` after `from . import ops` or `import
    pkg.ops as ops` (never after `import ops`: an installed `ops` may be it)."""
    statement, qualname = binding.node, binding.qualname or ""
    name = qualname.rpartition(".")[2]  # what the import names, whatever it binds it as
    if isinstance(statement, ast.ImportFrom):
        if attr is None:
            return statement.level, statement.module, name
        return statement.level, f"{statement.module}.{name}" if statement.module else name, attr
    if isinstance(statement, ast.Import) and attr is not None and qualname != bound:
        return 0, qualname, attr  # `import pkg.ops as ops`: `ops` is `pkg.ops`
    return None


def _named(node: ast.expr | None, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _bodies(node: ast.expr) -> list[ast.expr]:
    """The bodies `pl.kernel` runs: a list or tuple of them (MPMD: one per mesh, each called
    with the same Refs), or one; a starred entry hides bodies, which are then not linked."""
    if isinstance(node, (ast.List, ast.Tuple)):
        return [e for e in node.elts if not isinstance(e, ast.Starred)]
    return [node]


def _renamed(argument: ast.expr | ast.keyword) -> ast.expr | ast.keyword:
    """A `pl.kernel` argument under the name `pallas_call` gives its parameter."""
    if isinstance(argument, ast.keyword) and argument.arg is not None and argument.arg in KERNEL_AS_PALLAS_CALL:
        return ast.keyword(KERNEL_AS_PALLAS_CALL[argument.arg], argument.value)
    return argument


def _display(node: ast.expr) -> tuple[ast.List | ast.Tuple | None, int]:
    """A list or tuple display and how many times it is repeated (`(x,) * 2`); (None, 0) otherwise."""
    times = 1
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        first = isinstance(node.left, (ast.List, ast.Tuple))  # `(x,) * 2`, or `2 * (x,)`
        node, count = (node.left, node.right) if first else (node.right, node.left)
        if not (isinstance(count, ast.Constant) and type(count.value) is int):
            return None, 0
        times = max(count.value, 0)
    return (node, times) if isinstance(node, (ast.List, ast.Tuple)) else (None, 0)


def _bound(arguments: list[ast.expr | ast.keyword], order: tuple[str, ...]) -> dict[str, ast.expr] | None:
    """Arguments (positional, as `ast.expr`, and keywords) by the parameter each binds, the
    positional ones to `order`; None where a `*args` or `**kwargs` may give any parameter."""
    positional = [a for a in arguments if isinstance(a, ast.expr)]
    keywords = [a for a in arguments if isinstance(a, ast.keyword)]
    hidden = any(isinstance(a, ast.Starred) for a in positional) or any(k.arg is None for k in keywords)
    if hidden or len(positional) > len(order):
        return None
    return {**dict(zip(order, positional)), **{k.arg: k.value for k in keywords if k.arg is not None}}


def _returned(function: ast.FunctionDef) -> list[ast.expr | None]:
    """What each `return` of the def (not of a def, lambda or class inside it) returns: None for
    a bare one; [None] for a generator, whose call returns no def."""
    found: list[ast.expr | None] = []
    todo: list[ast.AST] = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return [None]
        if isinstance(node, ast.Return):
            found.append(node.value)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return found


# Expressions that bind names or open a scope: in a chain, their names are not the chain's scope's.


def _element(node: ast.expr, scope: Scope) -> tuple[ast.expr, Scope, int | None, int | None] | None:
    """The container an element is taken from, the scope it is written in, the element's
    position where the code says it (a literal index) and how many elements the code says
    there are (an unpacking's): `pair` of `pair[0]`, or of `first` where a local bound once is
    unpacked from it (`first, second = pair`)."""
    if isinstance(node, ast.Subscript) and not has_slice(node) and isinstance(node.value, (ast.Name, ast.Attribute)):
        index = node.slice.value if isinstance(node.slice, ast.Constant) and type(node.slice.value) is int else None
        return None if is_at(node.value) else (node.value, scope, index, None)
    if not isinstance(node, ast.Name):
        return None
    owner, bindings = scope.lookup(node.id)
    statement = bindings[0].node if len(bindings) == 1 and bindings[0].kind == "unpack" else None
    if owner is None or bindings[0].declared or not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
        return None
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    found = (value, owner, names.index(node.id), len(names))
    return found if isinstance(value, (ast.Name, ast.Attribute)) else None


def _element_kind(
    proven: tuple[str, ast.expr | Allocated], position: int | None, count: int | None
) -> tuple[str, ast.expr | Allocated] | None:
    """The kind of one element of a container whose allocation proves `proven` (its elements'
    kinds, `Allocations._elements_kind`), at `position` (None: any one, so all must agree) of
    `count` (an unpacking's, which must be the container's length), with the element's own
    allocation where this file writes it."""
    kinds, allocation = proven[0].split(","), proven[1]
    if position is None:
        return (kinds[0], allocation) if len(set(kinds)) == 1 else None
    if not -len(kinds) <= position < len(kinds) or count not in (None, len(kinds)):
        return None
    if isinstance(allocation, (ast.Tuple, ast.List)) and len(allocation.elts) == len(kinds):
        allocation = allocation.elts[position]
    return kinds[position], allocation
