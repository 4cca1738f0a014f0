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
import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from semfix.engine.context import Context
from semfix.engine.nodes import LINE_BREAK, Rewrite, holder
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
PALLAS_PARENT = "jax.experimental"  # `from jax.experimental import pallas as <alias>`
FUNCTIONS = frozenset(DEPRECATED_TPU.values())
_MESSAGE = "`{old}` was deprecated in JAX 0.10 and removed in 0.11; use `{new}`"


class Unsure(Exception):
    """The import edits are not sure here, so SEM101 reports without fixing: a reference outside
    a call, a name bound by more than its imports, an import in a class body or sharing its line,
    a block an import would leave empty, no import block for the pallas import."""


@dataclass
class ImportChanges:
    """SEM101's fix as the proof sees it: each node whose id is a key becomes the nodes given (a
    reference its `pl.` spelling; an import statement none, itself cut down, or the pallas
    import beside it). `apply` turns the old tree into the declared one."""

    replaced: dict[int, tuple[ast.AST, list[ast.AST]]] = field(default_factory=dict)  # the old node too: its id stays its
    holders: dict[int, ast.AST] = field(default_factory=dict)  # the nodes holding them, by id

    def replace(self, node: ast.AST, new: list[ast.AST], holder: ast.AST) -> None:
        self.replaced[id(node)] = node, new
        self.holders[id(holder)] = holder

    def add(self, statement: ast.stmt, new: ast.stmt, holder: ast.AST, *, before: bool) -> None:
        now = self.replaced.get(id(statement), (statement, [statement]))[1]
        self.replace(statement, [new, *now] if before else [*now, new], holder)

    def apply(self) -> None:
        """Make the declared tree, in place: each replaced node swapped in its holder."""
        for node in self.holders.values():
            for name, value in ast.iter_fields(node):
                if isinstance(value, list):
                    if any(id(item) in self.replaced for item in value):
                        value[:] = [new for item in value for new in self.replaced.get(id(item), (item, [item]))[1]]
                elif isinstance(value, ast.AST) and id(value) in self.replaced:
                    setattr(node, name, self.replaced[id(value)][1][0])


@dataclass
class Reference:
    node: ast.Name | ast.Attribute
    scope: Scope
    function: str  # semaphore_signal, semaphore_wait or semaphore_read
    holder: ast.AST  # the call (or keyword) it is in


@dataclass
class Renames:
    """The file's references still to rename, last first, and what the renames need."""

    pending: list[Reference] = field(default_factory=list)
    alias: str | None = None  # the module-level name of the pallas module, if the file has one
    unsure: list[str] = field(default_factory=list)  # why the import edits cannot be made sure of
    nodes: list[ast.AST] = field(default_factory=list)  # every node of the tree


def renames(ctx: Context) -> Renames:
    """The references to rename, when SEM101 may apply (`ctx.tree` is set then)."""
    found = Renames()
    if CODE in ctx.settings.enabled and ctx.tree is not None:
        found.nodes = list(ast.walk(ctx.tree))
        found.pending = sorted(_references(ctx, found), key=lambda r: _end(r.node), reverse=True)
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
            ctx.imports = ctx.imports or ImportChanges()
            spelled = ast.Attribute(ast.Name(alias, ast.Load()), reference.function, ast.Load())
            ctx.imports.replace(reference.node, [spelled], reference.holder)


def finish(ctx: Context, renames: Renames) -> None:
    """After every rename, the import edits they need; or, where those are unsure, no fix."""
    if renames.unsure:
        ctx.hold(renames.unsure[0], CODE)
    elif ctx.migrated:
        try:
            ctx.import_edits = import_edits(ctx, renames)
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


def _references(ctx: Context, found: Renames) -> Iterator[Reference]:
    """Every reference to a deprecated TPU semaphore function that is a call's callee or an
    attribute passed to a call; for any other, a reason in `found.unsure` (an import edit
    could then break it)."""
    scopes = ctx.scopes
    at_call: dict[int, tuple[Scope, ast.AST]] = {id(call.func): (scopes.scope_of[id(call)], call) for call in scopes.calls}
    at_call.update(  # `partial(pltpu.semaphore_wait, ...)`, spelled with the function's own name
        (id(argument), (scopes.scope_of[id(call)], holder))
        for call in scopes.calls
        for argument, holder in (*((a, call) for a in call.args), *((k.value, k) for k in call.keywords))
        if getattr(argument, "attr" if type(argument) is ast.Attribute else "id", None) in FUNCTIONS
    )
    nodes = found.nodes
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
        if id(node) not in at_call:
            if isinstance(node, ast.Attribute) and not isinstance(_root(node), ast.Name):
                continue  # `f().semaphore_wait`: resolves to no import
            found.unsure.append("a reference outside a call")
            continue
        scope, holder = at_call[id(node)]
        names = ctx.qualified(node, scope)
        if names and len(names) == 1 and next(iter(names)) in DEPRECATED_TPU:
            yield Reference(node, scope, DEPRECATED_TPU[next(iter(names))], holder)


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
    """An import statement a renamed reference resolves to: where it sits, what of it goes."""

    statement: ast.Import | ast.ImportFrom
    local: bool  # in a function (else at module level, perhaps under an `if` or a `try`)
    holder: ast.AST  # the node whose statement list holds it
    body: list[ast.stmt]  # that list
    unused: set[str]  # the names it binds that only renamed references read


def _sites(ctx: Context, nodes: list[ast.AST]) -> list[_Site]:
    """The imports the renamed references (`ctx.migrated`) resolve to in the engine's scopes,
    in source order. Unsure where one of their names may be bound by more than imports, in a
    class body, or named in a string (a string annotation may read it)."""
    names = {_root(node).id for node in ctx.migrated}  # type: ignore[attr-defined]
    renamed = {id(_root(node)) for node in ctx.migrated}
    resolved: dict[int, tuple[ast.stmt, bool]] = {}
    used: set[tuple[str, int]] = set()
    accesses = ctx.tracking().accesses
    for name in names:
        for access in accesses.get(name, ()):
            owner, bindings = access.scope.lookup(name)
            if any(b.kind != "import" for b in bindings) or access.context is ast.Del and not access.steps:
                raise Unsure("the imported name is rebound")
            if owner is not None and owner.kind == "class":
                raise Unsure("an import in a class body")
            for binding in bindings:
                if id(access.name) in renamed:
                    resolved[id(binding.node)] = (binding.node, owner.kind == "function")  # type: ignore[union-attr,assignment]
                else:
                    used.add((name, id(binding.node)))
    strings: set[int] = set()  # a statement that is only a string (a docstring) names nothing
    named = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")\b")
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names.intersection(node.names):
            raise Unsure("the imported name is rebound")
        if isinstance(node, ast.Expr):
            strings.add(id(node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in strings and named.search(node.value):
            raise Unsure("a string may name the import")
    sites = sorted(resolved.values(), key=lambda site: (site[0].lineno, site[0].col_offset))
    cache: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    return [
        _Site(s, local, *holder(ctx.tree, s, cache), {n for a in s.names if (n := _bound(a, s)) in names and (n, id(s)) not in used})  # type: ignore[arg-type,attr-defined]
        for s, local in sites
    ]


def _pallas_import(alias: str) -> ast.ImportFrom:
    return ast.ImportFrom(PALLAS_PARENT, [ast.alias("pallas", alias)], 0)


def import_edits(ctx: Context, renames: Renames) -> list[tuple[int, int, str]]:
    """The import edits the renames (`ctx.migrated`) need (see semfix/rewrite/imports.py), as text
    edits, declared in `ctx.imports`; the pallas import is added where the file has none. Each
    import statement to cut down is parsed alone by libcst and edited by
    imports.without_unused. Unsure for the rare placements it does not handle (the findings
    are then reported without a fix)."""
    tree: ast.Module = ctx.tree  # type: ignore[assignment]
    declared: ImportChanges = ctx.imports  # type: ignore[assignment]
    text, starts = ctx.text.text, ctx.text.starts
    sites = _sites(ctx, renames.nodes)
    alias, add = renames.alias or DEFAULT_PALLAS_ALIAS, renames.alias is None
    newline = _NEWLINE.search(text + "\n").group()  # type: ignore[union-attr]  # the file's first line break
    new_import = f"from jax.experimental import pallas as {alias}{newline}"
    edits: list[tuple[int, int, str]] = []
    emptied: dict[int, int] = {}
    kept_at_module: list[ast.stmt] = []
    placed = False
    for site in sites:
        statement = site.statement
        lines = _own_lines(text, starts, statement)
        if lines is None:
            raise Unsure("an import that shares its line")
        start, end = lines
        indent = text[start : start + statement.col_offset]
        new_text = text[start:end]
        if site.unused:
            new_text = _cut_down(text[start + statement.col_offset : end], site.unused)
            new_text = "" if new_text is None else indent + new_text
            cut = copy.copy(statement)
            cut.names = [a for a in statement.names if _bound(a, statement) not in site.unused]
            declared.replace(statement, [cut] if cut.names else [], site.holder)
        local = add and site.local
        swap = add and not site.local and site.body is tree.body and not new_text and not placed
        index = next(i for i, s in enumerate(site.body) if s is statement)
        if not new_text and not (local or swap):
            emptied[id(site.body)] = emptied.get(id(site.body), 0) + 1
            if emptied[id(site.body)] == len(site.body) or (index == len(site.body) - 1 and _gap(site.body, index)):
                raise Unsure("an import dropped at the end of a block")
        if local or swap:
            new_text = indent + new_import + new_text
            declared.add(statement, _pallas_import(alias), site.holder, before=True)
            placed = placed or swap
        elif new_text and not site.local and site.body is tree.body:
            kept_at_module.append(statement)
        if new_text != text[start:end]:
            edits.append((start, end, new_text))
    if add and any(not s.local for s in sites) and not placed:
        if not kept_at_module:
            raise Unsure("no import block to put the pallas import in")
        edits.append(_insert_sorted(ctx, min(kept_at_module, key=lambda s: s.lineno), new_import, alias))
    return edits


def _own_lines(text: str, starts: list[int], statement: ast.stmt) -> tuple[int, int] | None:
    """The statement's lines (with the line break); None if it shares them."""
    start = starts[statement.lineno - 1]
    end = starts[statement.end_lineno] if statement.end_lineno < len(starts) else len(text)  # type: ignore[operator]
    before = text[start : start + statement.col_offset]
    after = text[starts[statement.end_lineno - 1] + statement.end_col_offset : end]  # type: ignore[operator]
    if before.strip(" \t\f") or not re.fullmatch(r"[ \t\f]*(#[^\r\n]*)?(\r\n|\r|\n)", after):
        return None
    return start, end


def _gap(body: list[ast.stmt], index: int) -> bool:
    """Lines (blank or comments) between the previous statement and this one: libcst drops
    them with the last statement of a block, which a text edit of the statement's lines keeps."""
    return index == 0 or body[index - 1].end_lineno + 1 != body[index].lineno  # type: ignore[operator]


def _cut_down(snippet: str, unused: set[str]) -> str | None:
    """The import statement (its text from its first token to its line break) minus `unused`,
    edited by libcst."""
    import libcst as cst

    from semfix.rewrite.imports import without_unused

    statement = snippet.rstrip("\r\n")
    module = cst.parse_module(statement + "\n")  # libcst loses a lone `\r` at the end of a module
    kept = without_unused(module.body[0], unused)  # type: ignore[arg-type]
    return None if kept is None else module.with_changes(body=[kept]).code[:-1] + snippet[len(statement) :]


def _insert_sorted(ctx: Context, anchor: ast.stmt, new_import: str, alias: str) -> tuple[int, int, str]:
    """The pallas import at its sorted place in the module-level block of imports around
    `anchor` (imports alone on their lines, no blank line between), declared in `ctx.imports`."""
    body, text, starts = ctx.tree.body, ctx.text.text, ctx.text.starts  # type: ignore[union-attr]

    def imported(i: int) -> bool:
        s = body[i]
        return isinstance(s, (ast.Import, ast.ImportFrom)) and s.names[0].name != "*" and _own_lines(text, starts, s) is not None

    def gap(i: int) -> bool:  # a blank line between body[i - 1] and body[i]
        return any(not text[starts[n - 1] : starts[n]].strip() for n in range(body[i - 1].end_lineno + 1, body[i].lineno))  # type: ignore[operator]

    start = end = body.index(anchor)
    while start > 0 and imported(start - 1) and not gap(start):
        start -= 1
    while end + 1 < len(body) and imported(end + 1) and not gap(end + 1):
        end += 1
    at = max((i + 1 for i in range(start, end + 1) if _sorts_first(body[i])), default=start)  # type: ignore[arg-type]
    if at == start:
        offset = starts[body[start].lineno - 1]
        ctx.imports.add(body[start], _pallas_import(alias), ctx.tree, before=True)  # type: ignore[union-attr,arg-type]
    else:
        offset = _own_lines(text, starts, body[at - 1])[1]  # type: ignore[index]
        ctx.imports.add(body[at - 1], _pallas_import(alias), ctx.tree, before=False)  # type: ignore[union-attr,arg-type]
    return offset, offset, new_import


def _sorts_first(statement: ast.Import | ast.ImportFrom) -> bool:
    """Would isort put this import ahead of `from jax.experimental import pallas`? `import x`
    lines come before `from` lines within a section, which are sorted by module."""
    if isinstance(statement, ast.Import):
        return True
    module: str = statement.module  # type: ignore[assignment]  # a relative import has level > 0
    return not statement.level and (module == "__future__" or module.lower() <= PALLAS_PARENT)
