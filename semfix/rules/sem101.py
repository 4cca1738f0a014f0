'''SEM101 deprecated-tpu-semaphore-op

## What it does
Rewrites `pltpu.semaphore_signal`, `pltpu.semaphore_wait` and `pltpu.semaphore_read` to the
`pl.semaphore_*` functions, adding or reusing the file's pallas import and dropping TPU imports
left unused. Off by default: select it (`--select SEM101` or `extend-select`).

## Why is this bad?
The `pltpu` versions were deprecated in JAX 0.10 and removed in 0.11, where the kernel fails
with `AttributeError` when it is traced.

## Example
```python
pltpu.semaphore_wait(sem, 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

## Fix safety
Safe: the `pl` functions take the same arguments. The added import goes where the `pltpu`
import was (a function-local import stays local).
'''

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from semfix.engine.context import Context
from semfix.engine.nodes import LINE_BREAK, Rewrite
from semfix.engine.scopes import Scope
from semfix.rules.base import Invalid, Rule

CODE = "SEM101"

RULE = Rule(
    code=CODE,
    name="deprecated-tpu-semaphore-op",
    summary="pltpu.semaphore_signal/wait/read were deprecated in JAX 0.10 and removed in 0.11; use "
    "the pl.semaphore_* functions.",
    fix="safe",
    default=False,
    docs=__doc__ or "",
    valid=(
        """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pl.semaphore_wait(sem, 1)
""",
    ),
    invalid=(
        Invalid(
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pltpu.semaphore_wait(sem, 1)
""",
            """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.make_async_copy(x_hbm, o_hbm, sem).start()
    pl.semaphore_wait(sem, 1)
""",
            select=("SEM101",),
        ),
        Invalid(
            """\
import jax
from jax.experimental.pallas import tpu as pltpu


def signal_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pltpu.semaphore_signal(sem, 1)
""",
            """\
import jax
from jax.experimental import pallas as pl


def signal_kernel(x_ref, o_ref, sem):
    o_ref[...] = x_ref[...]
    pl.semaphore_signal(sem, 1)
""",
            select=("SEM101",),
        ),
    ),
)

# -- the logic: references renamed as text, then the import edits the renames need ---------------

DEPRECATED_TPU = {f"jax.experimental.pallas.tpu.semaphore_{op}": f"semaphore_{op}" for op in ("signal", "wait", "read")}
DEFAULT_PALLAS_ALIAS = "pl"
FUNCTIONS = frozenset(DEPRECATED_TPU.values())
_MESSAGE = "`{old}` was deprecated in JAX 0.10 and removed in 0.11; use `{new}`"


class Unsure(Exception):
    """The import edits are not sure here, so SEM101 reports without fixing: a reference outside
    a call, a name bound by more than its imports, an import in a class body or sharing its line,
    a block an import would leave empty, no import block for the pallas import."""


@dataclass
class ImportChanges:
    """SEM101's import edits, declared for equivalence.check_rewrite, which accepts exactly these."""

    add_pallas_as: str | None = None  # bind jax.experimental.pallas to this name where needed
    dropped: dict[int, set[str]] = field(default_factory=dict)  # line of an old import: names it lost
    added: int = 0  # pallas imports added
    migrated_to: str | None = None  # the name the rewritten references use for the pallas module


@dataclass
class Reference:
    node: ast.Name | ast.Attribute
    scope: Scope
    function: str  # semaphore_signal, semaphore_wait or semaphore_read


@dataclass
class Renames:
    """The file's references still to rename, last first, and what the renames need."""

    pending: list[Reference] = field(default_factory=list)
    alias: str | None = None  # the module-level name of the pallas module, if the file has one
    unsure: list[str] = field(default_factory=list)  # why the import edits cannot be made sure of


def renames(ctx: Context) -> Renames:
    """The references to rename, when SEM101 may apply (`ctx.tree` is set then)."""
    found = Renames()
    if CODE in ctx.settings.enabled and ctx.tree is not None:
        found.pending = sorted(_references(ctx, found.unsure), key=lambda r: _end(r.node), reverse=True)
        found.alias = _pallas_alias(ctx.tree)
    return found


def rename(ctx: Context, renames: Renames, until: tuple[int, int] | None = None) -> None:
    """Rename the references that end by `until` (all if None): the engine calls this before
    each call's arguments, so findings come in libcst's order (callee, then call)."""
    while renames.pending and (until is None or _end(renames.pending[-1].node) <= until):
        reference = renames.pending.pop()
        alias = renames.alias or DEFAULT_PALLAS_ALIAS
        new_text = f"{alias}.{reference.function}"
        message = _MESSAGE.format(old=ctx.text.of(reference.node), new=new_text)
        _, bindings = reference.scope.lookup(alias)  # the pallas import, or free for the one to add
        usable = not bindings if renames.alias is None else len(bindings) == 1 and bindings[0].kind == "import"
        if not usable:
            ctx.report(CODE, reference.node, message + f" (not fixed: `{alias}` means something else here)", None)
            continue
        start, end = ctx.text.start(reference.node)[2], ctx.text.end(reference.node)[2]
        if LINE_BREAK.search(ctx.text.text, start, end):
            ctx.report(CODE, reference.node, message + " (not fixed: a reference over several lines)", None)
        elif ctx.report(CODE, reference.node, message, new_text):
            ctx.migrated.append(reference.node)
            ctx.rewrites.append(Rewrite(None, reference.node, reference.node, [(start, end, new_text)]))  # type: ignore[arg-type]


def finish(ctx: Context, renames: Renames) -> None:
    """After every rename, the import edits they need; or, where those are unsure, no fix."""
    if renames.unsure:
        ctx.hold(renames.unsure[0], CODE)
    elif ctx.migrated:
        try:
            ctx.import_edits, ctx.imports = import_edits(ctx, renames.alias or DEFAULT_PALLAS_ALIAS, add=renames.alias is None)
        except Unsure as reason:
            ctx.hold(str(reason), CODE)


def _pallas_alias(tree: ast.Module) -> str | None:
    """The first module-level name bound to `jax.experimental.pallas` (as evidence.py finds it)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == "jax.experimental.pallas" and alias.asname:
                    return alias.asname
        elif isinstance(statement, ast.ImportFrom) and statement.module == "jax.experimental" and not statement.level:
            for alias in statement.names:
                if alias.name == "pallas":
                    return alias.asname or "pallas"
    return None


def _references(ctx: Context, unsure: list[str]) -> Iterator[Reference]:
    """Every reference to a deprecated TPU semaphore function that is a call's callee or an
    attribute passed to a call; for any other, a reason in `unsure` (an import edit could
    then break it)."""
    scopes = ctx.scopes
    at_call = {id(call.func): scopes.scope_of[id(call)] for call in scopes.calls}
    at_call.update(  # `partial(pltpu.semaphore_wait, ...)`, spelled with the function's own name
        (id(argument), scopes.scope_of[id(call)])
        for call in scopes.calls
        for argument in (*call.args, *(keyword.value for keyword in call.keywords))
        if getattr(argument, "attr" if type(argument) is ast.Attribute else "id", None) in FUNCTIONS
    )
    nodes = list(ast.walk(ctx.tree))  # type: ignore[arg-type]
    imported_as = {  # `from jax.experimental.pallas.tpu import semaphore_read as read_sem`
        alias.asname or alias.name
        for node in nodes
        if isinstance(node, ast.ImportFrom) and node.module == "jax.experimental.pallas.tpu"
        for alias in node.names
        if alias.name in FUNCTIONS
    }
    for node in nodes:
        if isinstance(node, ast.Attribute):
            if node.attr not in FUNCTIONS:
                continue
        elif not isinstance(node, ast.Name) or node.id not in FUNCTIONS | imported_as:
            continue
        elif isinstance(node.ctx, ast.Store):
            continue  # `semaphore_wait = ...` binds a name of this module: no reference to the TPU one
        scope = at_call.get(id(node))
        if scope is None:
            if isinstance(node, ast.Attribute) and not isinstance(_root(node), ast.Name):
                continue  # `f().semaphore_wait`: resolves to no import
            unsure.append("a reference outside a call")
            continue
        names = ctx.qualified(node, scope)
        if names and len(names) == 1 and next(iter(names)) in DEPRECATED_TPU:
            yield Reference(node, scope, DEPRECATED_TPU[next(iter(names))])


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined,return-value]


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _bound(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]


_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass
class _Site:
    """An import statement binding a rewritten reference's root name: where it sits."""

    statement: ast.Import | ast.ImportFrom
    scope: ast.AST | None  # its function, None at module level
    body: list[ast.stmt]  # the statement list that holds it
    names: set[str]  # the root names it binds


class _Uses(ast.NodeVisitor):
    """The imports of `names` and their loads, each with its chain of function scopes.
    Anything else that binds one of `names` (or a class-level import of one) is Unsure."""

    def __init__(self, names: set[str]) -> None:
        self.names, self.chain = names, ()  # type: tuple[ast.AST, ...]
        self.sites: list[_Site] = []
        self.loads: list[tuple[ast.Name, tuple[ast.AST, ...]]] = []
        self.body: list[ast.stmt] = []
        self.in_class = False

    def generic_visit(self, node: ast.AST) -> None:
        for _, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                outer, self.body = self.body, value
                for statement in value:
                    self.visit(statement)
                self.body = outer
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda):
            self._binds(node.name)
            for outside in (*node.decorator_list, node.returns):
                if outside is not None:
                    self.visit(outside)
        arguments = node.args
        for outside in (*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)):
            self.visit(outside)
        for argument in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg):
            if argument is not None:
                self._binds(argument.arg)
                if argument.annotation is not None:
                    self.visit(argument.annotation)
        outer, in_class, self.chain, self.in_class = self.chain, self.in_class, (*self.chain, node), False
        if isinstance(node, ast.Lambda):
            self.visit(node.body)
        else:
            outer_body, self.body = self.body, node.body
            for statement in node.body:
                self.visit(statement)
            self.body = outer_body
        self.chain, self.in_class = outer, in_class

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._binds(node.name)
        in_class, self.in_class = self.in_class, True
        self.generic_visit(node)
        self.in_class = in_class

    def _binds(self, name: str | None) -> None:
        if name in self.names:
            raise Unsure("the imported name is rebound")

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        bound = {_bound(alias, node) for alias in node.names} & self.names
        if bound:
            if self.in_class:
                raise Unsure("an import in a class body")
            self.sites.append(_Site(node, self.chain[-1] if self.chain else None, self.body, bound))

    visit_Import = visit_ImportFrom = _import

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.names:
            if not isinstance(node.ctx, ast.Load):
                raise Unsure("the imported name is rebound")
            self.loads.append((node, self.chain))

    def visit_Global(self, node: ast.Global | ast.Nonlocal) -> None:
        if self.names & set(node.names):
            raise Unsure("the imported name is rebound")

    visit_Nonlocal = visit_Global

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        self._binds(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.AST) -> None:
        self._binds(getattr(node, "name", None))
        self.generic_visit(node)

    visit_MatchStar = visit_MatchAs

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and any(re.search(rf"\b{name}\b", node.value) for name in self.names):
            raise Unsure("a string may name the import")  # libcst reads string annotations

    def visit_Expr(self, node: ast.Expr) -> None:
        if not (isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            self.visit(node.value)  # a docstring names nothing


def import_edits(ctx: Context, alias: str, *, add: bool) -> tuple[list[tuple[int, int, str]], ImportChanges]:
    """The import edits the renames (`ctx.migrated`) need (see semfix/imports.py), as text
    edits, and their declaration; `add`: the pallas import is to be added, as `alias`. The
    analysis is the `ast`'s; each import statement to cut down is parsed alone by libcst and
    edited by imports.without_unused. Unsure for the rare placements it does not handle (the
    findings are then reported without a fix)."""
    tree: ast.Module = ctx.tree  # type: ignore[assignment]
    text, starts = ctx.text.text, ctx.text.starts
    changes = ImportChanges(add_pallas_as=alias if add else None, migrated_to=alias)
    roots = [_root(node) for node in ctx.migrated]
    names = {root.id for root in roots}  # type: ignore[attr-defined]
    uses = _Uses(names)
    uses.visit(tree)
    scopes_of: dict[str, set[ast.AST | None]] = {}
    for site in uses.sites:
        for name in site.names:
            scopes_of.setdefault(name, set()).add(site.scope)

    def resolve(name: str, chain: tuple[ast.AST, ...]) -> ast.AST | None | bool:
        for scope in (*reversed(chain), None):
            if scope in scopes_of.get(name, ()):
                return scope
        return False

    chains = {id(node): chain for node, chain in uses.loads}
    resolved = {(root.id, resolve(root.id, chains[id(root)])) for root in roots}  # type: ignore[attr-defined]
    bound_by = [s for s in uses.sites if any((n, s.scope) in resolved for n in s.names)]
    rewritten_ids = {id(root) for root in roots}
    still_used = {(node.id, resolve(node.id, chain)) for node, chain in uses.loads if id(node) not in rewritten_ids}
    first_newline = _NEWLINE.search(text)
    newline = first_newline.group() if first_newline else "\n"
    new_import = f"from jax.experimental import pallas as {alias}{newline}"
    edits: list[tuple[int, int, str]] = []
    emptied: dict[int, int] = {}
    kept_at_module: list[ast.stmt] = []
    placed = False
    for site in bound_by:
        statement = site.statement
        start, end = _own_lines(text, starts, statement)
        indent = text[start : start + statement.col_offset]
        unused = {name for name in site.names if (name, site.scope) not in still_used}
        new_text = text[start:end]
        if unused:
            new_text = _cut_down(text[start + statement.col_offset : end], unused)
            new_text = "" if new_text is None else indent + new_text
            changes.dropped.setdefault(statement.lineno, set()).update(unused)
        local = add and site.scope is not None
        swap = add and site.scope is None and site.body is tree.body and not new_text and not placed
        index = next(i for i, s in enumerate(site.body) if s is statement)
        if not new_text and not (local or swap):
            emptied[id(site.body)] = emptied.get(id(site.body), 0) + 1
            if emptied[id(site.body)] == len(site.body) or (index == len(site.body) - 1 and _gap(site.body, index)):
                raise Unsure("an import dropped at the end of a block")
        if local or swap:
            new_text = indent + new_import + new_text
            changes.added += 1
            placed = placed or swap
        elif new_text and site.scope is None and site.body is tree.body:
            kept_at_module.append(statement)
        if new_text != text[start:end]:
            edits.append((start, end, new_text))
    if add and any(s.scope is None for s in bound_by) and not placed:
        if not kept_at_module:
            raise Unsure("no import block to put the pallas import in")
        edits.append(_insert_sorted(tree, text, starts, min(kept_at_module, key=lambda s: s.lineno), new_import))
        changes.added += 1
    return edits, changes


def _own_lines(text: str, starts: list[int], statement: ast.stmt) -> tuple[int, int]:
    """The statement's lines (with the line break), or Unsure if it shares them."""
    start = starts[statement.lineno - 1]
    end = starts[statement.end_lineno] if statement.end_lineno < len(starts) else len(text)  # type: ignore[operator]
    before = text[start : start + statement.col_offset]
    after = text[starts[statement.end_lineno - 1] + statement.end_col_offset : end]  # type: ignore[operator]
    if before.strip(" \t\f") or not re.fullmatch(r"[ \t\f]*(#[^\r\n]*)?(\r\n|\r|\n)", after):
        raise Unsure("an import that shares its line")
    return start, end


def _gap(body: list[ast.stmt], index: int) -> bool:
    """Lines (blank or comments) between the previous statement and this one: libcst drops
    them with the last statement of a block, which a text edit of the statement's lines keeps."""
    return index == 0 or body[index - 1].end_lineno + 1 != body[index].lineno  # type: ignore[operator]


def _cut_down(snippet: str, unused: set[str]) -> str | None:
    """The import statement (its text from its first token to its line break) minus `unused`,
    edited by libcst."""
    import libcst as cst

    from semfix.imports import without_unused

    statement = snippet.rstrip("\r\n")
    module = cst.parse_module(statement + "\n")  # libcst loses a lone `\r` at the end of a module
    kept = without_unused(module.body[0], unused)  # type: ignore[arg-type]
    return None if kept is None else module.with_changes(body=[kept]).code[:-1] + snippet[len(statement) :]


def _insert_sorted(tree: ast.Module, text: str, starts: list[int], anchor: ast.stmt, new_import: str) -> tuple[int, int, str]:
    """Where imports.place_in_block puts the pallas import in the module-level block of imports
    around `anchor`."""
    from semfix.imports import place_in_block, sorts_before_pallas

    body = tree.body

    def alone(statement: ast.stmt) -> bool:
        try:
            _own_lines(text, starts, statement)
        except Unsure:
            return False
        return True

    imports = [isinstance(s, (ast.Import, ast.ImportFrom)) and s.names[0].name != "*" and alone(s) for s in body]
    blank = [i > 0 and any(not text[starts[n - 1] : starts[n]].strip() for n in range(body[i - 1].end_lineno + 1, s.lineno)) for i, s in enumerate(body)]  # type: ignore[operator]

    def before(i: int) -> bool:
        s = body[i]
        plain = isinstance(s, ast.Import)
        return sorts_before_pallas(plain, None if plain or s.level else s.module)  # type: ignore[union-attr]

    start, at = place_in_block(body.index(anchor), imports, blank, before)
    if at == start:
        offset = starts[body[start].lineno - 1]
    else:
        offset = _own_lines(text, starts, body[at - 1])[1]
    return offset, offset, new_import
