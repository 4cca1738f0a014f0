'''SEM101 deprecated-tpu-semaphore-op

## What it does
Rewrites `pltpu.semaphore_signal`, `pltpu.semaphore_wait` and `pltpu.semaphore_read` to the
`pl.semaphore_*` functions, adding or reusing the file's pallas import and dropping TPU imports
left unused (kept while the file reads `jax.experimental.pallas.tpu` through a parent package,
which only an import of the TPU module makes exist). Off by default: select it (`--select SEM101` or `extend-select`).

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
Safe: the `pl` functions are the very functions the `pltpu` names now give. Every reference
is renamed, in a call or not (`WAIT = pltpu.semaphore_wait`, a dict of them, an argument of
`functools.partial`); one in an f-string or over several lines is reported without a fix. The
added import goes where the `pltpu` import was (a function-local import stays local). A
reference that may run on import before the pallas import binds its alias (at module level,
in a class body, a decorator or a default argument, or in a function called there) is
reported without a fix.

An import is dropped only when nothing but renamed references reads its name, and no string
other than a docstring spells it (a string annotation such as `"pltpu.SemaphoreType"` may read
it): such an import stays, unused. Strings matter for nothing else: a file whose imports all
stay is fixed whatever its strings say. No fix is made in a file that assigns or deletes one
of the deprecated functions (`pltpu.semaphore_wait = f`: the others may then mean `f`), or
where a name an import edit touches is declared `global` or `nonlocal`, or imported in a class
body; each reason names the line that causes it. A name bound otherwise in another scope
(`pltpu = 1` in another function) is another variable, and changes nothing.
'''

from __future__ import annotations

import ast
import copy
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from semfix.analysis.context import Context
from semfix.analysis.fixes import Decision
from semfix.analysis.nodes import LINE_BREAK, Rewrite, Text, holder, unchain
from semfix.analysis.scopes import Scope
from semfix.rewrite.imports import ImportChanges, without_unused
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
    # the reference renamed resolves to `jax.experimental.pallas.tpu.semaphore_*`: the file spells
    # `tpu` (in the import) and the function's name (in the import or the attribute)
    text_gate=("tpu", "semaphore_(?:signal|wait|read)"),
    needs_tree=True,  # it looks at every reference, not only catalog calls' arguments
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
FUNCTIONS = frozenset(DEPRECATED_TPU.values())
DEFAULT_PALLAS_ALIAS = "pl"
PALLAS = "jax.experimental.pallas"
PALLAS_PARENT = "jax.experimental"  # `from jax.experimental import pallas as <alias>`
TPU = "jax.experimental.pallas.tpu"  # the module every import SEM101 may drop loads


class Unsure(Exception):
    """The import edits are not sure here: SEM101 reports without fixing."""


@dataclass
class Reference:
    node: ast.Name | ast.Attribute
    scope: Scope
    function: str  # semaphore_signal, semaphore_wait or semaphore_read
    holder: ast.AST  # the node it is in (a call, a keyword, an assignment...)
    formatted: bool = False  # in an f-string, whose text the edits do not model


@dataclass
class Renames:
    """The file's references still to rename, last first, and what the renames need."""

    pending: list[Reference] = field(default_factory=list)
    alias: str | None = None  # the module-level name of the pallas module, if the file has one
    unsure: list[str] = field(default_factory=list)  # why the import edits cannot be made sure of
    at_module: list[tuple[ast.Name, Scope]] = field(default_factory=list)  # renamed reads of a module-level import
    nodes: list[ast.AST] = field(default_factory=list)  # every node of the tree
    made: list[Rewrite] = field(default_factory=list)  # the accepted renames: one decision with the import edits
    findings: list[int] = field(default_factory=list)  # their findings, by index


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
        message = f"`{ctx.text.of(reference.node)}` was deprecated in JAX 0.10 and removed in 0.11; use `{new_text}`"
        owner, bindings = reference.scope.lookup(alias)  # the pallas import, or free for the one to add
        usable = not bindings if renames.alias is None else owner is not None and owner.kind == "module" and [
            b.qualname for b in bindings
        ] == [PALLAS]  # a function's own pallas import may come below the reference
        if not usable:
            ctx.report(CODE, reference.node, message + f" (not fixed: `{alias}` means something else here)", None)
            continue
        tree: ast.Module = ctx.tree  # type: ignore[assignment]
        if renames.alias is not None and _runs_first(tree, reference.node, reference.scope, tree.body.index(bindings[0].node)):  # type: ignore[arg-type]
            ctx.report(CODE, reference.node, message + f" (not fixed: {RUNS_FIRST.format(alias)})", None)
            continue
        start, end = ctx.text.start(reference.node)[2], ctx.text.end(reference.node)[2]
        if LINE_BREAK.search(ctx.text.text, start, end) or reference.formatted:
            where = "in an f-string" if reference.formatted else "a reference over several lines"
            ctx.report(CODE, reference.node, message + f" (not fixed: {where})", None)
        elif ctx.report(CODE, reference.node, message, new_text):
            ctx.migrated.append(reference.node)
            renames.made.append(Rewrite(None, reference.node, reference.node, [(start, end, new_text)]))  # type: ignore[arg-type]
            renames.findings.append(len(ctx.findings) - 1)
            ctx.imports = ctx.imports or ImportChanges()
            spelled = ast.Attribute(ast.Name(alias, ast.Load()), reference.function, ast.Load())
            ctx.imports.replace(reference.node, [spelled], reference.holder)


def finish(ctx: Context, renames: Renames) -> None:
    """After every rename, the import edits they need; or, where those are unsure, no fix."""
    if renames.unsure:
        ctx.hold(renames.unsure[0], CODE)
    elif ctx.migrated:
        try:
            edits = import_edits(ctx, renames)
        except Unsure as reason:
            ctx.hold(str(reason), CODE)
            return
        renamed = [edit for rewrite in renames.made for edit in rewrite.edits]
        # one decision: every rename with the import edits, the tree declared in `ctx.imports`
        changes = (*renames.made, ctx.imports)
        ctx.make(Decision(CODE, (*renamed, *edits), changes, settles=False, findings=tuple(renames.findings)))  # type: ignore[arg-type]


RUNS_FIRST = "it may run on import before `{}` is imported"


def _runs_first(tree: ast.Module, node: ast.AST, scope: Scope, at: int) -> bool:
    """May `node` (read in `scope`) run on import before `tree.body[at]`, where the pallas alias
    gets bound? Yes if it is above it and runs on import itself (at module level, in a class
    body, a decorator, a default argument), or is in a function there that code above `at`
    may call (anything but imports and plain function definitions may)."""
    index = next(i for i, s in enumerate(tree.body) if (s.end_lineno, s.end_col_offset) >= (node.lineno, node.col_offset))  # type: ignore[attr-defined,operator]
    if index >= at:
        return False
    while scope.kind != "function":
        if scope.parent is None:
            return True
        scope = scope.parent
    return not all(_quiet(statement) for statement in tree.body[index:at])


def _quiet(statement: ast.stmt) -> bool:
    """Does running this statement call nothing (an import, a def without decorators or calls
    in its defaults and annotations)?"""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        evaluated = [statement.args, *([statement.returns] if statement.returns else [])]
        return not statement.decorator_list and not any(isinstance(n, ast.Call) for e in evaluated for n in ast.walk(e))
    return isinstance(statement, (ast.Import, ast.ImportFrom))


def _pallas_alias(tree: ast.Module) -> str | None:
    """The first module-level name bound to `jax.experimental.pallas` (as evidence.py finds it)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == PALLAS and alias.asname:
                    return alias.asname
        elif isinstance(statement, ast.ImportFrom) and statement.module == PALLAS_PARENT and not statement.level:
            for alias in statement.names:
                if alias.name == "pallas":
                    return alias.asname or "pallas"
    return None


def _references(ctx: Context, found: Renames) -> Iterator[Reference]:
    """Every reference that resolves to a deprecated TPU semaphore function: a call's callee or
    argument, or a value anywhere else (`WAIT = pltpu.semaphore_wait`, a dict of them). Other
    names spelled alike (`pl.semaphore_wait`, `self.semaphore_wait`) are not references to it.
    One that is assigned or deleted (`pltpu.semaphore_wait = f`) may make the others mean
    something else: its line goes in `found.unsure`, and nothing is fixed."""
    imports = [node for node in found.nodes if isinstance(node, (ast.Import, ast.ImportFrom))]
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
        if alias.name == TPU and alias.asname or isinstance(node, ast.ImportFrom) and node.module == PALLAS and alias.name == "tpu"
    }
    candidates: list[ast.Name | ast.Attribute] = [
        node for node in found.nodes
        if isinstance(node, (ast.Name, ast.Attribute))
        and (node.attr in FUNCTIONS if isinstance(node, ast.Attribute) else node.id in imported)
        and not (isinstance(node, ast.Name) and type(node.ctx) is ast.Store)  # binds a name of this module
        and _may_be_tpu(node, modules)
    ]
    if not candidates:
        return
    scopes: dict[int, Scope] = {}  # by id() of a candidate's root name
    for call in ctx.scopes.calls:  # most are calls or their arguments: no need to track accesses
        for node in (call.func, *call.args, *(k.value for k in call.keywords)):
            scopes[id(unchain(node)[0])] = ctx.scopes.scope_of[id(call)]
    roots = [unchain(node)[0] for node in candidates]
    if any(id(root) not in scopes for root in roots):
        scopes.update((id(a.name), a.scope) for accesses in ctx.tracking().accesses.values() for a in accesses)
    wanted = {id(node) for node in candidates}
    holders = {id(child): parent for parent in found.nodes for child in ast.iter_child_nodes(parent) if id(child) in wanted}
    formatted = {id(n) for s in found.nodes if isinstance(s, ast.JoinedStr) for n in ast.walk(s)}
    for node, root in zip(candidates, roots):
        scope = scopes[id(root)]
        names = ctx.qualified(node, scope) or set()
        if len(names) != 1 or (name := names.pop()) not in DEPRECATED_TPU:
            continue
        if type(node.ctx) is not ast.Load:
            found.unsure.append(f"`{ctx.text.of(node)}` is assigned or deleted at line {node.lineno}")
        else:
            yield Reference(node, scope, DEPRECATED_TPU[name], holders[id(node)], id(node) in formatted)


def _may_be_tpu(node: ast.Name | ast.Attribute, modules: set[str]) -> bool:
    """Could `node` name a function of the TPU module: a name imported from it (the caller
    checks), `pltpu.f` with `pltpu` a name of the TPU module, or `<...>.tpu.f`?"""
    root, steps, _ = unchain(node)
    if not isinstance(root, ast.Name) or None in steps:
        return False  # `f().semaphore_wait`, `x[0].semaphore_wait`: no import's
    return not steps or steps[-2:-1] == ("tpu",) or (len(steps) == 1 and root.id in modules)


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined,return-value]


def _bound(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]


@dataclass
class _Site:
    """An import statement a renamed reference resolves to: where it sits, what of it stays."""

    statement: ast.Import | ast.ImportFrom
    local: bool  # in a function (else at module level, perhaps under an `if` or a `try`)
    holder: ast.AST  # the node whose statement list holds it
    body: list[ast.stmt]  # that list
    keep: list[bool]  # per name it binds: False when only renamed references read it


def _sites(ctx: Context, renames: Renames) -> list[_Site]:
    """The imports the renamed references (`ctx.migrated`) resolve to in the engine's scopes,
    in source order (their reads of module-level ones noted in `renames.at_module`). A read of
    one of their names bound otherwise there reads another variable. Unsure where one is
    imported in a class body or declared global or nonlocal (the reason names the line). A name
    a string spells (other than a docstring: a string annotation may read it) keeps its import."""
    roots: list[ast.Name] = [unchain(node)[0] for node in ctx.migrated]  # type: ignore[misc]
    names, renamed = {root.id for root in roots}, {id(root) for root in roots}
    resolved: dict[int, tuple[ast.stmt, bool]] = {}
    used: set[tuple[str, int]] = set()
    accesses = ctx.tracking().accesses
    for name in names:
        for access in accesses.get(name, ()):
            owner, bindings = access.scope.lookup(name)
            if any(b.kind != "import" for b in bindings):
                continue  # another variable (`del` binds too): a renamed reference resolves only to imports
            if owner is not None and owner.kind == "class":
                raise Unsure(f"an import in a class body, read at line {access.name.lineno}")
            for binding in bindings:
                if id(access.name) in renamed:
                    resolved[id(binding.node)] = (binding.node, owner.kind == "function")  # type: ignore[union-attr,assignment]
                    if owner.kind == "module":  # type: ignore[union-attr]
                        renames.at_module.append((access.name, access.scope))
                else:
                    used.add((name, id(binding.node)))
    strings: set[int] = set()  # a statement that is only a string (a docstring) names nothing
    named = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")\b")
    spelled: set[str] = set()  # the names strings spell: their imports stay
    for node in renames.nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names.intersection(node.names):
            raise Unsure(f"`{min(names.intersection(node.names))}` is declared global or nonlocal at line {node.lineno}")
        if isinstance(node, ast.Expr):
            strings.add(id(node.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in strings:
            spelled.update(named.findall(node.value))
    sites = sorted(resolved.values(), key=lambda site: (site[0].lineno, site[0].col_offset))
    cache: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    loaded = any(  # `jax.experimental.pallas.tpu.X` read through `import jax`: the TPU module must stay imported
        _through_parent(binding.qualname, access.steps)  # type: ignore[arg-type]
        for name, found in accesses.items()
        for access in found
        if id(access.name) not in renamed
        for binding in access.scope.lookup(name)[1]
        if binding.kind == "import"
    )
    return [
        _Site(s, local, *holder(ctx.tree, s, cache), [loaded or (n := _bound(a, s)) not in names or n in spelled or (n, id(s)) in used for a in s.names])  # type: ignore[arg-type,attr-defined]
        for s, local in sites
    ]


def _through_parent(qualname: str, steps: tuple[str | None, ...]) -> bool:
    """Does `qualname` followed by the attribute `steps` reach the TPU module as an attribute of
    a parent package (`jax.experimental.pallas.tpu`, `pallas.tpu`)? That attribute exists only
    while an import of the TPU module runs, so none may be dropped."""
    attributes = [*itertools.takewhile(lambda step: step is not None, steps)]
    dotted = ".".join([qualname, *attributes])
    return TPU.startswith(qualname + ".") and (dotted == TPU or dotted.startswith(TPU + "."))


def _pallas_import(alias: str) -> ast.ImportFrom:
    return ast.ImportFrom(PALLAS_PARENT, [ast.alias("pallas", alias)], 0)


def import_edits(ctx: Context, renames: Renames) -> list[tuple[int, int, str]]:
    """The import edits the renames (`ctx.migrated`) need, placed as semfix/rewrite/imports.py
    says, as text edits declared in `ctx.imports`. Unsure for the rare placements it does not
    handle (the findings are then reported without a fix)."""
    tree: ast.Module = ctx.tree  # type: ignore[assignment]
    declared: ImportChanges = ctx.imports  # type: ignore[assignment]
    text = ctx.text.text
    alias, add = renames.alias or DEFAULT_PALLAS_ALIAS, renames.alias is None
    unbound = [a.name for a in ctx.tracking().accesses.get(alias, ()) if not a.scope.lookup(alias)[1]] if add else []
    if unbound:  # the import added could bind it
        raise Unsure(f"`{alias}` is read where nothing binds it, at line {unbound[0].lineno}")
    newline = re.search(r"\r\n|\r|\n", text + "\n").group()  # type: ignore[union-attr]  # the file's first line break
    new_import = f"from jax.experimental import pallas as {alias}{newline}"
    edits: list[tuple[int, int, str]] = []
    emptied: dict[int, int] = {}
    kept_at_module: list[ast.stmt] = []
    placed = False
    sites = _sites(ctx, renames)
    at: int | None = None  # where the pallas import goes at module level: above tree.body[at]
    for site in sites:
        statement = site.statement
        lines = _own_lines(ctx.text, statement)
        if lines is None:
            raise Unsure(f"an import that shares its line, at line {statement.lineno}")
        start, end = lines
        indent = text[start : start + statement.col_offset]
        new_text = text[start:end]
        if not all(site.keep):
            cut = copy.copy(statement)
            cut.names = [a for a, kept in zip(statement.names, site.keep) if kept]
            new_text = indent + without_unused(text[start + statement.col_offset : end], site.keep) if cut.names else ""
            declared.replace(statement, [cut] if cut.names else [], site.holder)
        at_module = site.body is tree.body  # not under an `if` or a `try`, nor in a function
        local = add and site.local
        swap = add and at_module and not new_text and not placed
        if not new_text and not (local or swap):
            emptied[id(site.body)] = emptied.get(id(site.body), 0) + 1
            index = next(i for i, s in enumerate(site.body) if s is statement)
            # libcst drops the lines (blank or comments) above the last statement of a block with
            # it, which a text edit of the statement's lines keeps
            gap = index == 0 or site.body[index - 1].end_lineno + 1 != statement.lineno  # type: ignore[operator]
            if emptied[id(site.body)] == len(site.body) or (index == len(site.body) - 1 and gap):
                raise Unsure(f"an import dropped at the end of a block, at line {statement.lineno}")
        if local or swap:
            new_text = indent + new_import + new_text
            declared.add(statement, _pallas_import(alias), site.holder, before=True)
            if swap:
                placed, at = True, tree.body.index(statement)
        elif new_text and at_module:
            kept_at_module.append(statement)
        if new_text != text[start:end]:
            edits.append((start, end, new_text))
    if add and not placed and not all(site.local for site in sites):
        if not kept_at_module:
            raise Unsure("no import block to put the pallas import in")
        at, edit = _insert_sorted(ctx, kept_at_module[0], new_import, alias)
        edits.append(edit)
    if at is not None and any(_runs_first(tree, name, scope, at) for name, scope in renames.at_module):
        raise Unsure(f"the `{alias}` import added would go below code that may run a renamed reference on import")
    return edits


def _own_lines(lines: Text, statement: ast.stmt) -> tuple[int, int] | None:
    """The statement's lines (with the line break); None if it shares them."""
    text, start, end = lines.text, lines.starts[statement.lineno - 1], lines.after(statement.end_lineno)  # type: ignore[arg-type]
    before = text[start : start + statement.col_offset]
    after = text[lines.starts[statement.end_lineno - 1] + statement.end_col_offset : end]  # type: ignore[operator]
    if before.strip(" \t\f") or not re.fullmatch(r"[ \t\f]*(#[^\r\n]*)?(\r\n|\r|\n)", after):
        return None
    return start, end


def _insert_sorted(ctx: Context, anchor: ast.stmt, new_import: str, alias: str) -> tuple[int, tuple[int, int, str]]:
    """Above which module-level statement, and as what edit, the pallas import goes at its
    sorted place in the module-level block of imports around `anchor` (imports alone on their
    lines, no blank line between), declared in `ctx.imports`."""
    body, text, starts = ctx.tree.body, ctx.text.text, ctx.text.starts  # type: ignore[union-attr]

    def imported(i: int) -> bool:
        s = body[i]
        return isinstance(s, (ast.Import, ast.ImportFrom)) and s.names[0].name != "*" and _own_lines(ctx.text, s) is not None

    def gap(i: int) -> bool:  # a blank line between body[i - 1] and body[i]
        return any(not text[starts[n - 1] : starts[n]].strip() for n in range(body[i - 1].end_lineno + 1, body[i].lineno))  # type: ignore[operator]

    start = end = body.index(anchor)
    while start > 0 and imported(start - 1) and not gap(start):
        start -= 1
    while end + 1 < len(body) and imported(end + 1) and not gap(end + 1):
        end += 1
    at = max((i + 1 for i in range(start, end + 1) if _sorts_first(body[i])), default=start)  # type: ignore[arg-type]
    before = at == start  # nothing in the block sorts first
    neighbour = body[start] if before else body[at - 1]
    offset = starts[neighbour.lineno - 1] if before else _own_lines(ctx.text, neighbour)[1]  # type: ignore[index]
    ctx.imports.add(neighbour, _pallas_import(alias), ctx.tree, before=before)  # type: ignore[union-attr,arg-type]
    return at, (offset, offset, new_import)


def _sorts_first(statement: ast.Import | ast.ImportFrom) -> bool:
    """Would isort put this import ahead of `from jax.experimental import pallas`? `import x`
    lines come before `from` lines within a section, which are sorted by module."""
    if isinstance(statement, ast.Import):
        return True
    module: str = statement.module  # type: ignore[assignment]  # a relative import has level > 0
    return not statement.level and (module == "__future__" or module.lower() <= PALLAS_PARENT)
