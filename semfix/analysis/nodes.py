"""The syntax the engine works on: subscript shapes, source positions, statement geometry.

Small facts about `ast` nodes and the text they came from, shared by the analysis, the rules
and the proof: what a subscript reads (`X[...]`, `X[i]`, `X.at[i]`), where a node starts and
ends in characters (ast counts UTF-8 bytes), which statements hold a line, and the tokens
(only the tokenizer tells a comment from a `#` in a string).
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
import warnings
from itertools import repeat
from typing import Protocol, TypeGuard, cast

from semfix.errors import SourceError
from semfix.patterns import compiled
from semfix.rewrite.text import line_starts

_LONE_CR = compiled(r"\r(?!\n)")
LINE_BREAK = compiled(r"[\r\n]")


class Located(Protocol):
    """A node with a position in the source: an expression, a statement, an argument, a keyword..."""

    lineno: int
    col_offset: int
    end_lineno: int | None
    end_col_offset: int | None


def end_of(node: Located) -> tuple[int, int]:
    """Where the node ends (line, byte column): the stubs allow None, but CPython's parser sets
    both on every node it makes, and semfix only positions parsed nodes."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    return node.end_lineno, node.end_col_offset


Steps = tuple[str | None, ...]  # the attribute names of `a.b[i].c` after `a`; None for a subscript

_CHILDREN: dict[type, tuple[str, ...]] = {}  # by node type: the fields that may hold nodes


def walk(node: ast.AST) -> list[ast.AST]:
    """`ast.walk(node)` as a list, in its order (breadth first): where the whole subtree is
    read anyway, a third of the time, without a generator resumed per node and per field."""
    found, index = [node], 0
    while index < len(found):
        current = found[index]
        index += 1
        kind = type(current)
        fields = _CHILDREN.get(kind)
        if fields is None:
            fields = _CHILDREN[kind] = tuple(current._fields)
        for name in fields:
            value = getattr(current, name, None)
            if type(value) is list:
                found.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                found.append(value)
    return found


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
#: What `names_within` passes over: what a list of nodes may also hold, and nodes with no Name
#: under them; and the fields that never hold a node with one (a name, an operator, a context).
_NO_NAMES = frozenset({str, type(None), ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue})
_NO_NAME_FIELDS = frozenset({"ctx", "op", "id", "attr", "arg", "names", "kind", "conversion", "is_async", "level"})
_NAME_FIELDS: dict[type, tuple[str, ...]] = {}  # by node type: the fields that may hold a Name


#: Each def's (and lambda's) own Names by spelling, not those of the defs nested in it, and
#: those nested defs: `names_within`'s answer, keyed by id() of the def.
Within = dict[int, tuple[dict[str, list[ast.Name]], list[ast.AST]]]


def names_within(tree: ast.AST, known: Within) -> Within:
    """Every Name in each def and lambda of `tree`, `tree` itself included, as the def's own
    (its decorators' and defaults' too, as `walk` of the def would find them) and the defs
    nested in it: one walk answers for all of them, each Name kept once (`Resolution.names_in`
    merges a def's with its nested ones' where asked). A def `known` answers already is
    listed as nested, not walked again."""
    found: Within = {}
    top = None if type(tree) in _FUNCTIONS else found.setdefault(id(tree), ({}, []))  # a module's too
    stack: list[tuple[object, tuple[dict[str, list[ast.Name]], list[ast.AST]] | None]] = [(tree, top)]
    while stack:
        node, owner = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if owner is not None:
                owner[0].setdefault(node.id, []).append(node)  # type: ignore[attr-defined,arg-type]
            continue
        if kind in _NO_NAMES:  # a list's None or string, a constant, a context
            continue
        if kind in _FUNCTIONS:
            if owner is not None:
                owner[1].append(node)  # type: ignore[arg-type]
                if id(node) in known:  # walked already
                    continue
            owner = found[id(node)] = ({}, [])
        fields = _NAME_FIELDS.get(kind)
        if fields is None:
            fields = _NAME_FIELDS[kind] = tuple(f for f in node._fields if f not in _NO_NAME_FIELDS)  # type: ignore[attr-defined]
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                stack.extend(zip(value, repeat(owner)))
            elif isinstance(value, ast.AST):
                stack.append((value, owner))
    return found


def unchain(node: ast.expr) -> tuple[ast.expr, Steps, list[ast.Subscript]]:
    """`a.b[i].c`: its root `a`, its steps ("b", None, "c"), its subscripts, outermost first."""
    chain: list[ast.Attribute | ast.Subscript] = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        chain.append(node)
        node = node.value
    steps = tuple(getattr(link, "attr", None) for link in reversed(chain))
    return node, steps, [link for link in chain if isinstance(link, ast.Subscript)]


def is_at(node: ast.expr) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and node.attr == "at"


def _elements(subscript: ast.Subscript) -> list[ast.expr]:
    inner = subscript.slice
    return list(inner.elts) if isinstance(inner, ast.Tuple) and inner.elts else [inner]


def read_target(node: ast.expr) -> ast.expr | None:
    """`X[...]` or `X[()]`: the Ref X; None otherwise, and for `X.at[...]`."""
    if not isinstance(node, ast.Subscript) or is_at(node.value):
        return None
    inner = node.slice
    whole = (isinstance(inner, ast.Constant) and inner.value is Ellipsis) or (
        isinstance(inner, ast.Tuple) and not inner.elts
    )
    return node.value if whole else None


def content_read(node: ast.expr | None) -> bool:
    """Does the subscript read what a Ref holds, if its value is one: `X[...]`, `X[i]`, `X[0:8]`,
    `X.at[i][...]`; not the view `X.at[i]`."""
    return isinstance(node, ast.Subscript) and not is_at(node.value)


def has_slice(node: ast.expr | None) -> TypeGuard[ast.Subscript]:
    return isinstance(node, ast.Subscript) and any(isinstance(e, ast.Slice) for e in _elements(node))


def keyed_by_text(node: ast.Subscript) -> bool:
    """`sems["load"]`: an index holds a string, which no array Ref takes (a dict of Refs does)."""
    return any(
        isinstance(e, ast.JoinedStr) or isinstance(e, ast.Constant) and isinstance(e.value, (str, bytes))
        for e in _elements(node)
    )


def element_read(node: ast.expr) -> TypeGuard[ast.Subscript]:
    if not isinstance(node, ast.Subscript) or is_at(node.value) or read_target(node) is not None:
        return False
    return not any(
        isinstance(e, (ast.Slice, ast.Starred)) or (isinstance(e, ast.Constant) and e.value is Ellipsis)
        for e in _elements(node)
    )


def branches(node: ast.expr) -> list[ast.expr]:
    """What an argument may pass: `a if c else b` passes `a` or `b`, each checked as the argument."""
    if isinstance(node, ast.IfExp):
        return [*branches(node.body), *branches(node.orelse)]
    return [node]


def unpacked(statement: ast.AST, name: str, source: ast.expr | None = None) -> list[ast.expr] | None:
    """What a loop target or an unpacked name takes from literals: each `e` that `name` is bound
    to by `for a, name in ((d, e), ...)`, `for name in (e, ...)` or `a, name = d, e` (`source`:
    the literal the loop's iterable or the assigned value names); None where `name` is not so
    bound, or the values are not all written there (a name, a call, `*rest`)."""
    if isinstance(statement, ast.For):
        targets, items = [statement.target], _literal(source or statement.iter)
    elif isinstance(statement, ast.Assign):
        targets, items = statement.targets, [source or statement.value]
    else:
        return None
    path = next((found for target in targets if (found := _path(target, name)) is not None), None)
    if path is None or items is None:
        return None
    values = []
    for item in items:
        for index in path:
            elements = _literal(item)
            if elements is None or len(elements) <= index:
                return None
            item = elements[index]
        values.append(item)
    return values


def _literal(node: ast.expr) -> list[ast.expr] | None:
    """The elements of a tuple or list literal without `*`; None for anything else."""
    if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def _path(target: ast.expr, name: str) -> list[int] | None:
    """Where `name` sits in a target: the indices into nested tuples; None if absent or starred."""
    if isinstance(target, ast.Name):
        return [] if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        for index, element in enumerate(target.elts):
            if (inner := _path(element, name)) is not None:
                return [index, *inner]
    return None


class Text:
    """The decoded source, with ast positions (UTF-8 byte columns) turned into offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = line_starts(text)

    def after(self, line: int) -> int:
        """The offset just past the line's line break (the end of the text, on the last line)."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def column(self, line: int, byte_column: int) -> int:
        row = self.line(line)
        return byte_column if row.isascii() else len(row.encode("utf-8")[:byte_column].decode("utf-8"))

    def start(self, node: Located) -> tuple[int, int, int]:
        """(line, 0-based character column, offset) where the node starts."""
        column = self.column(node.lineno, node.col_offset)
        return node.lineno, column, self.starts[node.lineno - 1] + column

    def end(self, node: Located) -> tuple[int, int, int]:
        line, byte_column = end_of(node)
        column = self.column(line, byte_column)
        return line, column, self.starts[line - 1] + column

    def line(self, number: int) -> str:
        """The text of a line (1-based), with its line break."""
        return self.text[self.starts[number - 1] : self.after(number)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def of(self, node: Located) -> str:
        return self.text[self.start(node)[2] : self.end(node)[2]]


class Rewrite:
    """A fix a rule declares: its text edits, and the node the proof expects in the new tree."""

    __slots__ = ("call", "argument", "replacement", "edits", "renamed")

    def __init__(
        self,
        call: ast.AST | None,
        argument: ast.expr,
        replacement: ast.expr,
        edits: list[tuple[int, int, str]],
        renamed: tuple[ast.keyword, str | None] | None = None,
    ) -> None:
        # the call the argument is in (or the loop or assignment a read carried in a literal is in);
        # None for a rename of a reference, which declares its tree elsewhere
        self.call = call
        self.argument = argument  # the original argument node
        self.replacement = replacement  # the node the verified new tree must hold in its place
        self.edits = edits
        #: A keyword given a new name instead, and that name; None: passed by position instead (the
        #: call's first keyword, after its last positional argument).
        self.renamed = renamed

    def declare(self) -> None:
        """Make the declared tree, in place: the argument replaced in its call, or the keyword
        renamed. A rewrite without a call declares its tree elsewhere (in ImportChanges)."""
        call = self.call
        if self.renamed is not None:
            keyword, name = self.renamed
            if name is None and isinstance(call, ast.Call):
                call.keywords.remove(keyword)
                call.args.append(keyword.value)
            keyword.arg = name
            return
        if call is None:
            return
        for parent in ast.walk(call):  # the argument, or a branch of one (`branches`)
            for name, value in ast.iter_fields(parent):
                if value is self.argument:
                    setattr(parent, name, self.replacement)
                    return
                if isinstance(value, list) and any(item is self.argument for item in value):
                    value[next(i for i, item in enumerate(value) if item is self.argument)] = self.replacement
                    return
        raise AssertionError("a rewrite's argument is not in its call")


def first_line(statement: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def enclosing(module: ast.Module, line: int, bodies: dict[int, tuple[list[ast.stmt], list[int]]]) -> list[ast.stmt]:
    """The statements whose lines hold `line`, outermost first. `bodies` caches, by owner, the
    statements directly inside it, in order, with their first lines."""
    chain: list[ast.stmt] = []
    owner: ast.AST = module
    while True:
        if id(owner) not in bodies:
            inner = [*getattr(owner, "body", ()), *getattr(owner, "orelse", ()), *getattr(owner, "finalbody", ())]
            for clause in (*getattr(owner, "handlers", ()), *getattr(owner, "cases", ())):
                inner += clause.body
            inner.sort(key=first_line)
            bodies[id(owner)] = (inner, [first_line(s) for s in inner])
        body, firsts = bodies[id(owner)]
        index = bisect.bisect_right(firsts, line) - 1
        if index < 0 or end_of(body[index])[0] < line:
            return chain
        owner = body[index]
        chain.append(owner)


def holder(
    module: ast.Module, statement: ast.stmt, bodies: dict[int, tuple[list[ast.stmt], list[int]]]
) -> tuple[ast.AST, list[ast.stmt]]:
    """The node whose statement list holds `statement` (an `except` or `case` clause for the
    statements in it), and that list: looked for from the innermost statement around its line."""
    for owner in reversed([module, *enclosing(module, statement.lineno, bodies)]):
        for node in (owner, *getattr(owner, "handlers", ()), *getattr(owner, "cases", ())):
            for _, value in ast.iter_fields(node):
                if isinstance(value, list) and any(s is statement for s in value):
                    return node, value
    raise AssertionError("a statement outside the tree")


_TRAILER = compiled(r"[ \t]*(?:#[^\r\n]*)?(?:\r\n?|\n)?\Z")


def alone_on_its_lines(statement: ast.stmt, old: Text, trailer: re.Pattern[str] = _TRAILER) -> bool:
    """Does the statement start its first line (after indentation, or `@`) and end its last
    (before a comment), and not continue a line before it with a backslash?"""
    head = min([statement, *getattr(statement, "decorator_list", [])], key=lambda node: node.lineno)
    first, (last, last_column) = head.lineno, end_of(statement)
    if first > 1 and old.line(first - 1).rstrip(" \t\r\n").endswith("\\"):
        return False
    prefix = old.line(first)[: old.column(first, head.col_offset)]
    if prefix.strip(" \t") != ("@" if head is not statement else ""):
        return False
    ending = old.line(last)[old.column(last, last_column) :]
    return trailer.match(ending) is not None


def tokens(text: str) -> list[tokenize.TokenInfo]:
    """Python's tokens, on lines numbered as `ast` numbers them: a lone CR ends a line there,
    while the tokenize module splits lines at `\n` only."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(_LONE_CR.sub("\n", text)).readline))
    except (tokenize.TokenError, SyntaxError) as error:
        raise SourceError(f"cannot tokenize: {error}") from None


def source_order(call: ast.Call) -> list[ast.expr | ast.keyword]:
    """Positional and keyword arguments in the order they are written, as libcst lists them."""
    items: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    return sorted(items, key=lambda a: (a.lineno, a.col_offset))


def parse(text: str, data: bytes | None = None) -> ast.Module:
    """CPython's parser, without the SyntaxWarnings it prints about the user's code. `data`:
    the file's bytes, where `text` is all they say (UTF-8, no BOM): a tree the run's questions
    parsed of them (`parsed_bytes`) is taken, not parsed again."""
    if data is not None and (tree := _PARSED.pop(data, None)) is not None:
        return tree
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


#: The trees `parsed_bytes` made, by the bytes parsed, the latest last (64 at most).
_PARSED: dict[bytes, ast.Module | None] = {}
_UNPARSED = object()


def parsed_bytes(data: bytes) -> ast.Module | None:
    """The tree of a file's bytes (None where they do not parse: the file's analysis reports
    that), for the run's questions of its modules, which only read it: one parse serves them
    all, and the file's own analysis after them (`parse`), which takes it."""
    if (kept := _PARSED.get(data, _UNPARSED)) is not _UNPARSED:
        return cast("ast.Module | None", kept)
    if len(_PARSED) >= 64:
        del _PARSED[next(iter(_PARSED))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree: ast.Module | None = ast.parse(data)
    except (SyntaxError, ValueError):
        tree = None
    _PARSED[data] = tree
    return tree
