"""The quick engine: the same rules on the stdlib `ast`, for files it can fully account for.

libcst with scope metadata runs at a few thousand lines a second; CPython's own parser is two
orders of magnitude faster. This engine resolves imports and scopes on `ast`, applies SEM001,
SEM002, SEM003 and SEM004 as text edits, and proves each result: the new text must parse to exactly
the tree the rewrites declare, and a second pass must find nothing to fix. Whenever a file
holds anything it does not model (rare placements of SEM101's import edits, star imports),
it raises `Defer` and the libcst engine takes the file. Syntax this Python cannot parse is
refused with a SourceError (semfix/syntax.py). Its output
must equal the libcst engine's byte for byte, findings included; the tests hold it to that.
"""

from __future__ import annotations

import ast
import bisect
import copy
import functools
import io
import re
import tokenize
import warnings
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Callable, Iterator

from semfix import messages, migrations
from semfix.compiles import prove_compiles
from semfix.errors import SourceError
from semfix.catalog import FUNCTION_NAMES, PALLAS_CALL, PARTIAL, RUN_SCOPED, SEMAPHORE_TYPE_OWNERS, Operation, lookup
from semfix.findings import Finding, decide
from semfix.rules import MIGRATIONS
from semfix.settings import Settings
from semfix.skim import clears
from semfix.syntax import syntax_error
from semfix.text import Suppressions, apply_edits, line_starts, note_suppression, suppressed

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MIGRATION_TEXT = re.compile(r"semaphore_(?:signal|wait|read)")
_IGNORE_TEXT = re.compile(r"#\s*semfix:\s*ignore")
_LONE_CR = re.compile(r"\r(?!\n)")
# From the end of a subscript's value to its `[`: the value's closing parentheses, then what
# libcst calls the whitespace after the value.
_AFTER_VALUE = re.compile(r"(?:(?:[ \t\f\r\n\\]|#[^\r\n]*)*\))*(?P<after>(?:[ \t\f\r\n\\]|#[^\r\n]*)*)\[")
_SIMPLE_WHITESPACE = re.compile(r"(?:[ \t\f]|\\(?:\r\n?|\n))*\Z")  # libcst's SimpleWhitespace
_OPEN_PAREN = re.compile(r"(?:[ \t\f\r\n\\)]|#[^\r\n]*)*\(")
_CLOSE_PAREN = re.compile(r"(?:[ \t\f\r\n\\]|#[^\r\n]*)*\)")
_LINE_BREAK = re.compile(r"[\r\n]")


class Defer(Exception):
    """The file needs the libcst engine; the message says why (for tests and debugging)."""


class Kind(Enum):
    ARRAY = "array"
    TUPLE = "tuple"
    UNKNOWN = "unknown"


@dataclass(eq=False)
class _Binding:
    kind: str  # import, def, param, star_param, unpack, tuple_literal, read, assign, other
    qualname: str | None = None  # for imports
    node: ast.AST | None = None  # the def, the parameter, or the Assign statement


@dataclass(eq=False)
class _Scope:
    kind: str  # module, function, class, comprehension, annotation (PEP 695 type parameters)
    parent: _Scope | None
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    declared: dict[str, str] = field(default_factory=dict)  # name -> "global" or "nonlocal"
    node: ast.AST | None = None  # a function scope's def or lambda

    def _owner(self, name: str) -> _Scope:
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

    def bind(self, name: str, binding: _Binding) -> None:
        if name in self.declared:
            self._owner(name).bind(name, binding)
        else:
            self.bindings.setdefault(name, []).append(binding)

    def lookup(self, name: str) -> tuple[_Scope | None, list[_Binding]]:
        """Python's rule: the innermost scope binding the name; class bodies are not enclosing."""
        if name in self.declared:
            owner = self._owner(name)
            return (owner, owner.bindings[name]) if name in owner.bindings else owner.lookup(name)
        scope: _Scope | None = self
        below: _Scope | None = None
        while scope is not None:  # a class is seen from an annotation scope just inside it, as in libcst
            if (below is None or scope.kind != "class" or below.kind == "annotation") and name in scope.bindings:
                return scope, scope.bindings[name]
            below, scope = scope, scope.parent
        return None, []

    def function_scope(self) -> _Scope:
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope


class _ScopeBuilder:
    """One pass over the tree: bindings per scope, and the scope of every call and subscript."""

    def __init__(self) -> None:
        self.module = _Scope("module", None)
        self.scope_of: dict[int, _Scope] = {}
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

    def visit(self, node: ast.AST, scope: _Scope) -> None:
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
                            scope.bind(item.id, _Binding("other"))  # type: ignore[attr-defined]
                    elif isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        visit(item, scope)
            elif type(value) is ast.Name:
                if type(value.ctx) is ast.Store:  # type: ignore[attr-defined]
                    scope.bind(value.id, _Binding("other"))  # type: ignore[attr-defined]
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                visit(value, scope)

    def _children(self, node: ast.AST, scope: _Scope) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope)

    def _call(self, node: ast.Call, scope: _Scope) -> None:
        self.scope_of[id(node)] = scope
        self.calls.append(node)
        self.visit(node.func, scope)
        for argument in (*node.args, *(keyword.value for keyword in node.keywords)):
            if (type(argument) is ast.Attribute and argument.attr in migrations.FUNCTIONS) or (type(argument) is ast.Name and argument.id in migrations.FUNCTIONS):
                self.scope_of[id(argument)] = scope  # `partial(pltpu.semaphore_wait, ...)`: SEM101's
            self.visit(argument, scope)

    def _subscript(self, node: ast.Subscript, scope: _Scope) -> None:
        self.scope_of[id(node)] = scope
        self.subscripts.append(node)
        self.visit(node.value, scope)
        self.visit(node.slice, scope)

    def _name(self, node: ast.Name, scope: _Scope) -> None:
        if type(node.ctx) is ast.Store:
            scope.bind(node.id, _Binding("other"))

    def _declaration(self, node: ast.Global | ast.Nonlocal, scope: _Scope) -> None:
        kind = "global" if isinstance(node, ast.Global) else "nonlocal"
        scope.function_scope().declared.update((name, kind) for name in node.names)

    def _type_parameters(self, node: ast.AST, scope: _Scope) -> _Scope:
        """PEP 695: a generic's type parameters live in an annotation scope between the scope
        it is defined in and its body, where their bounds are evaluated; libcst resolves the
        signature and decorators of a generic function there too, and so does this."""
        parameters = getattr(node, "type_params", None)
        if not parameters:
            return scope
        inner = _Scope("annotation", scope)
        for parameter in parameters:
            inner.bind(parameter.name, _Binding("other"))
        for parameter in parameters:
            for part in (getattr(parameter, "bound", None), getattr(parameter, "default_value", None)):
                if part is not None:
                    self.visit(part, inner)
        return inner

    def _type_alias(self, node: ast.AST, scope: _Scope) -> None:
        """`type X[T] = value`: binds X; the value is evaluated lazily, in an annotation scope."""
        scope.bind(node.name.id, _Binding("other"))  # type: ignore[attr-defined]
        inner = self._type_parameters(node, scope)
        self.visit(node.value, inner if inner is not scope else _Scope("annotation", scope))  # type: ignore[attr-defined]

    def _lambda(self, node: ast.Lambda, scope: _Scope) -> None:
        self._arguments_defaults(node.args, scope)
        inner = _Scope("function", scope, node=node)
        self._parameters(node, node.args, inner)
        self.visit(node.body, inner)

    def _class(self, node: ast.ClassDef, scope: _Scope) -> None:
        for child in node.decorator_list:
            self.visit(child, scope)
        outer = self._type_parameters(node, scope)
        for child in (*node.bases, *node.keywords):
            self.visit(child, outer)
        scope.bind(node.name, _Binding("other", node=node))
        inner = _Scope("class", outer)
        for statement in node.body:
            self.visit(statement, inner)

    def _import(self, node: ast.Import, scope: _Scope) -> None:
        for alias in node.names:
            if alias.asname:
                scope.bind(alias.asname, _Binding("import", alias.name))
                if alias.name.rpartition(".")[2] in _CALLED:
                    self.callee_names.add(alias.asname)
            else:
                root = alias.name.split(".")[0]
                scope.bind(root, _Binding("import", root))

    def _import_from(self, node: ast.ImportFrom, scope: _Scope) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                raise Defer("star import")
            scope.bind(alias.asname or alias.name, _Binding("import", f"{module}.{alias.name}"))
            if alias.name in _CALLED:
                self.callee_names.add(alias.asname or alias.name)

    def _assign(self, node: ast.Assign, scope: _Scope) -> None:
        self.visit(node.value, scope)
        for target in node.targets:
            self._assign_target(target, node, scope, single=len(node.targets) == 1)

    def _aug_assign(self, node: ast.AugAssign | ast.AnnAssign, scope: _Scope) -> None:
        if node.value is not None:
            self.visit(node.value, scope)
        if isinstance(node, ast.AnnAssign):
            self.visit(node.annotation, scope)
        self._target(node.target, scope, "other")

    def _for(self, node: ast.For | ast.AsyncFor, scope: _Scope) -> None:
        self.visit(node.iter, scope)
        self._target(node.target, scope, "other")
        for statement in (*node.body, *node.orelse):
            self.visit(statement, scope)

    def _with(self, node: ast.With | ast.AsyncWith, scope: _Scope) -> None:
        for item in node.items:
            self.visit(item.context_expr, scope)
            if item.optional_vars is not None:
                self._target(item.optional_vars, scope, "other")
        for statement in node.body:
            self.visit(statement, scope)

    def _except(self, node: ast.ExceptHandler, scope: _Scope) -> None:
        if node.type is not None:
            self.visit(node.type, scope)
        if node.name:
            scope.bind(node.name, _Binding("other"))
        for statement in node.body:
            self.visit(statement, scope)

    def _walrus(self, node: ast.NamedExpr, scope: _Scope) -> None:
        self.visit(node.value, scope)
        scope.function_scope().bind(node.target.id, _Binding("other"))

    def _match_capture(self, node: ast.MatchAs | ast.MatchStar, scope: _Scope) -> None:
        if node.name:
            scope.bind(node.name, _Binding("other"))
        if isinstance(node, ast.MatchAs) and node.pattern is not None:
            self.visit(node.pattern, scope)

    def _match_mapping(self, node: ast.MatchMapping, scope: _Scope) -> None:
        if node.rest:
            scope.bind(node.rest, _Binding("other"))
        self._children(node, scope)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, outer: _Scope) -> None:
        scope = self._type_parameters(node, outer)
        for child in (*node.decorator_list, *([node.returns] if node.returns else [])):
            self.visit(child, scope)
        self._arguments_defaults(node.args, scope)
        for argument in _all_arguments(node.args):
            if argument.annotation is not None:
                self.visit(argument.annotation, scope)
        outer.bind(node.name, _Binding("def", node=node))
        self.functions.append(node)
        self.scope_of[id(node)] = scope
        inner = _Scope("function", scope, node=node)
        self._parameters(node, node.args, inner)
        for statement in node.body:
            self.visit(statement, inner)

    def _arguments_defaults(self, arguments: ast.arguments, scope: _Scope) -> None:
        for default in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(default, scope)

    def _parameters(self, owner: ast.AST, arguments: ast.arguments, scope: _Scope) -> None:
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            scope.bind(argument.arg, _Binding("param", node=argument))
        if arguments.vararg is not None:
            scope.bind(arguments.vararg.arg, _Binding("star_param", node=arguments.vararg))
        if arguments.kwarg is not None:
            scope.bind(arguments.kwarg.arg, _Binding("other", node=arguments.kwarg))

    def _comprehension(self, node: ast.AST, scope: _Scope) -> None:
        generators: list[ast.comprehension] = node.generators  # type: ignore[attr-defined]
        self.visit(generators[0].iter, scope)
        inner = _Scope("comprehension", scope)
        for index, generator in enumerate(generators):
            if index:
                self.visit(generator.iter, inner)
            self._target(generator.target, inner, "other")
            for condition in generator.ifs:
                self.visit(condition, inner)
        for part in ("elt", "key", "value"):
            if hasattr(node, part):
                self.visit(getattr(node, part), inner)

    def _assign_target(self, target: ast.expr, statement: ast.Assign, scope: _Scope, *, single: bool) -> None:
        if isinstance(target, ast.Name):
            if single and _read_target(statement.value) is not None:
                kind = "read"
            elif isinstance(statement.value, (ast.Tuple, ast.List)):
                kind = "tuple_literal"
            else:
                kind = "assign"
            scope.bind(target.id, _Binding(kind, node=statement))
        else:
            self._target(target, scope, "other")

    def _target(self, target: ast.expr, scope: _Scope, kind: str) -> None:
        if isinstance(target, ast.Name):
            scope.bind(target.id, _Binding(kind))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element, scope, "unpack")
        elif isinstance(target, ast.Starred):
            self._target(target.value, scope, "unpack")
        else:  # an attribute or subscript: only loads inside
            self.visit(target, scope)


_HANDLERS = {
    ast.Call: _ScopeBuilder._call,
    ast.Subscript: _ScopeBuilder._subscript,
    ast.Name: _ScopeBuilder._name,
    ast.Global: _ScopeBuilder._declaration,
    ast.Nonlocal: _ScopeBuilder._declaration,
    ast.FunctionDef: _ScopeBuilder._function,
    ast.AsyncFunctionDef: _ScopeBuilder._function,
    ast.Lambda: _ScopeBuilder._lambda,
    ast.ClassDef: _ScopeBuilder._class,
    ast.ListComp: _ScopeBuilder._comprehension,
    ast.SetComp: _ScopeBuilder._comprehension,
    ast.GeneratorExp: _ScopeBuilder._comprehension,
    ast.DictComp: _ScopeBuilder._comprehension,
    ast.Import: _ScopeBuilder._import,
    ast.ImportFrom: _ScopeBuilder._import_from,
    ast.Assign: _ScopeBuilder._assign,
    ast.AugAssign: _ScopeBuilder._aug_assign,
    ast.AnnAssign: _ScopeBuilder._aug_assign,
    ast.For: _ScopeBuilder._for,
    ast.AsyncFor: _ScopeBuilder._for,
    ast.With: _ScopeBuilder._with,
    ast.AsyncWith: _ScopeBuilder._with,
    ast.ExceptHandler: _ScopeBuilder._except,
    ast.NamedExpr: _ScopeBuilder._walrus,
    ast.MatchAs: _ScopeBuilder._match_capture,
    ast.MatchStar: _ScopeBuilder._match_capture,
    ast.MatchMapping: _ScopeBuilder._match_mapping,
    **({ast.TypeAlias: _ScopeBuilder._type_alias} if hasattr(ast, "TypeAlias") else {}),
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
class _Access:
    """A name read or deleted (libcst's access), with the attribute and subscript chain it
    heads: `self` in `self.sems.at[i] = x` has top `self.sems.at[i]`, steps ("sems", "at",
    None) and context Store."""

    name: ast.Name
    scope: _Scope
    top: ast.expr
    steps: Steps
    context: type
    called: bool  # the chain is a call's callee: `self.advance()`


class _Tracking(_ScopeBuilder):
    """The scope builder that also records every access to a name, for the rules that ask
    whether a Ref expression keeps its value (see `_Engine.unstable`). Only files that ask
    pay for it: `_analyse_tree` builds it when the engine raises `_NeedsAccesses`."""

    def __init__(self) -> None:
        super().__init__()
        self.accesses: dict[str, list[_Access]] = {}
        self.scope_of_read: dict[int, _Scope] = {}  # id(`v = X[...]`) -> the scope it is in
        self._callees: set[int] = set()
        self.tree = ast.Module(body=[], type_ignores=[])

    def build(self, tree: ast.Module) -> None:
        self.tree = tree
        super().build(tree)

    def visit(self, node: ast.AST, scope: _Scope) -> None:
        handler = _TRACKING_HANDLERS.get(type(node)) or _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, node, scope)
        elif type(node) not in _LEAVES:  # no Name inlined: every load is an access
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)

    def _track_name(self, node: ast.Name, scope: _Scope) -> None:
        if type(node.ctx) is ast.Store:
            scope.bind(node.id, _Binding("other"))
        else:
            self._access(node, scope, node, (), False)

    def _access(self, name: ast.Name, scope: _Scope, top: ast.expr, steps: Steps, called: bool) -> None:
        access = _Access(name, scope, top, steps, type(top.ctx), called)  # type: ignore[attr-defined]
        self.accesses.setdefault(name.id, []).append(access)

    def _track_call(self, node: ast.Call, scope: _Scope) -> None:
        self._callees.add(id(node.func))
        self._call(node, scope)

    def _track_chain(self, node: ast.Attribute | ast.Subscript, scope: _Scope) -> None:
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

    def _track_assign(self, node: ast.Assign, scope: _Scope) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and _read_target(node.value) is not None:
            self.scope_of_read[id(node)] = scope
        self._assign(node, scope)

    def references(self, name: str, scope: _Scope) -> list[_Access]:
        """The accesses that resolve to the bindings `name` has where `scope` sees it."""
        _, bindings = scope.lookup(name)
        return [a for a in self.accesses.get(name, ()) if a.scope.lookup(name)[1] is bindings]


_TRACKING_HANDLERS = {
    ast.Name: _Tracking._track_name,
    ast.Call: _Tracking._track_call,
    ast.Attribute: _Tracking._track_chain,
    ast.Subscript: _Tracking._track_chain,
    ast.Assign: _Tracking._track_assign,
}


_CALLED = FUNCTION_NAMES | {name.rpartition(".")[2] for name in PALLAS_CALL | RUN_SCOPED}


@functools.lru_cache(maxsize=None)
def _last_parts(targets: frozenset[str]) -> frozenset[str]:
    return frozenset(name.rpartition(".")[2] for name in targets)


def _terminal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _all_arguments(arguments: ast.arguments) -> Iterator[ast.arg]:
    yield from (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)
    yield from (a for a in (arguments.vararg, arguments.kwarg) if a is not None)


def _is_at(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "at"


def _elements(subscript: ast.Subscript) -> list[ast.expr]:
    inner = subscript.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) and inner.elts else [inner]


def _read_target(node: ast.expr) -> ast.expr | None:
    """`X[...]` or `X[()]`: the Ref X; None otherwise, and for `X.at[...]`."""
    if not isinstance(node, ast.Subscript) or _is_at(node.value):
        return None
    inner = node.slice
    whole = (isinstance(inner, ast.Constant) and inner.value is Ellipsis) or (
        isinstance(inner, ast.Tuple) and not inner.elts
    )
    return node.value if whole else None


def _has_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Subscript) and any(isinstance(e, ast.Slice) for e in _elements(node))


def _element_read(node: ast.expr) -> bool:
    if not isinstance(node, ast.Subscript) or _is_at(node.value) or _read_target(node) is not None:
        return False
    return not any(
        isinstance(e, (ast.Slice, ast.Starred)) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
        for e in _elements(node)
    )


class _Text:
    """The decoded source, with ast positions (UTF-8 byte columns) turned into offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)

    def column(self, line: int, byte_column: int) -> int:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.text)
        row = self.text[start:end]
        return byte_column if row.isascii() else len(row.encode("utf-8")[:byte_column].decode("utf-8"))

    def start(self, node: ast.AST) -> tuple[int, int, int]:
        """(line, 0-based character column, offset) where the node starts."""
        column = self.column(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        return node.lineno, column, self.starts[node.lineno - 1] + column  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> tuple[int, int, int]:
        column = self.column(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return node.end_lineno, column, self.starts[node.end_lineno - 1] + column  # type: ignore[attr-defined]

    def line(self, number: int) -> str:
        """The text of a line (1-based), with its line break."""
        end = self.starts[number] if number < len(self.starts) else len(self.text)
        return self.text[self.starts[number - 1] : end]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def of(self, node: ast.AST) -> str:
        return self.text[self.start(node)[2] : self.end(node)[2]]


@dataclass
class _Rewrite:
    call: ast.Call
    argument: ast.expr  # the original argument node
    replacement: ast.expr  # the node the verified new tree must hold in its place
    edits: list[tuple[int, int, str]]
    keyword: ast.keyword | None = None  # SEM102: the `dec=` keyword renamed `value=` instead


class _Engine:
    """Analysis of one parsed file, mirroring the libcst transformer's rules and order."""

    def __init__(self, text: _Text, scopes: _ScopeBuilder, settings: Settings) -> None:
        self.text = text
        self.settings = settings
        self.scopes = scopes
        self.param_kinds: dict[int, Kind] = {}
        self.proven: set[object] | None = None
        self.operations: dict[int, Operation | None] = {}
        self.findings: list[Finding] = []
        self.rewrites: list[_Rewrite] = []
        self.suppressions = _suppressions(text.text)
        self.comments: dict[int, list[int]] = {}  # by call: where each comment in it starts
        self.tree: ast.Module | None = None  # set for SEM101, which looks at every reference
        self.fixing = True  # False: findings only, so SEM101's import edits do not matter
        self.pallas_alias: str | None = None
        self.migrated: list[ast.Name | ast.Attribute] = []  # SEM101's rewritten references
        self.proof_sites: dict[object, list[tuple[ast.expr, _Scope]]] = {}  # attribute-chain proofs
        self.semaphore_args: set[int] = set()
        self.held: str | None = None  # while set, findings are reported with this reason, not fixed
        self.plans: dict[int, _Carried | None] = {}  # by the `v = X[...]` binding
        self.removals: list[tuple[list[ast.stmt], ast.stmt, tuple[int, int, str]]] = []
        self._changes: dict[int, list[tuple[str, Steps, ast.expr]]] = {}
        self.import_edits: list[tuple[int, int, str]] = []  # and the import edits they need
        self.imports: migrations.ImportChanges | None = None

    # -- resolution ---------------------------------------------------------------------
    def qualified(self, node: ast.expr, scope: _Scope) -> set[str] | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        _, bindings = scope.lookup(node.id)
        if not bindings or any(b.kind != "import" for b in bindings):
            return None
        suffix = "".join(f".{p}" for p in reversed(parts))
        return {f"{b.qualname}{suffix}" for b in bindings}

    def resolves_to(self, node: ast.expr, scope: _Scope, targets: frozenset[str]) -> bool:
        if isinstance(node, ast.Attribute) and node.attr not in _last_parts(targets):
            return False  # a qualified name ends in the attribute itself: no need to resolve
        names = self.qualified(node, scope)
        return bool(names) and names <= targets  # type: ignore[operator]

    def operation(self, call: ast.Call) -> Operation | None:
        if isinstance(call.func, ast.Attribute) and call.func.attr not in FUNCTION_NAMES:
            return None
        if id(call) not in self.operations:
            self.operations[id(call)] = self._operation(call)
        return self.operations[id(call)]

    def _operation(self, call: ast.Call) -> Operation | None:
        names = self.qualified(call.func, self.scopes.scope_of[id(call)])
        if not names:
            return None
        operations = {lookup(name) for name in names}
        return operations.pop() if len(operations) == 1 and None not in operations else None  # type: ignore[return-value]

    def key(self, node: ast.expr, scope: _Scope) -> object | None:
        if isinstance(node, ast.Name):  # a name bound twice may name two things: no evidence
            found, bindings = scope.lookup(node.id)
            if len(bindings) > 1:
                return None
            return ("bound", id(found), node.id) if bindings else ("free", node.id)
        if isinstance(node, ast.Attribute):
            return ("text", id(scope.function_scope()), "".join(self.text.of(node).split()))
        return None

    def kind(self, node: ast.expr, scope: _Scope) -> Kind:
        if not isinstance(node, ast.Name):
            return Kind.UNKNOWN
        _, bindings = scope.lookup(node.id)
        kinds = set()
        for binding in bindings:
            if binding.kind in ("star_param", "unpack", "tuple_literal"):
                kinds.add(Kind.TUPLE)
            elif binding.kind == "param":
                kinds.add(self.param_kinds.get(id(binding.node), Kind.UNKNOWN))
            else:
                kinds.add(Kind.UNKNOWN)
        if Kind.TUPLE in kinds:
            return Kind.TUPLE
        return Kind.ARRAY if kinds == {Kind.ARRAY} else Kind.UNKNOWN

    # -- evidence -----------------------------------------------------------------------
    def proofs(self) -> set[object]:
        """The Refs the file shows to be Refs (`X.at[...]`, `X[...]`); only SEM002 asks, so lazily."""
        if self.proven is None:
            self.proven = set()
            for subscript in self.scopes.subscripts:
                scope = self.scopes.scope_of[id(subscript)]
                target = subscript.value.value if _is_at(subscript.value) else _read_target(subscript)  # type: ignore[attr-defined]
                proof = self.key(target, scope) if target is not None else None
                if proof is not None:
                    self.proven.add(proof)
                    if isinstance(target, ast.Attribute):
                        self.proof_sites.setdefault(proof, []).append((target, scope))
        return self.proven

    def gather(self) -> None:
        kernels, scoped = [], []
        for call in self.scopes.relevant_calls():
            scope = self.scopes.scope_of[id(call)]
            if self.operation(call) is not None:
                continue
            if self.resolves_to(call.func, scope, PALLAS_CALL):
                keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
                positional = [a for a in call.args if not isinstance(a, ast.Starred)]
                kernel = keywords.get("kernel", positional[0] if positional else None)
                scratch = keywords.get("scratch_shapes")
                grid_spec = keywords.get("grid_spec")
                if scratch is None and isinstance(grid_spec, ast.Call):
                    scratch = next((k.value for k in grid_spec.keywords if k.arg == "scratch_shapes"), None)
                if kernel is not None and scratch is not None:
                    kernels.append((kernel, scratch, scope))
            elif self.resolves_to(call.func, scope, RUN_SCOPED) and call.args:
                scoped.append((call.args[0], _source_order(call)[1:], scope))
        for function in self.scopes.functions:
            scope = self.scopes.scope_of[id(function)]
            for decorator in function.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and self.resolves_to(decorator.func, scope, PARTIAL)
                    and decorator.args
                    and self.resolves_to(decorator.args[0], scope, RUN_SCOPED)
                ):
                    scoped.append((function, _source_order(decorator)[1:], scope))
        for kernel, scratch, scope in kernels:
            self._bind_scratch(kernel, scratch, scope)
        for body, allocations, scope in scoped:
            self._bind_scoped(body, allocations, scope)

    def _function(self, node: ast.AST, scope: _Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if isinstance(node, _FUNCTIONS):
            return node
        if isinstance(node, ast.Call) and node.args and self.resolves_to(node.func, scope, PARTIAL):
            return self._function(node.args[0], scope)
        if isinstance(node, ast.Name):
            _, bindings = scope.lookup(node.id)
            if len(bindings) == 1 and bindings[0].kind == "def":
                return bindings[0].node  # type: ignore[return-value]
        return None

    def _entries(self, node: ast.expr, scope: _Scope) -> list[ast.expr] | None:
        if isinstance(node, ast.Name):
            _, bindings = scope.lookup(node.id)
            if len(bindings) != 1 or bindings[0].kind not in ("assign", "tuple_literal", "read"):
                return None
            node = bindings[0].node.value  # type: ignore[union-attr]
        if not isinstance(node, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in node.elts):
            return None
        return list(node.elts)

    def _allocation(self, node: ast.expr, scope: _Scope) -> Kind:
        if isinstance(node, (ast.Tuple, ast.List)) or (
            isinstance(node, ast.BinOp) and isinstance(node.left, (ast.List, ast.Tuple))
        ):
            return Kind.TUPLE
        if isinstance(node, ast.Call):
            names = self.qualified(node.func, scope)
            if names and all(n.startswith(SEMAPHORE_TYPE_OWNERS) for n in names):
                items = _source_order(node)
                if items:  # libcst's first Arg, whatever its kind: its value is the shape
                    first = items[0]
                    shape = first.value if isinstance(first, (ast.keyword, ast.Starred)) else first
                    if not (isinstance(shape, ast.Tuple) and not shape.elts):
                        return Kind.ARRAY
        return Kind.UNKNOWN

    def _set_kind(self, parameter: ast.arg, kind: Kind) -> None:
        previous = self.param_kinds.get(id(parameter))
        self.param_kinds[id(parameter)] = kind if previous in (None, kind) else Kind.UNKNOWN

    def _bind_scratch(self, kernel: ast.expr, scratch: ast.expr, scope: _Scope) -> None:
        function, entries = self._function(kernel, scope), self._entries(scratch, scope)
        if function is None or not entries:
            return
        parameters = [*function.args.posonlyargs, *function.args.args]
        if function.args.vararg is not None or len(entries) > len(parameters):
            return
        for parameter, entry in zip(parameters[len(parameters) - len(entries) :], entries):
            self._set_kind(parameter, self._allocation(entry, scope))

    def _bind_scoped(self, body: ast.AST, allocations: list[ast.AST], scope: _Scope) -> None:
        function = self._function(body, scope)
        if function is None:
            return
        parameters = [*function.args.posonlyargs, *function.args.args]
        by_name = {p.arg: p for p in [*parameters, *function.args.kwonlyargs]}
        position = 0
        for item in allocations:
            if isinstance(item, ast.Starred) or (isinstance(item, ast.keyword) and item.arg is None):
                return
            if isinstance(item, ast.keyword):
                parameter, value = by_name.get(item.arg), item.value  # type: ignore[arg-type]
            else:
                parameter = parameters[position] if position < len(parameters) else None
                value = item  # type: ignore[assignment]
                position += 1
            if parameter is not None:
                self._set_kind(parameter, self._allocation(value, scope))  # type: ignore[arg-type]

    # -- rules --------------------------------------------------------------------------
    def run(self) -> None:
        self.gather()
        calls = [(call, op) for call in self.scopes.relevant_calls() if (op := self.operation(call)) is not None]
        calls.sort(key=lambda item: (item[0].end_lineno, item[0].end_col_offset))
        renames = self._renames()
        self.semaphore_args = {id(a) for call, operation in calls for a in _semaphore_arguments(operation, call)}
        argument_spans = []
        for call, operation in calls:
            while renames and _end(renames[-1].node) <= _end(call):  # libcst's order: callee, then call
                self._migrate(renames.pop())
            scope = self.scopes.scope_of[id(call)]
            for argument in _semaphore_arguments(operation, call):
                argument_spans.append((self.text.start(argument)[2], self.text.end(argument)[2]))
                self._argument(call, argument, scope)
            if operation.name == "semaphore_wait" and operation.sem_params[0].name == "sem_or_view":
                self._rename_dec(call)
        while renames:
            self._migrate(renames.pop())
        self._check_migrated_imports()
        starts = sorted(self.text.start(call)[2] for call, _ in calls)
        for low, high in argument_spans:
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:
                raise Defer("a semaphore call inside a semaphore argument")

    def _renames(self) -> list[migrations.Reference]:
        """SEM101's references, last first (see semfix/migrations.py)."""
        if "SEM101" not in self.settings.enabled or self.tree is None:
            return []
        try:
            found = list(migrations.references(self.tree, self.scopes, self.qualified))
            self.pallas_alias = migrations.pallas_alias(self.tree)
        except migrations.NeedsLibcst as reason:
            raise Defer(str(reason)) from None
        return sorted(found, key=lambda r: _end(r.node), reverse=True)

    def _migrate(self, reference: migrations.Reference) -> None:
        """As transform.py's `_migrate`; the import edits it would need are the libcst engine's."""
        alias = self.pallas_alias or migrations.DEFAULT_PALLAS_ALIAS
        new_text = f"{alias}.{reference.function}"
        message = f"`{self.text.of(reference.node)}` was deprecated in JAX 0.10 and removed in 0.11; use `{new_text}`"
        if not migrations.alias_usable(reference.scope, alias, added=self.pallas_alias is None):
            self._report("SEM101", reference.node, message + f" (not fixed: `{alias}` means something else here)", None)
            return
        if not self._report("SEM101", reference.node, message, new_text) or not self.fixing:
            return
        self.migrated.append(reference.node)
        start, end = self.text.start(reference.node)[2], self.text.end(reference.node)[2]
        if _LINE_BREAK.search(self.text.text, start, end):
            raise Defer("SEM101: a reference over several lines")
        self.rewrites.append(_Rewrite(None, reference.node, reference.node, [(start, end, new_text)]))  # type: ignore[arg-type]

    def _check_migrated_imports(self) -> None:
        if self.migrated:
            try:
                alias = self.pallas_alias or migrations.DEFAULT_PALLAS_ALIAS
                add = self.pallas_alias is None
                self.import_edits, self.imports = migrations.import_edits(self.tree, self.text.text, self.migrated, alias, add)  # type: ignore[arg-type]
            except migrations.NeedsLibcst as reason:
                raise Defer(str(reason)) from None

    def _rename_dec(self, call: ast.Call) -> None:
        """SEM102: `dec=` is `value=` since JAX 0.7.2, a rename of the keyword's name alone.
        Where `value` is also given (by keyword or as the second positional argument), the
        rename would repeat it: report only."""
        given = any(k.arg == "value" for k in call.keywords)
        given = given or sum(not isinstance(a, ast.Starred) for a in call.args) > 1
        message = "`semaphore_wait(dec=...)` is `semaphore_wait(value=...)` since JAX 0.7.2"
        for keyword in call.keywords:
            if keyword.arg != "dec":
                continue
            name = ast.Name("dec", lineno=keyword.lineno, col_offset=keyword.col_offset)
            name.end_lineno, name.end_col_offset = keyword.lineno, keyword.col_offset + len("dec")
            if given:
                self._report("SEM102", name, message + " (not fixed: `value` is also given)", None)
            elif self._report("SEM102", name, message, "value"):
                start = self.text.start(name)[2]
                edit = (start, start + len("dec"), "value")
                self.rewrites.append(_Rewrite(call, keyword.value, keyword.value, [edit], keyword=keyword))

    def _report(
        self,
        code: str,
        node: ast.AST,
        message: str,
        replacement: str | None,
        *,
        safe: bool = True,
        span: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None,
    ) -> bool | None:
        """Record a finding (at `node`, or at `span`: (line, 0-based column, offset) twice);
        whether its fix is accepted, None if the rule is off or silenced there."""
        (line, column, start), (end_line, end_column, end) = span or (self.text.start(node), self.text.end(node))
        if code not in self.settings.enabled or (
            self.suppressions and suppressed(self.suppressions, code, (line, end_line))
        ):
            return None
        if self.held is not None and replacement is not None:
            message, replacement = f"{message} (not fixed: {self.held})", None
        finding, accepted = decide(
            code, (line, column + 1, end_line, end_column + 1), message, self.text.text[start:end], replacement,
            safe=safe, unsafe_fixes=self.settings.unsafe_fixes, apply_fixes=True,
        )
        self.findings.append(finding)
        return accepted

    def _silenced(self, code: str, node: ast.AST) -> bool:
        """Is there a `# semfix: ignore` for `code` on the node's first or last line?"""
        lines = (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
        return bool(self.suppressions) and suppressed(self.suppressions, code, lines)  # type: ignore[arg-type]

    def _cut(self, subscript: ast.Subscript, call: ast.Call, floor: int | None = None) -> tuple[int, int] | None:
        """(where the text to drop or `.at` starts, just past `]`), as libcst would cut it; None
        where libcst would not cut: a comment in the subscript outside its value (in the
        brackets, before them, or in the subscript's own parentheses, which start at or after
        `floor`, by default the call's own), or a line break between the value and `[` that is
        not a backslash continuation. Line breaks inside the brackets are cut with them."""
        text = self.text.text
        value_end, end = self.text.end(subscript.value)[2], self.text.end(subscript)[2]
        gap = _AFTER_VALUE.match(text, value_end)
        if gap is None:
            raise Defer("unexpected text before the bracket")
        if not _SIMPLE_WHITESPACE.match(gap.group("after")):
            return None
        comments = self._comments(call)
        if comments:
            lbracket = gap.end() - 1
            if any(lbracket <= c < end for c in comments) or self._comment_in_parentheses(subscript, call, floor, comments):
                return None
        return gap.start("after"), end

    def _comments(self, call: ast.Call) -> list[int]:
        """Where each comment inside the call starts; the tokenizer runs only if it holds a `#`."""
        if id(call) not in self.comments:
            start, end = self.text.start(call)[2], self.text.end(call)[2]
            source = self.text.text[start:end]
            found = []
            if "#" in source:
                starts = line_starts(source)
                for token in _tokens(source):
                    if token.type == tokenize.COMMENT:
                        found.append(start + starts[token.start[0] - 1] + token.start[1])
            self.comments[id(call)] = found
        return self.comments[id(call)]

    def _comment_in_parentheses(self, subscript: ast.Subscript, call: ast.Call, floor: int | None, comments: list[int]) -> bool:
        """Is a comment inside the parentheses around the subscript itself (libcst counts them
        as the subscript's): after the outermost `(` that follows `floor`, before its `)`?"""
        text = self.text.text
        if floor is None:  # just past the call's own `(`
            floor = _OPEN_PAREN.match(text, self.text.end(call.func)[2]).end()  # type: ignore[union-attr]
        start, end = self.text.start(subscript)[2], self.text.end(subscript)[2]
        position, outermost, depth = start, start, 0
        while position > floor:  # back over blanks, comments and `(`
            index = bisect.bisect_right(comments, position - 1) - 1
            if index >= 0 and not _LINE_BREAK.search(text, comments[index], position):
                position = comments[index]  # inside a comment: skip it
                continue
            char = text[position - 1]
            if char == "(":
                outermost, depth = position - 1, depth + 1
            elif char not in " \t\f\r\n\\":
                break
            position -= 1
        if not depth:
            return False
        close = end
        for _ in range(depth):
            close = _CLOSE_PAREN.match(text, close).end()  # type: ignore[union-attr]
        return any(outermost <= c < start or end <= c < close for c in comments)

    def _argument(self, call: ast.Call, original: ast.expr, scope: _Scope, *, carried: bool = True) -> None:
        if isinstance(original, ast.NamedExpr):
            self._walrus(call, original, scope)
            return
        if carried and isinstance(original, ast.Name):
            _, bindings = scope.lookup(original.id)
            if any(b.kind == "read" for b in bindings) and self._carried(call, original, bindings):
                return
        if isinstance(original, ast.Subscript) and isinstance(original.slice, ast.Tuple):
            if any(isinstance(e, ast.Starred) for e in original.slice.elts) or (
                len(original.slice.elts) == 1 and isinstance(original.slice.elts[0], ast.Constant)
            ):
                raise Defer("an unusual subscript")
        whole = _read_target(original)
        if _has_slice(original) or self.kind(original, scope) is Kind.ARRAY or (
            whole is not None and self.kind(whole, scope) is Kind.ARRAY
        ):
            message = messages.non_scalar(self.text.of(original), whole_array=not _has_slice(original))
            self._report("SEM004", original, message, None)
            return
        rewrite: _Rewrite | None = None
        current = original
        if whole is not None:
            innermost = whole
            while _read_target(innermost) is not None:
                innermost = _read_target(innermost)  # type: ignore[assignment]
            if innermost is not whole:  # `X[...][...]`: stripping one read would leave another
                message = messages.value_read(self.text.of(original), self.text.of(innermost))
                self._report("SEM001", original, message + messages.NESTED_READ_SUFFIX, None)
                return
            cuts = self._cut(original, call)  # type: ignore[arg-type]
            if cuts is None:
                message = messages.value_read(self.text.of(original), self.text.of(whole))
                self._report("SEM001", original, message + messages.COMMENT_SUFFIX, None)
                return
            cut, end = cuts
            start = self.text.start(original)[2]
            suggestion = self.text.text[start:cut]
            if not self._report("SEM001", original, messages.value_read(self.text.of(original), suggestion), suggestion):
                return
            rewrite = _Rewrite(call, original, whole, [(cut, end, "")])  # `whole` is never changed
            current = whole
        if _element_read(current):
            floor = self.text.start(original)[2] if current is not original else None
            rewrite = self._element(call, current, scope, rewrite, floor)  # type: ignore[arg-type]
        if rewrite is not None:
            self.rewrites.append(rewrite)

    def _element(
        self, call: ast.Call, element: ast.Subscript, scope: _Scope, previous: _Rewrite | None, floor: int | None
    ) -> _Rewrite | None:
        base = element.value
        kind = self.kind(base, scope)
        if kind is Kind.TUPLE:
            return previous
        key = self.key(base, scope)
        safe = kind is Kind.ARRAY or (key is not None and key in self.proofs())
        if safe and isinstance(base, ast.Attribute):  # the text matches: both must keep their Ref
            sites = self.proof_sites[key]
            safe = self.unstable(base, scope) is None and any(self.unstable(p, s) is None for p, s in sites)
        cuts = self._cut(element, call, floor)
        if cuts is None:
            return previous
        cut = cuts[0]
        insert = (cut, cut, ".at")
        start, end = self.text.start(element)[2], self.text.end(element)[2]
        view = self.text.text[start:cut] + ".at" + self.text.text[cut:end]
        message = messages.element_read(
            self.text.of(element), view, safe=safe, array=kind is Kind.ARRAY, base=self.text.of(base)
        )
        replacement = copy.deepcopy(element)
        replacement.value = ast.Attribute(value=replacement.value, attr="at", ctx=ast.Load())
        if previous is not None:
            if not (safe or self.settings.unsafe_fixes) or "SEM002" not in self.settings.enabled or self._silenced("SEM002", element):
                self._report("SEM002", element, message, view, safe=safe)
                return previous
            edits = sorted([*previous.edits, insert])
            root_start = self.text.start(previous.argument)[2]
            suggestion = apply_edits(self.text.text, root_start, self.text.end(previous.argument)[2], edits)
            last = self.findings[-1]
            self.findings[-1] = replace(
                last, replacement=suggestion, message=messages.read_then_view(last.message, suggestion, safe=safe)
            )
            return _Rewrite(call, previous.argument, replacement, edits)
        if self._report("SEM002", element, message, view, safe=safe):
            return _Rewrite(call, element, replacement, [insert])
        return None

    # -- whether a Ref expression keeps its value (SEM002's evidence, SEM003) --------------------
    def _tracking(self) -> _Tracking:
        """The accesses to every name: a plain scope builder records none; `_analyse_tree` then
        builds a tracking one, and runs again."""
        if not isinstance(self.scopes, _Tracking):
            raise _NeedsAccesses
        return self.scopes

    def unstable(self, node: ast.expr, scope: _Scope) -> str | None:
        """Why `node` may not name the same Ref everywhere in its scope; None when it must.

        Evidence about a Ref expression (SEM002's proof, SEM003's carried read) holds only
        while its base name, each attribute in its chain and each name in its indices keep
        their values. Flow is not followed: a name bound twice anywhere in the scope, or a
        chain written, deleted, called a method on or handed away anywhere its base name is
        seen (nested functions and later loop iterations included), voids the evidence.
        """
        for root, top, watched in _chains(node):
            _, bindings = scope.lookup(root.id)
            if len(bindings) > 1:
                return f"`{root.id}` is reassigned, so the Ref could differ at the use"
            if not watched:
                continue
            if not bindings:
                return f"`{self._code(top)}` may be changed outside this file"
            for how, changed, where in self._changes_of(root.id, scope):
                through = watched[: len(changed)] == changed
                if how == "write" and through:
                    return f"`{self._code(top)}` may be rebound: `{self._code(where)}` is assigned or deleted"
                if how == "handed" and through and len(changed) < len(watched):
                    return f"`{self._code(top)}` may be rebound by other code given `{self._code(where)}`"
        return None

    def _code(self, node: ast.AST) -> str:
        return " ".join(self.text.of(node).split())

    def _changes_of(self, name: str, scope: _Scope) -> list[tuple[str, Steps, ast.expr]]:
        """Every place the name's value, or a chain under it, may change: ("write", chain) for a
        store or `del` target, ("handed", object) for an object given to code that may change
        anything under it: a call's receiver, an argument, a container stored into, or any
        other use that is not an attribute or subscript of it. With each, the expression there."""
        tracking = self._tracking()
        _, bindings = scope.lookup(name)
        if id(bindings) not in self._changes:
            found: list[tuple[str, Steps, ast.expr]] = []
            for access in tracking.references(name, scope):
                steps, top = access.steps, access.top
                if access.context in (ast.Store, ast.Del):
                    found.append(("write", steps, top))
                    if steps and steps[-1] is None:  # `X[i] = v` runs X's own code
                        found.append(("handed", steps[:-1], top.value))  # type: ignore[attr-defined]
                elif access.called and steps:
                    found.append(("handed", steps[:-1], top.value))  # type: ignore[attr-defined]
                else:
                    found.append(("handed", steps, top))
            self._changes[id(bindings)] = found
        return self._changes[id(bindings)]

    # -- an assignment expression in a semaphore argument -----------------------------------------
    def _walrus(self, call: ast.Call, original: ast.NamedExpr, scope: _Scope) -> None:
        """`f(s := sem[...])`: the rules apply to the value. The fix makes `s` hold the Ref
        instead of the value read, so it is applied only when nothing can read `s`."""
        held, count = self.held, len(self.rewrites)
        self.held = held or self._walrus_blocker(original.target, scope)
        try:
            self._argument(call, original.value, scope, carried=False)
        finally:
            self.held = held
        if len(self.rewrites) > count:
            inner = self.rewrites.pop()
            walrus = ast.NamedExpr(target=original.target, value=inner.replacement)
            self.rewrites.append(_Rewrite(call, original, walrus, inner.edits))

    def _walrus_blocker(self, target: ast.Name, scope: _Scope) -> str | None:
        """Why `s` in `s := ...` may be read; by spelling, so `global s` and reads anywhere in
        the function, nested ones and earlier loop iterations included, all count."""
        if scope.kind != "function":
            return f"`{self.text.of(target)}` is not a local name, and would hold the Ref instead of the value"
        if _spelled(scope.node, target.id) > 1:  # type: ignore[arg-type]
            return f"`{target.id}` is used elsewhere, and would hold the Ref instead of the value"
        return None

    # -- SEM003: a value carried through a variable -------------------------------------------------
    def _carried(self, call: ast.Call, use: ast.Name, bindings: list[_Binding]) -> bool:
        """`v = X[...]` then `f(v)`: pass `X`, and drop the assignment with its line. False when
        no read plans for `v` (the other rules then look at it)."""
        plan = next((p for b in reversed(bindings) if b.kind == "read" and (p := self._plan(b)) is not None), None)
        if plan is None:
            return False
        ref_text = self.text.of(plan.ref)
        decision = self._decide(plan)
        message = (
            f"`{use.id}` holds a value read from the semaphore Ref at line {plan.assign.lineno}; "
            f"pass the Ref `{messages.one_line(ref_text)}`"
        )
        if plan.blocker is not None:
            self._report("SEM003", use, f"{message} (not fixed: {plan.blocker})", None)
        elif decision is None:
            self._report("SEM003", use, f"{message} (not fixed: a use or the assignment is silenced)", None)
        elif self._report("SEM003", use, message, ref_text) and decision:
            start, end = self.text.start(use)[2], self.text.end(use)[2]
            self.rewrites.append(_Rewrite(call, use, copy.deepcopy(plan.ref), [(start, end, ref_text)]))
        return True

    def _plan(self, binding: _Binding) -> _Carried | None:
        """The plan for one `v = X[...]`, shared by its uses; None if no semaphore argument uses it."""
        if id(binding) not in self.plans:
            tracking = self._tracking()
            assign: ast.Assign = binding.node  # type: ignore[assignment]
            scope, name = tracking.scope_of_read[id(assign)], assign.targets[0].id  # type: ignore[attr-defined]
            references = [] if name in scope.declared else tracking.references(name, scope)
            end = (assign.end_lineno, assign.end_col_offset)
            uses = [  # as libcst links them: a read before the assignment, in its scope, is not its use
                a.name
                for a in references
                if id(a.name) in self.semaphore_args and (a.scope is not scope or (a.name.lineno, a.name.col_offset) >= end)
            ]
            plan = None
            if uses:
                body = _body_of(tracking.tree, assign)
                plan = _Carried(assign, assign.value.value, uses, body, None)  # type: ignore[attr-defined]
                plan.blocker = self._blocker(plan, scope, name, references)
            self.plans[id(binding)] = plan
        return self.plans[id(binding)]

    def _blocker(self, plan: _Carried, scope: _Scope, name: str, references: list[_Access]) -> str | None:
        """Why the rewrite is not safe; None when it is."""
        assign, ref = plan.assign, plan.ref
        if len(scope.bindings[name]) > 1:
            return f"`{name}` is assigned more than once"
        if len(plan.uses) != len(references):
            return f"`{name}` is also used for something else"
        if any(access.scope is not scope for access in references):
            return f"`{name}` is used in a nested scope"
        if plan.body is None or not _alone_on_its_lines(assign, self.text, _SOLE_END):
            return "the assignment shares its line with other statements"
        if self._commented(assign, plan.body):
            return "a comment on the assignment would be lost"
        if any(isinstance(n, ast.Call) for n in ast.walk(ref)) or not isinstance(ref, (ast.Name, ast.Attribute, ast.Subscript)):
            return "the Ref expression is not a plain name or view"
        if isinstance(ref, ast.Subscript) and not _is_at(ref.value):
            return "the Ref expression reads an element"
        rebound = self.unstable(ref, scope)
        if rebound is not None:
            return rebound
        first, last = plan.body[0], plan.body[-1]
        low, high = (_first_line(first), first.col_offset), (last.end_lineno, last.end_col_offset)
        if any(not low <= (u.lineno, u.col_offset) <= high for u in plan.uses):
            return f"`{name}` is assigned conditionally"
        return None

    def _commented(self, assign: ast.Assign, body: list[ast.stmt]) -> bool:
        """A comment on the assignment's lines, or on the lines just above it that libcst
        gives it (those not indented deeper than it after a block, which that block keeps)."""
        text, starts = self.text.text, self.text.starts
        end = starts[assign.end_lineno] if assign.end_lineno < len(starts) else len(text)  # type: ignore[operator]
        own = text[starts[assign.lineno - 1] : end]
        if "#" in own and any(t.type == tokenize.COMMENT for t in _tokens(own)):
            return True
        index = next(i for i, s in enumerate(body) if s is assign)
        previous = body[index - 1] if index else None
        floor = previous.end_lineno if previous is not None else 0
        footer = previous is not None and hasattr(previous, "body")  # a block keeps deeper comments
        above: list[int] = []  # the indentation of each comment line just above, up to code
        for number in range(assign.lineno - 1, floor, -1):  # type: ignore[operator]
            line = self.text.line(number)
            stripped = line.lstrip(" \t")
            if stripped.startswith("#"):
                above.append(len(line) - len(stripped))
            elif stripped.strip():
                break
        for indent in reversed(above):  # from the top: a block keeps the deeper ones
            footer = footer and indent > assign.col_offset
            if not footer:
                return True
        return False

    def _decide(self, plan: _Carried) -> bool | None:
        """Decided once per assignment: all its uses are rewritten and it is removed, or none.
        True: rewrite; False: report only; None: the rule is off or silenced here."""
        if plan.decision is not _UNDECIDED:
            return plan.decision  # type: ignore[return-value]
        plan.decision = False
        if plan.blocker is None:
            lines = {u.lineno for u in plan.uses} | {plan.assign.lineno}
            if "SEM003" not in self.settings.enabled or (
                self.suppressions and suppressed(self.suppressions, "SEM003", lines)
            ):
                plan.decision = None
                return None
            assign, starts, text = plan.assign, self.text.starts, self.text.text
            first, last = assign.lineno, assign.end_lineno
            start = (first, 0, starts[first - 1])
            if last >= len(starts):  # type: ignore[operator]  # the last line, without a line break
                end = (last, len(text) - starts[last - 1], len(text))  # type: ignore[index]
            else:
                end = (last + 1, 0, starts[last])  # type: ignore[operator]
            message = f"`{messages.one_line(self.text.of(assign))}` only carried the read to semaphore arguments; removed with them"
            applied = self._report("SEM003", assign, message, "", span=(start, end))  # type: ignore[arg-type]
            if applied:
                self.removals.append((plan.body, assign, (start[2], end[2], "")))  # type: ignore[arg-type]
            plan.decision = bool(applied)
        return plan.decision  # type: ignore[return-value]


class _NeedsAccesses(Exception):
    """The engine needs the accesses `_Tracking` records: build them and run again."""


_UNDECIDED = object()


@dataclass(eq=False)
class _Carried:
    """`v = X[...]` whose `v` reaches semaphore arguments (SEM003)."""

    assign: ast.Assign
    ref: ast.expr  # X, the Ref the value was read from
    uses: list[ast.Name]
    body: list[ast.stmt] | None  # the statement list holding the assignment
    blocker: str | None  # why the rewrite is not safe; None when it is
    decision: object = _UNDECIDED


# After a statement alone on its lines: an optional `;`, then a comment.
_SOLE_END = re.compile(r"[ \t]*(?:;[ \t]*)?(?:#[^\r\n]*)?(?:\r\n?|\n)?\Z")


def _body_of(tree: ast.Module, statement: ast.stmt) -> list[ast.stmt] | None:
    """The statement list that holds `statement` itself; None if it shares a line with a
    statement that holds it (`if x: v = ...`)."""
    chain = _enclosing(tree, statement.lineno, {})
    if not chain or chain[-1] is not statement:
        return None
    owner: ast.AST = chain[-2] if len(chain) > 1 else tree
    lists = [getattr(owner, name, None) for name in ("body", "orelse", "finalbody")]
    lists += [clause.body for clause in (*getattr(owner, "handlers", ()), *getattr(owner, "cases", ()))]
    return next((body for body in lists if isinstance(body, list) and any(s is statement for s in body)), None)


def _chains(node: ast.expr) -> Iterator[tuple[ast.Name, ast.expr, Steps]]:
    """Each name in `node`, in source order, with the part of its attribute and subscript
    chain that lies inside `node`: (`self`, `self.sems.at[i]`, ("sems", "at", None)), then (`i`, `i`, ())."""
    parents: dict[int, ast.AST] = {}
    stack: list[ast.AST] = [node]
    while stack:
        current = stack.pop()
        children = list(ast.iter_child_nodes(current))
        for child in children:
            parents[id(child)] = current
        stack.extend(reversed(children))
        if isinstance(current, ast.Name):
            steps: list[str | None] = []
            top: ast.expr = current
            while top is not node:
                parent = parents[id(top)]
                if isinstance(parent, ast.Attribute) and parent.value is top:
                    steps.append(parent.attr)
                elif isinstance(parent, ast.Subscript) and parent.value is top:
                    steps.append(None)
                else:
                    break
                top = parent  # type: ignore[assignment]
            yield current, top, tuple(steps)


def _spelled(node: ast.AST, name: str) -> int:
    """How often `name` is written as a name anywhere in `node`, as libcst counts its Name
    nodes: reads and stores, attributes, keywords, parameters, definitions, imports,
    `global` and `nonlocal`, `except ... as`, and capture patterns."""
    count = 0
    for current in ast.walk(node):
        if isinstance(current, ast.Name):
            count += current.id == name
        elif isinstance(current, ast.Attribute):
            count += current.attr == name
        elif isinstance(current, (ast.keyword, ast.arg)):
            count += current.arg == name
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            count += current.name == name
        elif isinstance(current, (ast.Global, ast.Nonlocal)):
            count += current.names.count(name)
        elif isinstance(current, ast.alias):
            count += current.name.split(".").count(name) + (current.asname == name)
        elif isinstance(current, ast.ImportFrom):
            count += (current.module or "").split(".").count(name)
        elif isinstance(current, (ast.MatchAs, ast.MatchStar)):
            count += current.name == name
        elif isinstance(current, ast.MatchMapping):
            count += current.rest == name
        elif isinstance(current, ast.MatchClass):
            count += current.kwd_attrs.count(name)
        elif type(current).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
            count += getattr(current, "name", None) == name
    return count


def _suppressions(text: str) -> Suppressions:
    """The `# semfix: ignore` comments, by line. Only comments count, not strings, so the
    tokenizer decides; it runs only when the text holds such a comment at all."""
    found: Suppressions = {}
    if "semfix" in text and _IGNORE_TEXT.search(text):
        for token in _tokens(text):
            if token.type == tokenize.COMMENT and "semfix" in token.string:
                note_suppression(found, token.start[0], token.string)
    return found


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    """Python's tokens, on lines numbered as `ast` numbers them: a lone CR ends a line there,
    while the tokenize module splits lines at `\n` only."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(_LONE_CR.sub("\n", text)).readline))
    except (tokenize.TokenError, SyntaxError) as error:
        raise Defer(f"the tokenizer: {error}") from None


def _source_order(call: ast.Call) -> list[ast.AST]:
    """Positional and keyword arguments in the order they are written, as libcst lists them."""
    items: list[ast.AST] = [*call.args, *call.keywords]
    return sorted(items, key=lambda a: (a.lineno, a.col_offset))  # type: ignore[attr-defined]


def _semaphore_arguments(operation: Operation, call: ast.Call) -> list[ast.expr]:
    by_position = {p.position for p in operation.sem_params if p.position is not None}
    by_name = {p.name for p in operation.sem_params}
    found: list[ast.expr] = []
    position: int | None = 0
    for item in _source_order(call):
        if isinstance(item, ast.keyword):
            if item.arg in by_name:
                found.append(item.value)
        elif isinstance(item, ast.Starred):
            position = None
        elif position is not None:
            if position in by_position:
                found.append(item)  # type: ignore[arg-type]
            position += 1
    return found


def _decode(source: str | bytes) -> tuple[str, str]:
    if isinstance(source, str):
        return source, "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError) as error:
        raise Defer(f"encoding: {error}") from None


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined,return-value]


def _replace_in_tree(rewrite: _Rewrite) -> None:
    if rewrite.keyword is not None:
        rewrite.keyword.arg = "value"
        return
    call = rewrite.call
    for index, argument in enumerate(call.args):
        if argument is rewrite.argument:
            call.args[index] = rewrite.replacement
            return
    for keyword in call.keywords:
        if keyword.value is rewrite.argument:
            keyword.value = rewrite.replacement
            return
    raise Defer("rewrite target not found")


@dataclass(frozen=True)
class QuickResult:
    text: str
    encoding: str
    findings: tuple[Finding, ...]


def analyse(source: str | bytes, settings: Settings, apply_fixes: bool) -> QuickResult:
    """The new text and findings, exactly as the libcst engine would give them, or Defer."""
    text, encoding = _decode(source)
    round_trips = isinstance(source, str) or not apply_fixes or text.encode(encoding) == source
    tree = _parse_whole(text)
    if not round_trips:
        raise Defer("the encoding does not round-trip")
    return _analyse_tree(text, tree, encoding, settings, apply_fixes)


def _parse_whole(text: str) -> ast.Module:
    """The whole file's tree; the parser's complaints as SourceError."""
    try:
        return _parse(text)
    except (RecursionError, MemoryError):
        raise SourceError("too deeply nested for the parser") from None  # libcst would crash
    except ValueError as error:  # NUL bytes, on Python before 3.12
        raise SourceError(f"not Python source: {error}") from None
    except SyntaxError as error:
        if any(word in str(error.msg) for word in ("too many nested", "too complex", "statically nested")):
            raise SourceError(f"too deeply nested for the parser: {error.msg}") from None
        raise syntax_error(text, error) from None


def _analyse_tree(
    text: str,
    tree: ast.Module,
    encoding: str,
    settings: Settings,
    apply_fixes: bool,
) -> QuickResult:
    scopes = _ScopeBuilder()
    scopes.build(tree)
    lines = _Text(text)
    engine = _Engine(lines, scopes, settings)
    if "SEM101" in settings.enabled and "tpu" in text and _MIGRATION_TEXT.search(text):
        engine.tree, engine.fixing = tree, apply_fixes
    try:
        engine.run()
    except _NeedsAccesses:  # few files ask whether a Ref expression keeps its value
        scopes = _Tracking()
        scopes.build(tree)
        tree_for_migrations, fixing = engine.tree, engine.fixing
        engine = _Engine(lines, scopes, settings)
        engine.tree, engine.fixing = tree_for_migrations, fixing
        engine.run()
    findings = engine.findings
    if not apply_fixes:
        return QuickResult(text, encoding, tuple(replace(f, applied=False) for f in findings))
    if not engine.rewrites:
        return QuickResult(text, encoding, tuple(findings))
    edits = sorted([
        *(edit for rewrite in engine.rewrites for edit in rewrite.edits),
        *(r[2] for r in engine.removals),
        *engine.import_edits,
    ])
    new_text = apply_edits(text, 0, len(text), edits)
    if engine.migrated:
        _prove_migrated(text, new_text, encoding, findings, engine.imports, settings)
        return QuickResult(new_text, encoding, tuple(findings))
    for rewrite in engine.rewrites:
        _replace_in_tree(rewrite)
    for body, statement, _ in engine.removals:  # SEM003: the line goes; the proof compares whole trees
        body.remove(statement)
    settled = not engine.removals and _settles_by_construction(findings, engine.rewrites)
    _prove(tree, engine.text, new_text, edits, encoding, settings, settled=settled)
    return QuickResult(new_text, encoding, tuple(findings))


def _parse(text: str) -> ast.Module:
    """CPython's parser, without the SyntaxWarnings it prints about the user's code."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


class QuickSafetyError(Exception):
    """The quick engine's rewrite failed its proof."""


def _settles_by_construction(findings: list[Finding], rewrites: list[_Rewrite]) -> bool:
    """Can a second pass apply nothing, whatever else it finds? Cheaper than running it.

    Rewrites add and remove no binding, call or allocation, so a second pass resolves the same
    calls to the same operations and gives each untouched argument the same verdict, except
    that new `.at` views may prove a Ref and turn an unsafe SEM002 into a safe one. Each
    rewritten argument is now a Ref expression; only a read, an element read or a slice
    left in it could draw a fix. SEM003 removes a binding and a read: not settled here.
    """
    if any(f.rule == "SEM002" and not f.applied for f in findings):
        return False
    replacements = [
        r.replacement.value if isinstance(r.replacement, ast.NamedExpr) else r.replacement
        for r in rewrites
        if r.keyword is None
    ]
    return not any(_read_target(r) is not None or _element_read(r) or _has_slice(r) for r in replacements)


def _prove(
    expected: ast.Module,
    old: _Text,
    new_text: str,
    edits: list[tuple[int, int, str]],
    encoding: str,
    settings: Settings,
    *,
    settled: bool = False,
) -> None:
    """The new text must compile, parse to exactly the declared tree, and settle on a second pass.

    CPython compiles the whole new text: checks such as a repeated keyword, a `return` outside
    a function or a `nonlocal` without a binding need more than one statement, and parsing
    alone misses them.

    Edits change text only inside the statements that hold them; when none removes a line
    break (cutting brackets that span lines does, and then the whole trees are compared),
    around each edit the innermost statement with its lines to itself is re-parsed
    alone (as the body of an `if 1:` when indented) and compared node for node with what it
    should be. It starts a logical line, where the tokenizer is clean, and parses whole, so it
    leaves the tokenizer clean for the text after it, which is unchanged: the whole new text
    parses to the declared tree. When the new text skims clean, no rule can fire on it, so a
    second pass cannot change it; nor when the first pass settles it by construction (see
    `_settles_by_construction`); otherwise the whole file is parsed and analysed again.
    """
    prove_compiles(old.text, new_text, QuickSafetyError)
    changed_lines = {old.line_of(start) for start, _, _ in edits}
    shifted = any(_LINE_BREAK.search(old.text, start, end) for start, end, _ in edits)  # cut brackets
    if shifted or not _prove_statements(expected, old, new_text, edits, changed_lines):
        actual = _prove_whole(expected, new_text, changed_lines, shifted=shifted)
    elif settled or (not (settings.enabled & MIGRATIONS) and clears(new_text.encode("utf-8", "surrogatepass"))):
        return
    else:
        actual = _prove_whole(expected, new_text, changed_lines)
    try:
        again = _analyse_tree(new_text, actual, encoding, settings, apply_fixes=True)
    except Defer:
        return  # the libcst engine's own idempotency check covers files it owns
    if again.text != new_text or any(f.applied for f in again.findings):
        raise QuickSafetyError("a second run would change the rewritten source again")


def _prove_migrated(
    text: str, new_text: str, encoding: str, findings: list[Finding], imports: migrations.ImportChanges | None, settings: Settings
) -> None:
    """SEM101 renames an expression to another: equivalence.py's whole-tree check of the
    declared rewrites (which compiles the new text), then a second pass that changes nothing."""
    from semfix.equivalence import check_rewrite
    from semfix.errors import SafetyError

    try:
        check_rewrite(text, new_text, findings, imports)  # type: ignore[arg-type]
    except SafetyError as error:
        raise QuickSafetyError(str(error)) from None
    try:
        again = analyse(new_text, settings, apply_fixes=True)
    except Defer:
        return  # the libcst engine's own idempotency check covers files it owns
    if again.text != new_text or any(f.applied for f in again.findings):
        raise QuickSafetyError("a second run would change the rewritten source again")


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _prove_statements(
    expected: ast.Module, old: _Text, new_text: str, edits: list[tuple[int, int, str]], changed_lines: set[int]
) -> bool:
    """Re-parse, around each edit, the innermost statement that has its lines to itself; False
    if that cannot settle it."""
    edit_starts, shifts, shift = [0], [0], 0
    for start, end, replacement in edits:  # sorted; none crosses a line break
        shift += len(replacement) - (end - start)
        edit_starts.append(start + 1)
        shifts.append(shift)

    def new_start(line: int) -> int:
        """Where a line starts in the new text: where it started, moved by the edits before it."""
        if line > len(old.starts):
            return len(new_text)
        start = old.starts[line - 1]
        return start + shifts[bisect.bisect_right(edit_starts, start) - 1]

    proven: set[int] = set()
    bodies: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    for line in sorted(changed_lines):
        for statement in reversed(_enclosing(expected, line, bodies)):
            if id(statement) in proven:
                break
            if _alone_on_its_lines(statement, old) and _parses_back(statement, new_text, new_start):
                proven.add(id(statement))
                break
        else:
            return False
    return True


def _enclosing(module: ast.Module, line: int, bodies: dict[int, tuple[list[ast.stmt], list[int]]]) -> list[ast.stmt]:
    """The statements whose lines hold `line`, outermost first. `bodies` caches, by owner, the
    statements directly inside it, in order, with their first lines."""
    chain: list[ast.stmt] = []
    owner: ast.AST = module
    while True:
        if id(owner) not in bodies:
            inner = [*getattr(owner, "body", ()), *getattr(owner, "orelse", ()), *getattr(owner, "finalbody", ())]
            for clause in (*getattr(owner, "handlers", ()), *getattr(owner, "cases", ())):
                inner += clause.body
            inner.sort(key=_first_line)
            bodies[id(owner)] = (inner, [_first_line(s) for s in inner])
        body, firsts = bodies[id(owner)]
        index = bisect.bisect_right(firsts, line) - 1
        if index < 0 or body[index].end_lineno < line:  # type: ignore[operator]
            return chain
        owner = body[index]
        chain.append(owner)  # type: ignore[arg-type]


_TRAILER = re.compile(r"[ \t]*(?:#[^\r\n]*)?(?:\r\n?|\n)?\Z")


def _alone_on_its_lines(statement: ast.stmt, old: _Text, trailer: re.Pattern[str] = _TRAILER) -> bool:
    """Does the statement start its first line (after indentation, or `@`) and end its last
    (before a comment), and not continue a line before it with a backslash?"""
    decorators = getattr(statement, "decorator_list", [])
    head = min([statement, *decorators], key=lambda node: node.lineno)
    first, last = head.lineno, statement.end_lineno
    if first > 1 and old.line(first - 1).rstrip(" \t\r\n").endswith("\\"):
        return False
    prefix = old.line(first)[: old.column(first, head.col_offset)]
    if prefix.strip(" \t") != ("@" if head is not statement else ""):
        return False
    ending = old.line(last)[old.column(last, statement.end_col_offset) :]  # type: ignore[arg-type]
    return trailer.match(ending) is not None


def _parses_back(statement: ast.stmt, new_text: str, new_start: Callable[[int], int]) -> bool:
    """Do the statement's lines of the new text parse, alone, to exactly the declared statement?
    An indented statement is parsed as the body of an `if 1:`."""
    first, last = _first_line(statement), statement.end_lineno
    lines = new_text[new_start(first) : new_start(last + 1)]  # type: ignore[operator]
    indented = lines[:1] in (" ", "\t")
    try:
        tree = _parse("if 1:\n" + lines if indented else lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # e.g. a `__future__` import that changes the grammar: parse more
    body = tree.body[0].body if indented and len(tree.body) == 1 else tree.body  # type: ignore[attr-defined]
    return len(body) == 1 and _same_tree(body[0], statement)


def _same_tree(first: object, second: object) -> bool:
    """`ast.dump(first) == ast.dump(second)` (positions ignored), without building the strings."""
    stack = [(first, second)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.AST):
            stack.extend((getattr(a, name, None), getattr(b, name, None)) for name in a._fields)
        elif type(a) is list:
            if len(a) != len(b):  # type: ignore[arg-type]
                return False
            stack.extend(zip(a, b))  # type: ignore[call-overload]
        elif a != b and a == a:  # a NaN constant is the same NaN
            return False
    return True


def _prove_whole(expected: ast.Module, new_text: str, changed_lines: set[int], *, shifted: bool = False) -> ast.Module:
    """The new text parses to the declared tree: compared at the edited statements, or whole
    when an edit removed line breaks and so moved every line after it."""
    try:
        actual = _parse(new_text)
    except SyntaxError as error:
        raise QuickSafetyError(f"the rewritten source does not parse: {error}") from None
    if shifted:
        if not _same_tree(expected, actual):
            raise QuickSafetyError("the rewritten source differs from the declared rewrites")
        return actual
    if len(actual.body) != len(expected.body):
        raise QuickSafetyError("the rewritten source differs from the declared rewrites")
    edited = sorted(changed_lines)
    for old, new in zip(expected.body, actual.body):
        span = (old.lineno, old.end_lineno, old.col_offset)
        if span != (new.lineno, new.end_lineno, new.col_offset):
            raise QuickSafetyError("the rewritten source differs from the declared rewrites")
        first = bisect.bisect_left(edited, _first_line(old))  # decorators come first
        if first < len(edited) and edited[first] <= old.end_lineno:  # type: ignore[operator]
            if not _same_tree(old, new):
                raise QuickSafetyError("the rewritten source differs from the declared rewrites")
    return actual
