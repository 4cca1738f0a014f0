"""Scopes and bindings on the stdlib `ast`, as libcst's ScopeProvider would give them.

`ScopeBuilder` walks the tree once: the bindings of every scope (with what kind of binding
each is, which the evidence reads), and the scope of every call and subscript. `Tracking` is
the same walk that also records every access to a name with the attribute and subscript
chain it heads; only files whose rules ask whether a Ref expression keeps its value pay for it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator

from semfix.catalog import FUNCTION_NAMES, PALLAS_CALL, RUN_SCOPED
from semfix.engine.nodes import read_target


@dataclass(eq=False)
class Binding:
    kind: str  # import, def, param, star_param, unpack, tuple_literal, read, assign, star, other
    qualname: str | None = None  # for imports
    node: ast.AST | None = None  # the def, the parameter, the Assign or the import statement


@dataclass(eq=False)
class Scope:
    kind: str  # module, function, class, comprehension, annotation (PEP 695 type parameters)
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    declared: dict[str, str] = field(default_factory=dict)  # name -> "global" or "nonlocal"
    node: ast.AST | None = None  # a function scope's def or lambda
    star: bool = False  # a module with `from m import *`: any of its names may come from m

    def _owner(self, name: str) -> Scope:
        """Where a `global` or `nonlocal` declaration sends the name."""
        if self.declared.get(name) == "global":
            scope = self
            while scope.parent is not None:
                scope = scope.parent
            return scope
        scope = self.parent  # nonlocal: the nearest enclosing function
        while scope is not None and scope.kind == "class":
            scope = scope.parent
        return scope or self

    def bind(self, name: str, binding: Binding) -> None:
        if name in self.declared:
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
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope


class ScopeBuilder:
    """One pass over the tree: bindings per scope, and the scope of every call and subscript."""

    def __init__(self) -> None:
        self.module = Scope("module", None)
        self.scope_of: dict[int, Scope] = {}
        self.calls: list[ast.Call] = []
        self.subscripts: list[ast.Subscript] = []
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        # Callee names that can resolve to a function the rules ask about: the names themselves,
        # and whatever a file imports them as. A call spelled otherwise resolves to none of them.
        self.callee_names: set[str] = set(_CALLED)

    def relevant_calls(self) -> list[ast.Call]:
        names = self.callee_names
        return [c for c in self.calls if _terminal(c.func) in names]

    def build(self, tree: ast.Module) -> None:
        for statement in tree.body:
            self.visit(statement, self.module)
        if self.module.star:  # a name bound here may also be rebound by the star import: unresolved
            for bindings in self.module.bindings.values():
                bindings.append(Binding("star"))

    def visit(self, node: ast.AST, scope: Scope) -> None:
        """Dispatch on the node's exact type; most nodes only pass their scope down."""
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, scope)
            return
        kind = type(node)
        if kind in _LEAVES:
            return
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in node._fields if f not in _SCALAR_FIELDS)
        visit = self.visit
        for name in fields:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if type(item) is ast.Name:
                        if type(item.ctx) is ast.Store:  # type: ignore[attr-defined]
                            scope.bind(item.id, Binding("other"))  # type: ignore[attr-defined]
                    elif isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        visit(item, scope)
            elif type(value) is ast.Name:
                if type(value.ctx) is ast.Store:  # type: ignore[attr-defined]
                    scope.bind(value.id, Binding("other"))  # type: ignore[attr-defined]
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                visit(value, scope)

    def _children(self, node: ast.AST, scope: Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def _call(self, node: ast.Call, scope: Scope) -> None:
        self.scope_of[id(node)] = scope
        self.calls.append(node)
        self.visit(node.func, scope)
        for argument in (*node.args, *(keyword.value for keyword in node.keywords)):
            self.visit(argument, scope)

    def _subscript(self, node: ast.Subscript, scope: Scope) -> None:
        self.scope_of[id(node)] = scope
        self.subscripts.append(node)
        self.visit(node.value, scope)
        self.visit(node.slice, scope)

    def _name(self, node: ast.Name, scope: Scope) -> None:
        if type(node.ctx) is ast.Store:
            scope.bind(node.id, Binding("other"))

    def _declaration(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> None:
        kind = "global" if isinstance(node, ast.Global) else "nonlocal"
        scope.function_scope().declared.update((name, kind) for name in node.names)

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
            for part in (getattr(parameter, "bound", None), getattr(parameter, "default_value", None)):
                if part is not None:
                    self.visit(part, inner)
        return inner

    def _type_alias(self, node: ast.AST, scope: Scope) -> None:
        """`type X[T] = value`: binds X; the value is evaluated lazily, in an annotation scope."""
        scope.bind(node.name.id, Binding("other"))  # type: ignore[attr-defined]
        inner = self._type_parameters(node, scope)
        self.visit(node.value, inner if inner is not scope else Scope("annotation", scope))  # type: ignore[attr-defined]

    def _lambda(self, node: ast.Lambda, scope: Scope) -> None:
        self._arguments_defaults(node.args, scope)
        inner = Scope("function", scope, node=node)
        self._parameters(node, node.args, inner)
        self.visit(node.body, inner)

    def _class(self, node: ast.ClassDef, scope: Scope) -> None:
        for child in node.decorator_list:
            self.visit(child, scope)
        outer = self._type_parameters(node, scope)
        for child in (*node.bases, *node.keywords):
            self.visit(child, outer)
        scope.bind(node.name, Binding("other", node=node))
        inner = Scope("class", outer)
        for statement in node.body:
            self.visit(statement, inner)

    def _import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            if alias.asname:
                scope.bind(alias.asname, Binding("import", alias.name, node))
                if alias.name.rpartition(".")[2] in _CALLED:
                    self.callee_names.add(alias.asname)
            else:
                root = alias.name.split(".")[0]
                scope.bind(root, Binding("import", root, node))

    def _import_from(self, node: ast.ImportFrom, scope: Scope) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":  # only legal at module level
                scope.star = True
                continue
            scope.bind(alias.asname or alias.name, Binding("import", f"{module}.{alias.name}", node))
            if alias.name in _CALLED:
                self.callee_names.add(alias.asname or alias.name)

    def _assign(self, node: ast.Assign, scope: Scope) -> None:
        self.visit(node.value, scope)
        for target in node.targets:
            self._assign_target(target, node, scope, single=len(node.targets) == 1)

    def _aug_assign(self, node: ast.AugAssign | ast.AnnAssign, scope: Scope) -> None:
        if node.value is not None:
            self.visit(node.value, scope)
        if isinstance(node, ast.AnnAssign):
            self.visit(node.annotation, scope)
        self._target(node.target, scope, "other")

    def _for(self, node: ast.For | ast.AsyncFor, scope: Scope) -> None:
        self.visit(node.iter, scope)
        self._target(node.target, scope, "other")
        for statement in (*node.body, *node.orelse):
            self.visit(statement, scope)

    def _with(self, node: ast.With | ast.AsyncWith, scope: Scope) -> None:
        for item in node.items:
            self.visit(item.context_expr, scope)
            if item.optional_vars is not None:
                self._target(item.optional_vars, scope, "other")
        for statement in node.body:
            self.visit(statement, scope)

    def _except(self, node: ast.ExceptHandler, scope: Scope) -> None:
        if node.type is not None:
            self.visit(node.type, scope)
        if node.name:
            scope.bind(node.name, Binding("other"))
        for statement in node.body:
            self.visit(statement, scope)

    def _walrus(self, node: ast.NamedExpr, scope: Scope) -> None:
        self.visit(node.value, scope)
        scope.function_scope().bind(node.target.id, Binding("other"))

    def _match_capture(self, node: ast.MatchAs | ast.MatchStar, scope: Scope) -> None:
        if node.name:
            scope.bind(node.name, Binding("other"))
        if isinstance(node, ast.MatchAs) and node.pattern is not None:
            self.visit(node.pattern, scope)

    def _match_mapping(self, node: ast.MatchMapping, scope: Scope) -> None:
        if node.rest:
            scope.bind(node.rest, Binding("other"))
        self._children(node, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: Scope) -> None:
        scope = self._type_parameters(node, outer)
        for child in (*node.decorator_list, *([node.returns] if node.returns else [])):
            self.visit(child, scope)
        self._arguments_defaults(node.args, scope)
        for argument in _all_arguments(node.args):
            if argument.annotation is not None:
                self.visit(argument.annotation, scope)
        outer.bind(node.name, Binding("def", node=node))
        self.functions.append(node)
        self.scope_of[id(node)] = scope
        inner = Scope("function", scope, node=node)
        self._parameters(node, node.args, inner)
        for statement in node.body:
            self.visit(statement, inner)

    def _arguments_defaults(self, arguments: ast.arguments, scope: Scope) -> None:
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(default, scope)

    def _parameters(self, owner: ast.AST, arguments: ast.arguments, scope: Scope) -> None:
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            scope.bind(argument.arg, Binding("param", node=argument))
        if arguments.vararg is not None:
            scope.bind(arguments.vararg.arg, Binding("star_param", node=arguments.vararg))
        if arguments.kwarg is not None:
            scope.bind(arguments.kwarg.arg, Binding("other", node=arguments.kwarg))

    def _comprehension(self, node: ast.AST, scope: Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter, scope)
        inner = Scope("comprehension", scope)
        for index, generator in enumerate(generators):
            if index:
                self.visit(generator.iter, inner)
            self._target(generator.target, inner, "other")
            for condition in generator.ifs:
                self.visit(condition, inner)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self.visit(getattr(node, part), inner)

    def _assign_target(self, target: ast.expr, statement: ast.Assign, scope: Scope, *, single: bool) -> None:
        if isinstance(target, ast.Name):
            if single and read_target(statement.value) is not None:
                kind = "read"
            elif isinstance(statement.value, (ast.Tuple, ast.List)):
                kind = "tuple_literal"
            else:
                kind = "assign"
            scope.bind(target.id, Binding(kind, node=statement))
        else:
            self._target(target, scope, "other")

    def _target(self, target: ast.expr, scope: Scope, kind: str) -> None:
        if isinstance(target, ast.Name):
            scope.bind(target.id, Binding(kind))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, scope, "unpack")
        elif isinstance(target, ast.Starred):
            self._target(target.value, scope, "unpack")
        else:  # an attribute or subscript: only loads inside
            self.visit(target, scope)


_HANDLERS = {
    ast.Call: ScopeBuilder._call,
    ast.Subscript: ScopeBuilder._subscript,
    ast.Name: ScopeBuilder._name,
    ast.Global: ScopeBuilder._declaration,
    ast.Nonlocal: ScopeBuilder._declaration,
    ast.FunctionDef: ScopeBuilder._function,
    ast.AsyncFunctionDef: ScopeBuilder._function,
    ast.Lambda: ScopeBuilder._lambda,
    ast.ClassDef: ScopeBuilder._class,
    ast.ListComp: ScopeBuilder._comprehension,
    ast.SetComp: ScopeBuilder._comprehension,
    ast.GeneratorExp: ScopeBuilder._comprehension,
    ast.DictComp: ScopeBuilder._comprehension,
    ast.Import: ScopeBuilder._import,
    ast.ImportFrom: ScopeBuilder._import_from,
    ast.Assign: ScopeBuilder._assign,
    ast.AugAssign: ScopeBuilder._aug_assign,
    ast.AnnAssign: ScopeBuilder._aug_assign,
    ast.For: ScopeBuilder._for,
    ast.AsyncFor: ScopeBuilder._for,
    ast.With: ScopeBuilder._with,
    ast.AsyncWith: ScopeBuilder._with,
    ast.ExceptHandler: ScopeBuilder._except,
    ast.NamedExpr: ScopeBuilder._walrus,
    ast.MatchAs: ScopeBuilder._match_capture,
    ast.MatchStar: ScopeBuilder._match_capture,
    ast.MatchMapping: ScopeBuilder._match_mapping,
    **({ast.TypeAlias: ScopeBuilder._type_alias} if hasattr(ast, "TypeAlias") else {}),
}
# Nodes with nothing below them that matters: contexts, operators, constants.
_LEAVES = frozenset(
    [ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue]
    + [c for base in (ast.operator, ast.unaryop, ast.cmpop, ast.boolop) for c in base.__subclasses__()]
)
# Fields that never hold a node worth visiting (names, operators, contexts, flags).
_SCALAR_FIELDS = frozenset(
    {"id", "attr", "arg", "ctx", "op", "kind", "type_comment", "conversion", "is_async", "level", "module"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


Steps = tuple  # the attribute names of `a.b[i].c` after `a`; None for a subscript


@dataclass(eq=False)
class Access:
    """A name read or deleted (libcst's access), with the attribute and subscript chain it
    heads: `self` in `self.sems.at[i] = x` has top `self.sems.at[i]`, steps ("sems", "at",
    None) and context Store."""

    name: ast.Name
    scope: Scope
    top: ast.expr
    steps: Steps
    context: type
    called: bool  # the chain is a call's callee: `self.advance()`


class Tracking(ScopeBuilder):
    """The scope builder that also records every access to a name, for the rules that ask
    whether a Ref expression keeps its value (see `Evidence.unstable`). Only files that ask
    pay for it: `analyse_tree` builds it when the engine raises `NeedsAccesses`."""

    def __init__(self) -> None:
        super().__init__()
        self.accesses: dict[str, list[Access]] = {}
        self.scope_of_read: dict[int, Scope] = {}  # id(`v = X[...]`) -> the scope it is in
        self._callees: set[int] = set()
        self.tree = ast.Module(body=[], type_ignores=[])

    def build(self, tree: ast.Module) -> None:
        self.tree = tree
        super().build(tree)

    def visit(self, node: ast.AST, scope: Scope) -> None:
        handler = _TRACKING_HANDLERS.get(type(node)) or _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, scope)
        elif type(node) not in _LEAVES:  # no Name inlined: every load is an access
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)

    def _track_name(self, node: ast.Name, scope: Scope) -> None:
        if type(node.ctx) is ast.Store:
            scope.bind(node.id, Binding("other"))
        else:
            self._access(node, scope, node, (), False)

    def _access(self, name: ast.Name, scope: Scope, top: ast.expr, steps: Steps, called: bool) -> None:
        access = Access(name, scope, top, steps, type(top.ctx), called)  # type: ignore[attr-defined]
        self.accesses.setdefault(name.id, []).append(access)

    def _track_call(self, node: ast.Call, scope: Scope) -> None:
        self._callees.add(id(node.func))
        self._call(node, scope)

    def _track_chain(self, node: ast.Attribute | ast.Subscript, scope: Scope) -> None:
        """A whole `a.b[i].c` chain at once, from its outermost node: the access to its root
        name, then what its subscripts hold."""
        steps: list[str | None] = []
        links: list[ast.Subscript] = []
        root: ast.expr = node
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            if isinstance(root, ast.Subscript):
                steps.append(None)
                links.append(root)
                self.scope_of[id(root)] = scope
                self.subscripts.append(root)
            else:
                steps.append(root.attr)
            root = root.value
        if isinstance(root, ast.Name):
            self._access(root, scope, node, tuple(reversed(steps)), id(node) in self._callees)
        else:
            self.visit(root, scope)
        for link in reversed(links):
            self.visit(link.slice, scope)

    def _track_assign(self, node: ast.Assign, scope: Scope) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and read_target(node.value) is not None:
            self.scope_of_read[id(node)] = scope
        self._assign(node, scope)

    def references(self, name: str, scope: Scope) -> list[Access]:
        """The accesses that resolve to the bindings `name` has where `scope` sees it."""
        _, bindings = scope.lookup(name)
        return [a for a in self.accesses.get(name, ()) if a.scope.lookup(name)[1] is bindings]


_TRACKING_HANDLERS = {
    ast.Name: Tracking._track_name,
    ast.Call: Tracking._track_call,
    ast.Attribute: Tracking._track_chain,
    ast.Subscript: Tracking._track_chain,
    ast.Assign: Tracking._track_assign,
}


_CALLED = FUNCTION_NAMES | {name.rpartition(".")[2] for name in PALLAS_CALL | RUN_SCOPED}


def _terminal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _all_arguments(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    yield from (a for a in (arguments.vararg, arguments.kwarg) if a is not None)
