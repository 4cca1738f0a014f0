"""SEM101's references: every read of a deprecated TPU semaphore name that resolves to the TPU
module (an attribute, an imported name, `getattr`'s string), found near the lines that spell
one; sem101_renames.py renames them and sem101_imports.py makes the import edits."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from semfix.analysis.context import Context
from semfix.analysis.importer import Symbol
from semfix.analysis.nodes import end_of, first_line, unchain
from semfix.analysis.scopes import Scope
from semfix.catalog import MOVED_TO_PALLAS, TPU_MIGRATIONS
from semfix.patterns import compiled, whole

PALLAS = Symbol("jax.experimental", "pallas")  # `from jax.experimental import pallas as <alias>`
TPU = "jax.experimental.pallas.tpu"  # the module every import SEM101 may drop loads
DEPRECATED_TPU = {f"{TPU}.{path}": path for path in TPU_MIGRATIONS}  # the qualified name: its path under `pltpu`
#: The names `from jax.experimental.pallas.tpu import ...` fails on at the newest JAX: an import
#: of one that nothing reads is dropped, whatever the floor (sem101.finish).
GONE_NAMES = frozenset(MOVED_TO_PALLAS) | frozenset(path for path in TPU_MIGRATIONS if "." not in path)
FUNCTIONS = frozenset(path.rpartition(".")[2] for path in TPU_MIGRATIONS)  # the names they end in
_GUARDS = compiled(whole(("hasattr", "getattr", "except")))  # a version check, a fallback, a handler
ENUMS = frozenset(path.rpartition(".")[0] for path in TPU_MIGRATIONS) - {""}  # `pltpu.MemorySpace.ANY`'s parent


@dataclass
class Reference:
    node: ast.Name | ast.Attribute | ast.Call  # the Call of `getattr(pltpu, "semaphore_wait")`
    scope: Scope
    function: str  # its path under `pltpu` (a key of catalog.TPU_MIGRATIONS)
    holder: ast.AST  # the node it is in (a call, a keyword, an assignment...)
    formatted: bool = False  # in an f-string, whose text the edits do not model
    fallback: int | None = None  # the line of a `pltpu = None` the name may also be bound by
    through: bool = False  # read through another module of the run (`compat.pltpu.semaphore_wait`)

    @property
    def read(self) -> ast.Name | ast.Attribute:
        """What the rename stops reading: the reference, or the module `getattr` is given."""
        if not isinstance(self.node, ast.Call):
            return self.node
        module = self.node.args[0]
        assert isinstance(module, (ast.Name, ast.Attribute))  # `_getattr_name` took only such calls
        return module


def references(ctx: Context, unsure: list[str], guarded: Spans) -> Iterator[Reference]:
    """Every reference that resolves to a deprecated TPU semaphore function: a call's callee or
    argument, or a value anywhere else (`WAIT = pltpu.semaphore_wait`, a dict of them). Other
    names spelled alike (`pl.semaphore_wait`, `self.semaphore_wait`) are not references to it.
    One that is assigned or deleted (`pltpu.semaphore_wait = f`) may make the others mean
    something else: its line goes in `unsure`, and nothing is fixed."""
    imports = ctx.scopes.imports
    imported = {  # `from jax.experimental.pallas.tpu import semaphore_read as read_sem`
        alias.asname or alias.name
        for node in imports
        if isinstance(node, ast.ImportFrom) and node.module == TPU
        for alias in node.names
        if alias.name in FUNCTIONS
    }
    modules = {  # `pltpu`: what the TPU module is imported as, in any scope
        alias.asname or alias.name
        for node in imports
        for alias in node.names
        if alias.name == TPU
        and alias.asname
        or isinstance(node, ast.ImportFrom)
        and node.module == PALLAS.module
        and alias.name == "tpu"
    }
    nodes = _near(ctx, FUNCTIONS | imported)
    candidates: list[ast.Name | ast.Attribute | ast.Call] = []
    for node in nodes:
        if isinstance(node, (ast.Name, ast.Attribute)):
            if (
                (node.attr in FUNCTIONS if isinstance(node, ast.Attribute) else node.id in imported)
                and not (isinstance(node, ast.Name) and type(node.ctx) is ast.Store)  # binds a name of this module
                and (_may_be_tpu(node, modules) or bool(ctx.aliases))
            ):
                candidates.append(node)
        elif (
            isinstance(node, ast.Call)
            and _getattr_name(node) is not None
            and isinstance(getter := node.args[0], (ast.Name, ast.Attribute))  # as `_getattr_name` checked
            and _may_be_tpu(getter, modules)
        ):
            candidates.append(node)
    if not candidates:
        return
    scopes: dict[int, Scope] = {}  # by id() of a candidate's root name
    for call in ctx.scopes.calls:  # most are calls or their arguments: no need to track accesses
        for node in (call.func, *call.args, *(k.value for k in call.keywords)):
            scopes[id(unchain(node)[0])] = ctx.scopes.scope_of[id(call)]
    roots = [unchain(node.args[0] if isinstance(node, ast.Call) else node)[0] for node in candidates]
    if any(id(root) not in scopes for root in roots):
        scopes.update((id(a.name), a.scope) for accesses in ctx.tracking().accesses.values() for a in accesses)
    wanted = {id(node) for node in candidates}
    holders = {id(child): parent for parent in nodes for child in ast.iter_child_nodes(parent) if id(child) in wanted}
    formatted = {id(n) for s in nodes if isinstance(s, ast.JoinedStr) for n in ast.walk(s)}
    for node, root in zip(candidates, roots):
        scope = scopes[id(root)]
        if isinstance(node, ast.Call):
            if scope.lookup("getattr")[1]:
                continue  # not the builtin
            modules_read, suffix = ctx.qualified(node.args[0], scope), f".{_getattr_name(node)}"
        else:
            modules_read, suffix = ctx.qualified(node, scope), ""
        fallback = None
        if modules_read is None:
            modules_read, fallback = _with_fallback(node.args[0] if isinstance(node, ast.Call) else node, scope)
        names = {f"{name}{suffix}" for name in modules_read or ()}
        if len(names) != 1:
            continue
        name, through = names.pop(), False
        if name not in DEPRECATED_TPU and ctx.aliases:  # `compat.pltpu.semaphore_wait`
            name, through = ctx.through_run(name), True
        if name not in DEPRECATED_TPU:
            continue
        if _inside(node, guarded.get(DEPRECATED_TPU[name], ())):
            continue  # `else: pltpu.ANY` under `if hasattr(pl, "ANY"):`, for a JAX without `pl.ANY`
        if not isinstance(node, ast.Call) and type(node.ctx) is not ast.Load:
            unsure.append(f"`{ctx.text.of(node)}` is assigned or deleted at line {node.lineno}")
        else:
            yield Reference(
                node, scope, DEPRECATED_TPU[name], holders[id(node)], id(node) in formatted, fallback, through
            )


def stale_imports(ctx: Context, guarded: Spans) -> list[ast.ImportFrom]:
    """The imports, in any scope, of names the TPU module has no more at the newest JAX (`from
    jax.experimental.pallas.tpu import DeviceIdType`): read or not, the line fails there; not
    where it is the fallback of an import of them from the pallas module (`guarded`)."""
    return [
        node
        for node in ctx.scopes.imports
        if isinstance(node, ast.ImportFrom)
        and node.module == TPU
        and not node.level
        and any(alias.name in GONE_NAMES and not _inside(node, guarded.get(alias.name, ())) for alias in node.names)
    ]


def _inside(node: ast.stmt | ast.expr, spans: Iterable[tuple[tuple[int, int], tuple[int, int]]]) -> bool:
    return any(a <= (node.lineno, node.col_offset) < b for a, b in spans)


def star_reads(ctx: Context) -> list[ast.Name]:
    """The names that only `from jax.experimental.pallas.tpu import *` can bind (read, bound
    by nothing else): the star stopped giving each when JAX moved it into `_deprecations` (0.9
    for `ANY`, 0.10 for the others), and the read fails with NameError. Reported, not renamed:
    what a star import binds is not resolved. A star of a run module whose `__all__` says what
    it gives (`ScopeBuilder.stars`) binds those names alone, so it hides no other."""
    stars = [
        "." * n.level + (n.module or "")
        for n in ctx.scopes.imports
        if isinstance(n, ast.ImportFrom) and n.names[0].name == "*"
    ]
    unknown = [module for module in stars if module not in ctx.scopes.stars]
    if not unknown or any(module != TPU for module in unknown):  # another star may give it (`pl`'s)
        return []
    accesses = ctx.tracking().accesses
    found = [
        a.name
        for name in MOVED_TO_PALLAS
        for a in accesses.get(name, ())
        if [b.kind for b in a.scope.lookup(name)[1]] == ["star"]
    ]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


Spans = dict[str, list[tuple[tuple[int, int], tuple[int, int]]]]  # a name: (start, end) of code


def feature_tested(ctx: Context) -> Spans:
    """The code that runs only where the pallas module lacks a name, by name: the branch taken
    without it (`else:` under `if hasattr(pl, "ANY"):`, the body under `if not hasattr(...)`; of
    a conditional expression too), what follows `getattr(pl, "semaphore_wait", None) or`, and
    the handler of a `try:` that reads `pl.semaphore_wait` (`except AttributeError:`) or imports
    it from the pallas module (`except ImportError:`). An old spelling there is a fallback for a
    JAX that lacks the new one: compatibility code that runs on every JAX, which no finding or
    renaming may touch."""
    found: Spans = {}
    text = ctx.text.text  # the words looked for first: the pattern's leading `\b` tries every offset
    if not any(word in text for word in ("hasattr", "getattr", "except")) or not _GUARDS.search(text):
        return found

    def guard(name: str, parts: list[ast.stmt] | list[ast.expr]) -> None:
        for part in parts:
            found.setdefault(name, []).append(((part.lineno, part.col_offset), end_of(part)))

    for node in _near(ctx, {"hasattr", "getattr", "except"}):
        if isinstance(node, (ast.If, ast.IfExp)):
            test, negated = node.test, False
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, negated = test.operand, True
            if (name := _tested(ctx, test, "hasattr")) is not None:
                branch = node.body if negated else node.orelse
                guard(name, branch if isinstance(branch, list) else [branch])
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            for at, operand in enumerate(node.values[:-1]):
                if (name := _tested(ctx, operand, "getattr")) is not None:
                    guard(name, node.values[at + 1 :])
        elif isinstance(node, ast.Try):
            tried = [inner for statement in node.body for inner in ast.walk(statement)]
            read = {n.attr for n in tried if isinstance(n, ast.Attribute) and _pallas(ctx, n.value)}
            read |= {name for n in tried if (name := _tested(ctx, n, "getattr", default=False)) is not None}
            imported = {
                alias.name
                for n in tried
                if isinstance(n, ast.ImportFrom) and n.module == PALLAS.module and not n.level
                for alias in n.names
            }
            for handler in node.handlers if read or imported else ():
                caught = _caught(ctx, handler)
                names = (read if "AttributeError" in caught else set()) | (
                    imported if "ImportError" in caught else set()
                )
                for name in sorted(names & set(TPU_MIGRATIONS)):
                    guard(name, handler.body)
    return found


def _tested(ctx: Context, node: ast.AST, builtin: str, *, default: bool = True) -> str | None:
    """`hasattr(pl, "ANY")`, `getattr(pl, "semaphore_wait", None)` (with a `default`; else its
    two arguments): the name of TPU_MIGRATIONS it asks the pallas module for, else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == builtin):
        return None
    scope = ctx.scopes.scope_of.get(id(node))
    wanted = 3 if builtin == "getattr" and default else 2
    if len(node.args) != wanted or node.keywords or scope is None or scope.lookup(builtin)[1]:
        return None  # not the builtin's arguments
    module, name = node.args[:2]
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value in TPU_MIGRATIONS):
        return None
    return name.value if _pallas(ctx, module, scope) else None


def _pallas(ctx: Context, node: ast.expr, scope: Scope | None = None) -> bool:
    """Does `node` name the pallas module (`pl`, `jax.experimental.pallas`)? Where it is also
    bound to None (`except ImportError: pl = pltpu = None`), it does wherever the code it tests
    for runs: that code reads Pallas's names, which fail on None."""
    root = unchain(node)[0]
    if not isinstance(root, ast.Name):
        return False
    scope = scope or _scope(ctx, root)
    return scope is not None and ctx.qualified(node, scope, fallback=True) == {PALLAS.module}


def _scope(ctx: Context, name: ast.Name) -> Scope | None:
    """The scope a name is read in (the accesses are tracked once a compatibility test is seen)."""
    return next((a.scope for a in ctx.tracking().accesses.get(name.id, ()) if a.name is name), None)


def _caught(ctx: Context, handler: ast.ExceptHandler) -> set[str]:
    """Which of AttributeError and ImportError the builtin exceptions `handler` names catch."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    caught: set[str] = set()
    for kind in kinds:
        if kind is None or (
            isinstance(kind, ast.Name) and (scope := _scope(ctx, kind)) is not None and not scope.lookup(kind.id)[1]
        ):
            name = "Exception" if kind is None else kind.id
            caught |= {"AttributeError", "ImportError"} if name in ("Exception", "BaseException") else {name}
    return caught


def _near(ctx: Context, words: frozenset[str] | set[str]) -> list[ast.AST]:
    """The nodes of the innermost statements whose lines spell one of `words` whole: every
    reference (an attribute, an imported name, `getattr`'s string) spells its name inside its
    own statement, with its holder and any f-string around it. Most files that pass the text
    gate read only `pl`'s names, and walking every node of each was SEM101's largest cost."""
    spelled = re.compile(whole(words))
    chosen: dict[int, ast.stmt] = {}
    tree = ctx.tree
    assert tree is not None  # SEM101 runs on a parsed tree (`sem101.renames`)
    for line in {ctx.text.line_of(match.start()) for match in spelled.finditer(ctx.text.text)}:
        _holding(tree.body, line, chosen)
    nodes: dict[int, ast.AST] = {}  # a statement chosen for one line may hold one chosen for another
    for statement in chosen.values():
        nodes.update((id(node), node) for node in ast.walk(statement))
    return list(nodes.values())


def _holding(body: list[ast.stmt], line: int, chosen: dict[int, ast.stmt]) -> None:
    """Every statement of `body` whose lines hold `line` (two may share it: `a; b`), or the
    statements inside it that do, when the line is not one of its own (a header, a decorator)."""
    for statement in body:
        if not first_line(statement) <= line <= end_of(statement)[0]:
            continue
        inner = [
            *getattr(statement, "body", ()),
            *getattr(statement, "orelse", ()),
            *getattr(statement, "finalbody", ()),
        ]
        for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            inner += clause.body
        if line != statement.lineno and any(first_line(s) <= line <= s.end_lineno for s in inner):
            _holding(inner, line, chosen)
        else:
            chosen[id(statement)] = statement


def _getattr_name(node: ast.AST) -> str | None:
    """`getattr(x, "semaphore_wait")`: the constant name read (a deprecated one), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"):
        return None
    if len(node.args) != 2 or node.keywords or not isinstance(node.args[0], (ast.Name, ast.Attribute)):
        return None
    name = node.args[1]
    return name.value if isinstance(name, ast.Constant) and name.value in FUNCTIONS else None


def _with_fallback(node: ast.expr, scope: Scope) -> tuple[set[str] | None, int | None]:
    """`pltpu.f` where `pltpu` is imported, or else assigned None (`except ImportError: pltpu =
    None`): what the imports make it, and the line of the first `= None`."""
    root, steps, _ = unchain(node)
    if not isinstance(root, ast.Name) or None in steps:
        return None, None
    bindings = scope.lookup(root.id)[1]
    imports = [b for b in bindings if b.kind == "import"]
    nones = [b.assignment for b in bindings if b.kind == "assign" and _assigns_none(b.node)]
    if not imports or len(imports) + len(nones) != len(bindings):
        return None, None
    suffix = "".join(f".{step}" for step in steps)
    return {f"{b.qualname}{suffix}" for b in imports}, min(n.lineno for n in nones)


def _assigns_none(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None


def _may_be_tpu(node: ast.Name | ast.Attribute, modules: set[str]) -> bool:
    """Could `node` name a function of the TPU module: a name imported from it (the caller
    checks), `pltpu.f` with `pltpu` a name of the TPU module, `<...>.tpu.f`, or a member of
    one of its enums (`<...>.MemorySpace.ANY`)?"""
    root, steps, _ = unchain(node)
    if not isinstance(root, ast.Name) or None in steps:
        return False  # `f().semaphore_wait`, `x[0].semaphore_wait`: no import's
    parent = (root.id, *steps)[-2:-1]
    return (
        not steps
        or steps[-2:-1] == ("tpu",)
        or (len(steps) == 1 and root.id in modules)
        or bool(parent and parent[0] in ENUMS)
    )
