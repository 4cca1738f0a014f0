"""The quick engine: the same rules on the stdlib `ast`, for files it can fully account for.

libcst with scope metadata runs at a few thousand lines a second; CPython's own parser is two
orders of magnitude faster. This engine resolves imports and scopes on `ast`, applies SEM001,
SEM002 and SEM004 as text edits, and proves each result: the new text must parse to exactly
the tree the rewrites declare, and a second pass must find nothing to fix. Whenever a file
holds anything it does not model (values carried through variables, the migrations, star
imports), it raises `Defer` and the libcst engine takes the file. Syntax this Python cannot
parse is refused with a SourceError (semfix/syntax.py). Its output
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

from semfix import messages
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
        for argument in node.args:
            self.visit(argument, scope)
        for keyword in node.keywords:
            self.visit(keyword.value, scope)

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
        inner = _Scope("function", scope)
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
        inner = _Scope("function", scope)
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
        argument_spans = []
        for call, operation in calls:
            scope = self.scopes.scope_of[id(call)]
            if "SEM102" in self.settings.enabled and operation.name == "semaphore_wait":
                if any(k.arg == "dec" for k in call.keywords):
                    raise Defer("SEM102")
            for argument in _semaphore_arguments(operation, call):
                argument_spans.append((self.text.start(argument)[2], self.text.end(argument)[2]))
                self._argument(call, argument, scope)
        starts = sorted(self.text.start(call)[2] for call, _ in calls)
        for low, high in argument_spans:
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:
                raise Defer("a semaphore call inside a semaphore argument")

    def _report(
        self, code: str, node: ast.AST, message: str, replacement: str | None, *, safe: bool = True
    ) -> bool | None:
        if code not in self.settings.enabled or self._silenced(code, node):
            return None
        line, column, start = self.text.start(node)
        end_line, end_column, end = self.text.end(node)
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

    def _argument(self, call: ast.Call, original: ast.expr, scope: _Scope) -> None:
        if isinstance(original, ast.NamedExpr):
            raise Defer("an assignment expression in a semaphore argument")
        if isinstance(original, ast.Name):
            _, bindings = scope.lookup(original.id)
            if any(b.kind == "read" for b in bindings):
                raise Defer("a value carried through a variable (SEM003)")
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
        if safe and isinstance(base, ast.Attribute):
            raise Defer("evidence about an attribute chain, which may be rebound")
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


def _replace_in_tree(rewrite: _Rewrite) -> None:
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
    if "SEM101" in settings.enabled and "tpu" in text and _MIGRATION_TEXT.search(text):
        raise Defer("SEM101")
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
    engine = _Engine(_Text(text), scopes, settings)
    engine.run()
    findings = engine.findings
    if not apply_fixes:
        return QuickResult(text, encoding, tuple(replace(f, applied=False) for f in findings))
    if not engine.rewrites:
        return QuickResult(text, encoding, tuple(findings))
    edits = sorted(edit for rewrite in engine.rewrites for edit in rewrite.edits)
    new_text = apply_edits(text, 0, len(text), edits)
    for rewrite in engine.rewrites:
        _replace_in_tree(rewrite)
    settled = _settles_by_construction(findings, engine.rewrites)
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
    left in it could draw a fix.
    """
    if any(f.rule == "SEM002" and not f.applied for f in findings):
        return False
    return not any(
        _read_target(r.replacement) is not None or _element_read(r.replacement) or _has_slice(r.replacement)
        for r in rewrites
    )


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


def _alone_on_its_lines(statement: ast.stmt, old: _Text) -> bool:
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
    return _TRAILER.match(ending) is not None


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
