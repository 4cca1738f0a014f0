"""Scopes and bindings on the stdlib `ast`, as libcst's ScopeProvider would give them.

`ScopeBuilder` walks the tree once: the bindings of every scope (with what kind of binding
each is, which the evidence reads), and the scope of every call and subscript. `Tracking` is
the same walk that also records every access to a name with the attribute and subscript
chain it heads; only files whose rules ask whether a Ref expression keeps its value pay for it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from semfix.analysis.nodes import Steps, branches, content_read, unchain
from semfix.catalog import FUNCTION_NAMES, KERNEL, PALLAS_CALL, PARTIAL, RUN_SCOPED


class Binding:
    __slots__ = ("kind", "qualname", "node", "declared")

    def __init__(
        self, kind: str, qualname: str | None = None, node: ast.AST | None = None, declared: bool = False
    ) -> None:
        # import, def, param, star_param, unpack (`a, b = x`), element (`for a, b in x`), star_unpack (`*a`),
        # tuple_literal, read, assign, star, other
        self.kind = kind
        self.qualname = qualname  # for imports
        # the def, the parameter, the Assign (AnnAssign: a read), the import statement, or the `for`
        # or assignment whose target binds the name
        self.node = node
        self.declared = declared  # made by a function through `global`/`nonlocal`: again at each call

    @property
    def assignment(self) -> ast.Assign | ast.AnnAssign:
        """The statement of an "assign", "tuple_literal" or "read" binding: `x = v`, or for a read
        `x: T = X[...]` too; `ScopeBuilder` makes those kinds from nothing else."""
        assert isinstance(self.node, (ast.Assign, ast.AnnAssign)), self.kind
        return self.node

    @property
    def value(self) -> ast.expr:
        """The value such a binding's statement assigns (a read's `x: T = X[...]` has one)."""
        value = self.assignment.value
        assert value is not None, self.kind
        return value


class Scope:
    __slots__ = ("kind", "parent", "bindings", "declared", "node", "star")

    def __init__(self, kind: str, parent: Scope | None, node: ast.AST | None = None, star: bool = False) -> None:
        self.kind = kind  # module, function, class, comprehension, annotation (PEP 695 type parameters)
        self.parent = parent
        self.bindings: dict[str, list[Binding]] = {}
        self.declared: dict[str, str] = {}  # name -> "global" or "nonlocal"
        self.node = node  # a function scope's def or lambda
        self.star = star  # a module with `from m import *`: any of its names may come from m

    def _owner(self, name: str) -> Scope:
        """Where a `global` or `nonlocal` declaration sends the name: the module, or the nearest
        enclosing function. Never called on the module, which declares nothing."""
        scope = self.parent
        assert scope is not None  # the module, the only scope without a parent, declares nothing
        while scope.parent is not None and (self.declared[name] == "global" or scope.kind == "class"):
            scope = scope.parent
        return scope

    def bind(self, name: str, binding: Binding) -> None:
        if name in self.declared:
            binding.declared = True
            self._owner(name).bind(name, binding)
        else:
            self.bindings.setdefault(name, []).append(binding)

    def lookup(self, name: str) -> tuple[Scope | None, list[Binding]]:
        """Python's rule: the innermost scope binding the name; class bodies are not enclosing."""
        if name in self.declared:
            owner = self._owner(name)
            return (owner, owner.bindings[name]) if name in owner.bindings else owner.lookup(name)
        scope: Scope | None = self
        below: Scope | None = None
        while scope is not None:  # a class is seen from an annotation scope just inside it, as in libcst
            if (below is None or scope.kind != "class" or below.kind == "annotation") and name in scope.bindings:
                return scope, scope.bindings[name]
            if scope.star:  # the star import may bind it: one binding of unknown kind, kept per name
                return scope, scope.bindings.setdefault(name, [Binding("star")])
            below, scope = scope, scope.parent
        return None, []

    def function_scope(self) -> Scope:
        """Where a walrus or a declaration in a comprehension binds: comprehensions are transparent."""
        if self.kind != "comprehension":
            return self
        assert self.parent is not None  # a comprehension is always inside another scope
        return self.parent.function_scope()


class ScopeBuilder:
    """One pass over the tree: bindings per scope, and the scope of every call and subscript."""

    tree: ast.Module  # set by build

    def __init__(self) -> None:
        self.module = Scope("module", None)
        self.scope_of: dict[int, Scope] = {}
        self.scope_of_read: dict[int, Scope] = {}  # id(`v = X[...]`, `v = X[i]`) -> the scope it is in
        self.calls: list[ast.Call] = []
        self.by_name: dict[str, list[ast.Call]] = {}  # the calls of a bare name (`f(x)`), by it
        self.subscripts: list[ast.Subscript] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.bodies: dict[int, Scope] = {}  # id() of a def: the scope of its body (its parameters')
        self.imports: list[ast.Import | ast.ImportFrom] = []  # in any scope
        # by attribute name: each store or `del` of `obj.name`, with the value assigned where one
        # plain assignment gives it (else None: `obj.name += 1`, `a, obj.name = ...`, a loop's)
        self.attribute_stores: dict[str, list[tuple[ast.Attribute, ast.expr | None, Scope]]] = {}
        # Callee names that can resolve to a function the rules ask about: the names themselves,
        # whatever a file imports them as, and names assigned them (`named`). A call spelled
        # otherwise resolves to none of them.
        self.callee_names: set[str] = set(_CALLED)
        self.named: list[tuple[str, str]] = []  # `wait = pl.semaphore_wait`: ("wait", "semaphore_wait")
        self._handlers, self._leaves = _HANDLERS, _LEAVES_AND_NAMES
        #: What a star import binds, by its module as spelled, where the run knows it
        #: (`ReadThrough.stars`); any other star may bind any name.
        self.stars: dict[str, tuple[str, ...]] = {}
        self._relevant: list[ast.Call] | None = None

    def relevant_calls(self) -> list[ast.Call]:
        """The calls spelled by a callee name (`callee_names`, `named`), once the tree is built."""
        if self._relevant is None:
            names = self.callee_names | {name for name, value in self.named if value in self.callee_names}
            self._relevant = [c for c in self.calls if _callee(c.func) in names]
        return self._relevant

    def build(self, tree: ast.Module) -> None:
        self.tree = tree
        for statement in tree.body:
            self.visit(statement, self.module)
        if self.module.star:  # a name bound here may also be rebound by the star import: unresolved
            for bindings in self.module.bindings.values():
                bindings.append(Binding("star"))

    def visit(self, node: ast.AST | None, scope: Scope) -> None:
        """Dispatch on the node's exact type; most nodes only pass their scope down. None (a missing
        node: `x: int`'s value) is a leaf."""
        kind = type(node)
        handler = self._handlers.get(kind)
        if handler is not None:
            handler(self, node, scope)
            return
        leaves = self._leaves
        if kind in leaves:
            return
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            assert node is not None  # type(None) is a leaf
            fields = _CHILD_FIELDS[kind] = tuple(f for f in node._fields if f not in _SCALAR_FIELDS)
        visit = self.visit
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if type(item) not in leaves and isinstance(item, ast.AST):
                        visit(item, scope)
            elif type(value) is str:  # the name in `except E as e`, `case e`, `case [*e]`, `case {**e}`
                scope.bind(value, Binding("other"))
            elif type(value) not in leaves and isinstance(value, ast.AST):
                visit(value, scope)

    def _call(self, node: ast.Call, scope: Scope) -> None:
        self.scope_of[id(node)] = scope
        self.calls.append(node)
        visit, leaves = self.visit, self._leaves
        if type(node.func) is ast.Name:
            self.by_name.setdefault(node.func.id, []).append(node)
        if type(node.func) not in leaves:
            visit(node.func, scope)
        for argument in (*node.args, *(keyword.value for keyword in node.keywords)):
            if type(argument) not in leaves:  # most arguments are names and constants
                visit(argument, scope)

    def _attribute(self, node: ast.Attribute, scope: Scope) -> None:
        """`a.b.c`: only what the chain starts from can hold a binding or a call."""
        value = node.value
        while type(value) is ast.Attribute:
            value = value.value
        if type(value) not in self._leaves:
            self.visit(value, scope)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> None:
        self.scope_of[id(node)] = scope
        self.subscripts.append(node)
        self.visit(node.value, scope)
        self.visit(node.slice, scope)

    def _declaration(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> None:
        kind, owner = "global" if isinstance(node, ast.Global) else "nonlocal", scope.function_scope()
        if owner.parent is not None:  # `global x` at module level changes nothing
            owner.declared.update((name, kind) for name in node.names)

    def _type_parameters(self, node: ast.AST, scope: Scope) -> Scope:
        """PEP 695: a generic's type parameters live in an annotation scope between the scope
        it is defined in and its body, where their bounds are evaluated; libcst resolves the
        signature and decorators of a generic function there too, and so does this."""
        parameters = getattr(node, "type_params", None)
        if not parameters:
            return scope
        inner = Scope("annotation", scope)
        for parameter in parameters:
            inner.bind(parameter.name, Binding("other"))
        for parameter in parameters:
            self.visit(getattr(parameter, "bound", None), inner)
            self.visit(getattr(parameter, "default_value", None), inner)
        return inner

    def _type_alias(self, node: ast.AST, scope: Scope) -> None:
        """`type X[T] = value`: binds X; the value is evaluated lazily, in an annotation scope."""
        # `node` is an ast.TypeAlias, which the Python 3.10 stubs mypy checks against do not have (3.12+).
        scope.bind(node.name.id, Binding("other"))  # type: ignore[attr-defined]  # ast.TypeAlias: 3.12+
        inner = self._type_parameters(node, scope)
        annotation = inner if inner is not scope else Scope("annotation", scope)
        self.visit(node.value, annotation)  # type: ignore[attr-defined]  # ast.TypeAlias: 3.12+

    def _lambda(self, node: ast.Lambda, scope: Scope) -> None:
        for default in (*node.args.defaults, *node.args.kw_defaults):
            self.visit(default, scope)
        self.visit(node.body, self._parameters(node, scope))

    def _class(self, node: ast.ClassDef, scope: Scope) -> None:
        for child in node.decorator_list:
            self.visit(child, scope)
        outer = self._type_parameters(node, scope)
        for base in (*node.bases, *node.keywords):
            self.visit(base, outer)
        scope.bind(node.name, Binding("other", node=node))
        inner = Scope("class", outer)
        for statement in node.body:
            self.visit(statement, inner)

    def _import(self, node: ast.Import, scope: Scope) -> None:
        self.imports.append(node)
        for alias in node.names:
            name = alias.asname or alias.name.split(".")[0]  # `import a.b` binds `a`, to `a`
            scope.bind(name, Binding("import", alias.name if alias.asname else name, node))
            if alias.asname and alias.name.rpartition(".")[2] in _CALLED:
                self.callee_names.add(alias.asname)

    def _import_from(self, node: ast.ImportFrom, scope: Scope) -> None:
        self.imports.append(node)
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":  # only legal at module level
                for name in self.stars.get(module, ()):  # `from .compat import *`, whose `__all__` says these
                    scope.bind(name, Binding("import", f"{module}.{name}", node))
                scope.star = scope.star or module not in self.stars
                continue
            scope.bind(alias.asname or alias.name, Binding("import", f"{module}.{alias.name}", node))
            if alias.name in _CALLED:
                self.callee_names.add(alias.asname or alias.name)

    def _assign(self, node: ast.Assign, scope: Scope) -> None:
        self.visit(node.value, scope)
        for target in node.targets:
            if not isinstance(target, ast.Name):
                self._target(target, scope, "unpack", node)  # a tuple's names; an attribute or subscript binds none
            elif len(node.targets) == 1 and content_read(node.value):
                self.scope_of_read[id(node)] = scope
                scope.bind(target.id, Binding("read", node=node))
            else:
                kind = "tuple_literal" if isinstance(node.value, (ast.Tuple, ast.List)) else "assign"
                scope.bind(target.id, Binding(kind, node=node))
                given = node.value
                values = (
                    branches(given)
                    if type(given) is ast.IfExp
                    else given.values  # `getattr(pl, X, None) or pltpu.X`: either
                    if type(given) is ast.BoolOp and type(given.op) is ast.Or
                    else (given,)
                )
                for value in values:  # may name a function: see `named`
                    if type(value) in (ast.Name, ast.Attribute):
                        self.named.append((target.id, getattr(value, "attr", getattr(value, "id", ""))))

    def _delete(self, node: ast.Delete, scope: Scope) -> None:
        """`del x` binds `x` as Python does (it is local to the scope): a Ref name deleted
        somewhere is not the same Ref everywhere."""
        for target in node.targets:
            self._target(target, scope, "other")
            if isinstance(target, ast.Name):
                self.visit(target, scope)  # Tracking records the `del` as a write

    def _aug_assign(self, node: ast.AugAssign | ast.AnnAssign, scope: Scope) -> None:
        self.visit(node.value, scope)  # None in `x: int`, a leaf
        self.visit(getattr(node, "annotation", None), scope)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and content_read(node.value):
            self.scope_of_read[id(node)] = scope  # `v: T = X[...]` carries a read as `v = X[...]` does
            scope.bind(node.target.id, Binding("read", node=node))
        else:
            self._target(node.target, scope, "other")

    def _for(self, node: ast.For | ast.AsyncFor, scope: Scope) -> None:
        self.visit(node.iter, scope)
        self._target(node.target, scope, "other", node)
        for statement in (*node.body, *node.orelse):
            self.visit(statement, scope)

    def _with_item(self, node: ast.withitem, scope: Scope) -> None:
        self.visit(node.context_expr, scope)
        self._target(node.optional_vars, scope, "other")

    def _walrus(self, node: ast.NamedExpr, scope: Scope) -> None:
        self.visit(node.value, scope)
        scope.function_scope().bind(node.target.id, Binding("other"))

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: Scope) -> None:
        scope = self._type_parameters(node, outer)
        arguments = node.args
        annotations = (a.annotation for a in signature(arguments))
        for child in (*node.decorator_list, node.returns, *arguments.defaults, *arguments.kw_defaults, *annotations):
            self.visit(child, scope)
        outer.bind(node.name, Binding("def", node=node))
        self.functions.append(node)
        self.scope_of[id(node)] = scope
        inner = self.bodies[id(node)] = self._parameters(node, scope)
        for statement in node.body:
            self.visit(statement, inner)

    def _parameters(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope) -> Scope:
        """The scope of the def's or lambda's body, with its parameters bound."""
        inner, arguments = Scope("function", scope, node=node), node.args
        for argument in signature(arguments):
            kind = "star_param" if argument is arguments.vararg else "other" if argument is arguments.kwarg else "param"
            inner.bind(argument.arg, Binding(kind, node=argument))
        return inner

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, scope: Scope) -> None:
        inner = Scope("comprehension", scope)
        for index, generator in enumerate(node.generators):
            self.visit(generator.iter, inner if index else scope)  # the first is evaluated outside
            self._target(generator.target, inner, "other")
            for condition in generator.ifs:
                self.visit(condition, inner)
        for part in ("elt", "key", "value"):
            self.visit(getattr(node, part, None), inner)

    def _target(self, target: ast.expr | None, scope: Scope, kind: str, statement: ast.stmt | None = None) -> None:
        """Bind the names of a target; a `for` loop's and an assignment's keep their `statement`."""
        if isinstance(target, ast.Name):
            scope.bind(target.id, Binding(kind, node=statement))
        elif isinstance(target, (ast.Tuple, ast.List)):  # an assignment's, or a loop's (`for`, `with`, ...)
            for element in target.elts:
                self._target(element, scope, "unpack" if kind == "unpack" else "element", statement)
        elif isinstance(target, ast.Starred):  # always a list
            self._target(target.value, scope, "star_unpack", statement)
        else:  # an attribute or subscript: only loads inside (or None: `with x:`)
            if isinstance(target, ast.Attribute):  # `obj.x = v`, with v where it is the whole value
                whole = isinstance(statement, ast.Assign) and target in statement.targets
                self.attribute_stores.setdefault(target.attr, []).append(
                    (target, statement.value if whole else None, scope)  # type: ignore[union-attr]
                )
            self.visit(target, scope)


_HANDLERS: dict[type, Callable[..., None]] = {
    ast.Call: ScopeBuilder._call,
    ast.Attribute: ScopeBuilder._attribute,
    ast.Subscript: ScopeBuilder._subscript,
    **dict.fromkeys((ast.Global, ast.Nonlocal), ScopeBuilder._declaration),
    **dict.fromkeys((ast.FunctionDef, ast.AsyncFunctionDef), ScopeBuilder._function),
    ast.Lambda: ScopeBuilder._lambda,
    ast.ClassDef: ScopeBuilder._class,
    **dict.fromkeys((ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp), ScopeBuilder._comprehension),
    ast.Import: ScopeBuilder._import,
    ast.ImportFrom: ScopeBuilder._import_from,
    ast.Assign: ScopeBuilder._assign,
    ast.Delete: ScopeBuilder._delete,
    **dict.fromkeys((ast.AugAssign, ast.AnnAssign), ScopeBuilder._aug_assign),
    **dict.fromkeys((ast.For, ast.AsyncFor), ScopeBuilder._for),
    ast.withitem: ScopeBuilder._with_item,
    ast.NamedExpr: ScopeBuilder._walrus,
    **({ast.TypeAlias: ScopeBuilder._type_alias} if hasattr(ast, "TypeAlias") else {}),
}
# Nodes with nothing below them that matters: contexts, operators, constants, a missing node.
_LEAVES = frozenset(
    [ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue, type(None)]
    + [c for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop) for c in base.__subclasses__()]
)
_LEAVES_AND_NAMES = _LEAVES | {ast.Name}  # out of a target (see `_target`), a Name only reads
# Fields that never hold a node or a bound name (names read, operators, contexts, flags).
_SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "ctx", "op", "kind", "type_comment", "conversion", "is_async", "level", "module", "str"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class Access:
    """A name read or deleted (libcst's access), with the attribute and subscript chain it
    heads: `self` in `self.sems.at[i] = x` has top `self.sems.at[i]`, steps ("sems", "at",
    None) and context Store."""

    __slots__ = ("name", "scope", "top", "steps", "context", "called")

    def __init__(self, name: ast.Name, scope: Scope, top: ast.expr, steps: Steps, context: type, called: bool) -> None:
        self.name, self.scope, self.top, self.steps, self.context = name, scope, top, steps, context
        self.called = called  # the chain is a call's callee: `self.advance()`, `advance()`


class Tracking(ScopeBuilder):
    """The scope builder that also records every access to a name, for the rules that ask
    whether a Ref expression keeps its value (see `Evidence.unstable`). Only files that ask
    pay for it: `analyse_tree` builds it when the engine raises `NeedsAccesses`."""

    def __init__(self) -> None:
        super().__init__()
        self.accesses: dict[str, list[Access]] = {}
        self._callees: set[int] = set()
        self._handlers, self._leaves = _TRACKING_HANDLERS, _LEAVES

    def _track_call(self, node: ast.Call, scope: Scope) -> None:
        self._callees.add(id(node.func))
        self._call(node, scope)

    def _track_chain(self, node: ast.Name | ast.Attribute | ast.Subscript, scope: Scope) -> None:
        """A whole `a.b[i].c` chain at once, from its outermost node: the access to its root
        name, then what its subscripts hold."""
        root, steps, links = unchain(node)
        for link in links:
            self.scope_of[id(link)] = scope
            self.subscripts.append(link)
        if isinstance(root, ast.Name):
            access = Access(root, scope, node, steps, type(node.ctx), id(node) in self._callees)
            self.accesses.setdefault(root.id, []).append(access)
        else:
            self.visit(root, scope)
        for link in reversed(links):
            self.visit(link.slice, scope)

    def references(self, name: str, scope: Scope) -> list[Access]:
        """The accesses that resolve to the bindings `name` has where `scope` sees it."""
        _, bindings = scope.lookup(name)
        return [a for a in self.accesses.get(name, ()) if a.scope.lookup(name)[1] is bindings]


_TRACKING_HANDLERS: dict[type, Callable[..., None]] = {
    **_HANDLERS,
    ast.Call: Tracking._track_call,
    **dict.fromkeys((ast.Name, ast.Attribute, ast.Subscript), Tracking._track_chain),
}


_CALLED = FUNCTION_NAMES | {name.rpartition(".")[2] for name in PALLAS_CALL | KERNEL | RUN_SCOPED | PARTIAL}


def _callee(func: ast.expr) -> str | None:
    """The name a callee is spelled by: `f`, `x.f`, and `getattr(x, "f")`'s constant."""
    if type(func) is ast.Call and len(func.args) == 2 and type(name := func.args[1]) is ast.Constant:
        getter = type(func.func) is ast.Name and func.func.id == "getattr"
        return name.value if getter and isinstance(name.value, str) else None
    return getattr(func, "attr", getattr(func, "id", None))


def signature(arguments: ast.arguments) -> list[ast.arg]:
    """Every parameter, in order: positional-only, positional, keyword-only, then `*args`, `**kwargs`."""
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]
