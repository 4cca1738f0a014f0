"""SEM101 deprecated-tpu-semaphore-op

## What it does
Rewrites every name JAX 0.10 deprecated on `pltpu` in this family to `pl`'s name:
`pltpu.semaphore_signal`, `semaphore_wait`, `semaphore_read`, `pltpu.semaphore` (the dtype),
`pltpu.DeviceIdType` (`pltpu.DeviceIdType.MESH` becomes `pl.DeviceIdType.MESH`) and
`pltpu.HOST` and `pltpu.ANY` (the table is `catalog.MOVED_TO_PALLAS`), adding or reusing the file's
pallas import and dropping TPU imports left unused (kept while the file reads `jax.experimental.pallas.tpu`
through a parent package, which only an import of the TPU module makes exist); renames
`pltpu.TPUMemorySpace` to `pltpu.MemorySpace` where it stands (`catalog.RENAMED_ON_TPU`: the module
read stays, no import changes); and reports the TPU enum's `ANY` (`pltpu.MemorySpace.ANY`), removed
in JAX 0.8.2, and its `HOST`, removed in 0.10.2. Off by default: select it (`--select SEM101` or `extend-select`).

## Why is this bad?
The `pltpu` names were deprecated in JAX 0.10, and all but `HOST` were removed in 0.11, where
the kernel fails with `AttributeError` when it is traced (or the module, on import). The list
is JAX's own: `_deprecations` in `jax/experimental/pallas/tpu.py` at 0.10.2 names exactly
these six, each "use pl.<name> instead"; at 0.11.0 the same table maps the five others to
None ("removed in JAX v0.11.0"), and `pltpu.HOST` is still deprecated there (0.11.2 removes it).
(`pltpu.delay` and `pltpu.ANY`, deprecated earlier, are gone from 0.10 already:
a file that still reads them fails there, before any migration.)

## Example
```python
pltpu.semaphore_wait(sem, 1)
```
Use instead:
```python
pl.semaphore_wait(sem, 1)
```

## Fix safety
A rename is made only when the project's JAX floor (`target-jax`, else the `jax` requirement's
lower bound; 0.4.35 when none is declared) is at least the release from which `pl`'s name is
the very object `pltpu`'s gives (`catalog.MOVED_TO_PALLAS`: 0.6.0 for the semaphore functions,
`semaphore` and `DeviceIdType`, 0.7.1 for `ANY`, whose `pltpu` spelling was the TPU enum's own
member before, and 0.10.2 for `HOST`, likewise); below it the finding names the release needed.
`pltpu.ANY` (deprecated in 0.9, removed in 0.10) is renamed as the others are, and
`pltpu.TPUMemorySpace` (deprecated in 0.6.2, removed in 0.7.2) from 0.6.2, where `pltpu.MemorySpace`
appeared as the same enum (one read as a name of its own, or by `getattr`, is reported).
`pltpu.MemorySpace.ANY` (or `TPUMemorySpace.ANY`), a member of the TPU enum in every release that
has it (to 0.8.1), is reported with `pl.ANY` to use, never renamed: `pl.ANY` is a member of
another enum in every JAX, so the rename could change what the program does; so is
`pltpu.MemorySpace.HOST` (to 0.10.1; an AttributeError from 0.10.2, in no deprecation table),
with `pl.HOST`.
Safe: in JAX 0.10.2 each `pltpu` name gives the very object `pl`'s name gives (the same
functions, the same `DeviceIdType` enum, the same `semaphore` dtype, the same `HOST` memory
space), so the program means what it meant. Every reference
is renamed, in a call or not (`WAIT = pltpu.semaphore_wait`, a dict of them, an argument of
`functools.partial`, `getattr(pltpu, "semaphore_wait")` with a constant name); one in an
f-string or over several lines is reported without a fix, and so is one whose module may be
`None` (`except ImportError: pltpu = None`: the rename would make the fallback work where it
failed), and one read through another module of the run (`compat.pltpu.semaphore_wait`:
renaming it would leave that module's import to prune). One that a feature test on the new
name keeps for a JAX without it is compatibility code that runs on every JAX, left alone and
unreported: the `else:` under `if hasattr(pl, "ANY"):` (or of a conditional expression), what
follows `getattr(pl, "semaphore_wait", None) or`, and the handler of a `try:` that reads
`pl.semaphore_wait` (`except AttributeError:`) or imports it from the pallas module (`except
ImportError:`, as a compat module that re-exports the names does).
A name that only `from jax.experimental.pallas.tpu import *` binds is reported: the star gives
it no more once JAX deprecated it (a NameError from 0.10, 0.9 for `ANY`).
The added import goes where the `pltpu` import was when it stands sorted there (a
function-local import stays local), else at its sorted place in that import's block, where
ruff's I001 puts it: `import` lines first, then `from` lines by module and, within a module,
by the name imported (in the third-party section, so semfix never has to tell first-party from
third-party modules). The file's own pallas alias is reused where it has one, and a lazy import
stays lazy. A reference that may run on import before the pallas import binds its
alias (at module level, in a class body, a decorator or a default argument, or in a function
called there) is reported without a fix.

An import is dropped only when nothing but renamed references reads its name, and nothing
semfix cannot see through may read it: a string other than a docstring (a string annotation
such as `"pltpu.SemaphoreType"` may read it), a doctest in a docstring (`doctest` runs it with
the module's names), an IPython magic or shell line of a notebook (masked, it is a comment to
the parser), or the importers of a package's `__init__.py` (`from mypkg import
semaphore_wait`: the command line keeps every module-level import of a file so named, as
ruff's F401 does; `fix_source` callers set `Settings.package_init`), or a sibling module of
the same run that imports the name (`from .sync import DeviceIdType`), or reads it through the
module (`compat.pltpu` after `from ringlib import compat`): the command line reads the run's
imports and keeps those names' module-level imports; `Settings.imported_by_run`;
a file fixed alone has no such importers). Such an import stays,
unused; a name of it that `pl` gives alike at the floor is imported from `jax.experimental.pallas`
instead (`from jax.experimental.pallas.tpu import DeviceIdType` fails on JAX 0.11), in place
where that import stands sorted (else the line is reported). So is one that nothing in the file
reads but a string (`__all__`). An import of a name the TPU module has no more at the newest JAX
(`catalog.TPU_MIGRATIONS`' names, `TPUMemorySpace` too) that nothing reads at all, nor an
importer, is dropped whatever the floor, as ruff's F401 would drop it: the line fails on import
otherwise. One kept for a string or an importer that cannot move (below the floor, or
`TPUMemorySpace`, whose new name is another) is reported.
These matter for nothing else: a file whose imports
all stay is fixed whatever they say. No fix is made in a file that assigns or deletes one
of the deprecated names (`pltpu.semaphore_wait = f`: the others may then mean `f`), or
where a name an import edit touches is declared `global` or `nonlocal`, or imported in a class
body; each reason names the line that causes it. A name bound otherwise in another scope
(`pltpu = 1` in another function) is another variable, and changes nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from semfix.analysis.context import Context
from semfix.analysis.fixes import Change, Decision
from semfix.analysis.nodes import LINE_BREAK, Rewrite, unchain
from semfix.analysis.run_imports import STAR
from semfix.catalog import MIGRATION_GATE, MOVED_TO_PALLAS, TPU_MIGRATIONS, Moved
from semfix.floor import DECLARING
from semfix.jax_versions import Version, spelled
from semfix.rules import sem103
from semfix.rules.base import Invalid, Rule

if TYPE_CHECKING:  # the rule is off by default: its logic's imports load where it is enabled
    from semfix.analysis.importer import ImportChanges
    from semfix.rules.sem101_references import Reference

CODE = "SEM101"

RULE = Rule(
    code=CODE,
    name="deprecated-tpu-semaphore-op",
    summary="pltpu.semaphore_signal/wait/read, pltpu.semaphore, pltpu.DeviceIdType and pltpu.HOST were deprecated in "
    "JAX 0.10 (all but HOST removed in 0.11), pltpu.ANY in 0.9, pltpu.TPUMemorySpace in 0.6.2; use their new names.",
    fix="safe",
    fix_note="the new name, the very same object at the project's JAX floor; the pallas import is reused or added "
    "where ruff's I001 puts it, and imports left unused are dropped; the TPU enum's ANY reported",
    default=False,
    docs=__doc__ or "",
    # the reference renamed resolves to a name JAX 0.10 deprecated on `jax.experimental.pallas.tpu`
    # (`catalog.TPU_MOVED_TO_PALLAS`): see `catalog.MIGRATION_GATE` for what it must spell
    text_gate=MIGRATION_GATE,
    reads_floor=True,
    needs_tree=True,
    drops_imports=True,  # it looks at every reference, not only catalog calls' arguments
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
            target_jax="0.6",
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
            target_jax="0.6",
        ),
    ),
)

# -- the logic: references renamed as text, then the import edits the renames need ---------------

DEFAULT_PALLAS_ALIAS = "pl"


@dataclass
class Renames:
    """The file's references still to rename, last first, and what the renames need."""

    pending: list[Reference] = field(default_factory=list)
    alias: str | None = None  # the module-level name of the pallas module, if the file has one
    unsure: list[str] = field(default_factory=list)  # why the import edits cannot be made sure of
    made: list[Rewrite] = field(default_factory=list)  # the accepted renames: one decision with the import edits
    findings: list[int] = field(default_factory=list)  # their findings, by index
    taken: list[ast.Name | ast.Attribute] = field(default_factory=list)  # the reads the renames took
    declared: ImportChanges | None = None  # the tree the renames and the import edits declare
    drops: sem103.Drops = field(default_factory=lambda: sem103.Drops([], set()))  # SEM103's, same imports
    stale: list[ast.ImportFrom] = field(default_factory=list)  # imports of names the TPU module has no more


def renames(ctx: Context) -> Renames:
    """The references to rename, when SEM101 may apply (`ctx.tree` is set then)."""
    found = Renames()
    if CODE in ctx.settings.enabled and ctx.tree is not None:
        from semfix.analysis.importer import bound_name
        from semfix.rules.sem101_references import PALLAS, TPU, feature_tested, references, stale_imports, star_reads

        guarded = feature_tested(ctx)  # compatibility code, which runs on every JAX
        found.stale = stale_imports(ctx, guarded)
        found.pending = sorted(references(ctx, found.unsure, guarded), key=lambda r: _end(r.node), reverse=True)
        found.alias = bound_name(ctx.tree, PALLAS)
        for name in star_reads(ctx):
            moved = MOVED_TO_PALLAS[name.id]
            assert moved.deprecated is not None  # every name `pl` holds was deprecated on `pltpu` first
            why = f"`{name.id}` comes from `from {TPU} import *`, which gives it no more from JAX"
            why += f" {spelled(moved.deprecated[:2])} (NameError); use `pl.{name.id}`"
            ctx.report(CODE, name, why + " (not fixed: a star import's names are not resolved)", None)
    return found


def rename(ctx: Context, renames: Renames, until: tuple[int, int] | None = None) -> None:
    """Rename the references that end by `until` (all if None): the engine calls this before
    each call's arguments, so findings come in libcst's order (callee, then call)."""
    if not renames.pending:
        return
    while renames.pending and (until is None or _end(renames.pending[-1].node) <= until):
        _rename(ctx, renames, renames.pending.pop())


def _rename(ctx: Context, renames: Renames, reference: Reference) -> None:
    """One reference renamed, or reported where the rename is not sure."""
    from semfix.analysis.importer import ImportChanges, runs_first
    from semfix.rules.sem101_references import PALLAS

    moved = TPU_MIGRATIONS[reference.function]
    if moved.to:
        _rename_in_place(ctx, renames, reference, moved)
        return
    alias = renames.alias or DEFAULT_PALLAS_ALIAS
    new_text = moved.use or f"{alias}.{reference.function}"
    message = _message(ctx, reference, moved, new_text)
    if reference.through:  # the rename would leave the sibling's import to prune, which is its own
        ctx.report(CODE, reference.node, message + " (not fixed: read through another module of the run)", None)
        return
    if moved.same_from is None or ctx.settings.target_jax < moved.same_from:
        why = needs(ctx, new_text, moved.same_from) if moved.same_from else NEVER_THE_SAME.format(new_text)
        ctx.report(CODE, reference.node, message + f" (not fixed: {why})", None)
        return
    owner, bindings = reference.scope.lookup(alias)  # the pallas import, or free for the one to add
    usable = (
        not bindings
        if renames.alias is None
        else owner is not None and owner.kind == "module" and [b.qualname for b in bindings] == [PALLAS.module]
    )  # a function's own pallas import may come below the reference
    if not usable:
        ctx.report(CODE, reference.node, message + f" (not fixed: `{alias}` means something else here)", None)
        return
    if reference.fallback is not None:
        root = _root(reference.read).id
        why = f"`{root}` may be None, bound so at line {reference.fallback}; the rename would change what runs"
        ctx.report(CODE, reference.node, message + f" (not fixed: {why})", None)
        return
    tree = ctx.tree
    assert tree is not None  # SEM101 runs on a parsed tree (`renames`)
    at = None
    if renames.alias is not None:
        statement = bindings[0].node
        # `usable`: the alias's one binding, an import's, whose node is its statement
        assert isinstance(statement, (ast.Import, ast.ImportFrom))
        at = tree.body.index(statement)
    if at is not None and runs_first(tree, reference.node, reference.scope, at):
        ctx.report(CODE, reference.node, message + f" (not fixed: {RUNS_FIRST.format(alias)})", None)
        return
    start, end = ctx.text.start(reference.node)[2], ctx.text.end(reference.node)[2]
    if LINE_BREAK.search(ctx.text.text, start, end) or reference.formatted:
        where = "in an f-string" if reference.formatted else "a reference over several lines"
        ctx.report(CODE, reference.node, message + f" (not fixed: {where})", None)
    elif ctx.report(CODE, reference.node, message, new_text):
        renames.taken.append(reference.read)
        edit = (start, end, new_text)
        renames.made.append(Rewrite(None, reference.node, reference.node, [edit]))  # a rename has no call
        renames.findings.append(len(ctx.findings) - 1)
        renames.declared = renames.declared or ImportChanges()
        new_node = ast.Attribute(ast.Name(alias, ast.Load()), reference.function, ast.Load())
        renames.declared.replace(reference.node, [new_node], reference.holder)


def _message(ctx: Context, reference: Reference, moved: Moved, new_text: str) -> str:
    """What JAX did to the name, and what to use instead."""
    old_text = ctx.text.of(reference.node)
    done = [f"deprecated in JAX {spelled(moved.deprecated)}"] if moved.deprecated else []
    done += [f"removed in {'' if done else 'JAX '}{spelled(moved.removed)}"] if moved.removed else []
    return f"`{old_text}` was {' and '.join(done)}; use `{new_text}`"


def _rename_in_place(ctx: Context, renames: Renames, reference: Reference, moved: Moved) -> None:
    """`pltpu.TPUMemorySpace` to `pltpu.MemorySpace`: the module read stays read, so no import
    is edited; only the attribute is renamed (a name imported by it, or `getattr`'s, is reported)."""
    from semfix.analysis.importer import ImportChanges

    node = reference.node
    attribute = isinstance(node, ast.Attribute)
    new_text = f"{ctx.text.of(node.value)}.{moved.to}" if isinstance(node, ast.Attribute) else moved.to
    message = _message(ctx, reference, moved, new_text)
    start, end = ctx.text.start(node)[2], ctx.text.end(node)[2]
    assert moved.same_from is not None  # an entry with `to` names the release its new name is the same from
    if ctx.settings.target_jax < moved.same_from:
        why = needs(ctx, f"pltpu.{moved.to}", moved.same_from)
    elif not attribute:
        why = f"imported by name: import `{moved.to}` instead" if isinstance(node, ast.Name) else "read by `getattr`"
    elif LINE_BREAK.search(ctx.text.text, start, end) or reference.formatted:
        why = "in an f-string" if reference.formatted else "a reference over several lines"
    else:
        if ctx.report(CODE, node, message, new_text):
            assert isinstance(node, ast.Attribute)  # `attribute`
            renames.made.append(Rewrite(None, node, node, [(start, end, new_text)]))
            renames.findings.append(len(ctx.findings) - 1)
            renames.declared = renames.declared or ImportChanges()
            renames.declared.replace(node, [ast.Attribute(node.value, moved.to, ast.Load())], reference.holder)
        return
    ctx.report(CODE, node, message + f" (not fixed: {why})", None)


NEVER_THE_SAME = (
    "`{}` is not the object it gave in any JAX (another enum's member), so the rename could change what runs"
)


def needs(ctx: Context, new_text: str, release: Version) -> str:
    """Why a rename waits for the project's JAX floor, and how to declare it."""
    floor = spelled(ctx.settings.target_jax)
    said = (
        f"the project's JAX floor is {floor}, from {ctx.settings.target_from}"
        if ctx.settings.target_declared
        else f"no JAX floor is declared ({floor} assumed; no `jax` requirement with a lower bound in "
        f"{', '.join(DECLARING)} up to the repository root)"
    )
    wanted = spelled(release)
    return (
        f"`{new_text}` means the same only from JAX {wanted} and {said}; declare `jax>={wanted}` in the "
        f"project's requirements, `target-jax` in [tool.semfix], or run with `--target-jax {wanted}`"
    )


def skip(renames: Renames, spans: list[tuple[int, int]], ctx: Context) -> None:
    """Leave alone the references inside keywords SEM103 drops: the drop wins."""
    if spans:
        renames.pending = [
            r
            for r in renames.pending
            if not any(a <= ctx.text.start(r.node)[2] and ctx.text.end(r.node)[2] <= b for a, b in spans)
        ]


def finish(ctx: Context, renames: Renames) -> None:
    """After every rename and drop (SEM103's), the import edits they need
    (semfix/analysis/importer.py), in one decision with them; or, where those are unsure, no fix."""
    drops = renames.drops.made
    if not (renames.made or drops or renames.stale or renames.unsure):
        return
    from semfix.rules.sem101_references import GONE_NAMES, PALLAS, TPU

    tree = ctx.tree
    assert tree is not None  # SEM101 and SEM103 run on a parsed tree (`Rule.needs_tree`)
    floor = ctx.settings.target_jax
    moved = frozenset(n for n, m in MOVED_TO_PALLAS.items() if m.same_from and floor >= m.same_from)
    accesses = ctx.tracking().accesses if renames.stale else {}
    top = {id(statement) for statement in tree.body}

    def unread(statement: ast.ImportFrom) -> list[str]:
        return [a.name for a in statement.names if a.name in GONE_NAMES and not accesses.get(a.asname or a.name)]

    for statement in renames.stale:  # an import in a function or a branch: not edited
        if id(statement) not in top and (dead := unread(statement)):
            ctx.report(CODE, statement, f"{_gone(dead)} (not fixed: an import below the module's top level)", None)
    stale = [s for s in renames.stale if id(s) in top and ctx.accepts(CODE, s, True)]
    if renames.unsure:
        ctx.hold(renames.unsure[0], CODE)
        if not drops:
            return
        renames.taken.clear()
        renames.made.clear()  # held: the drops go alone
        renames.findings.clear()
        stale.clear()
    if not (renames.made or drops or stale):
        return
    from semfix.analysis.importer import ImportChanges, Request, Unsure, edit_imports

    alias = renames.alias or DEFAULT_PALLAS_ALIAS
    # the renames write `alias`: a read of it they or a dropped keyword take away takes nothing
    # from its import (`pl.tpu.semaphore_wait`, issue 36 item 1)
    written = alias if renames.made else None
    roots = [_root(node) for node in renames.taken] + [drop.root for drop in drops]
    request = Request(
        PALLAS,
        alias,
        add=renames.alias is None and bool(renames.taken),
        taken=[root for root in roots if root.id != written],
        gone=[root for root in roots if root.id == written],
        # a rename adds a pallas import, which loads the package: only the TPU module needs care
        loads=TPU if renames.taken or stale else PALLAS.module,
        exported=ctx.settings.package_init or STAR in ctx.settings.imported_by_run,
        kept=ctx.settings.imported_by_run,
        # a name kept for importers, or read nowhere, that `pl` gives at the floor: imported from
        # `pl`'s module (issue 36)
        moved=moved,
        stale=stale,
        gone_names=GONE_NAMES,
    )
    declared = renames.declared or ImportChanges()
    try:
        edits = edit_imports(tree, ctx.text, ctx.tracking().accesses, request, declared)
    except Unsure as reason:
        ctx.hold(str(reason), CODE)
        ctx.hold(str(reason), sem103.CODE)
        return
    findings = [*renames.findings, *(drop.finding for drop in drops)]
    for statement, names in request.unmoved:  # kept for other modules, or a string: JAX 0.11 fails it
        ctx.report(CODE, statement, f"{_gone([a.name for a in names])} (not fixed: not sorted there)", None)
    for statement, names in request.kept_gone:  # for a string or an importer, with nowhere to move
        for name in names:
            same_from = TPU_MIGRATIONS[name.name].same_from
            why = needs(ctx, f"{PALLAS.module}.{name.name}", same_from) if same_from and floor < same_from else ""
            why = why or "another module or a string may read it from here"
            ctx.report(CODE, statement, f"{_gone([name.name])} (not fixed: {why})", None)
    moved_from = {id(statement): names for statement, names in request.moved_from}
    stay = [*request.unmoved, *request.kept_gone]
    for statement in sorted({*(s for s, _ in request.moved_from), *stale}, key=lambda s: s.lineno):
        names = moved_from.get(id(statement), [])  # kept, from `pl`'s module
        stays = {a.name for a in names} | {a.name for kept, aliases in stay if kept is statement for a in aliases}
        dropped = [name for name in unread(statement) if name not in stays]  # read nowhere, not even by a string
        if names:
            said, new_text = _gone([a.name for a in names]), ast.unparse(ast.ImportFrom(PALLAS.module, names, 0))
        elif dropped:
            rest = [a for a in statement.names if a.name not in dropped]
            said = f"{_gone(dropped, advice=False)}, and nothing here reads it: drop it"
            new_text = ast.unparse(ast.ImportFrom(TPU, rest, 0)) if rest else ""
        else:
            continue
        span = None if new_text else ctx.whole_lines(statement)
        if ctx.report(CODE, statement, said, new_text, span=span):
            findings.append(len(ctx.findings) - 1)
    if not findings:  # every fix silenced
        return
    made = [edit for rewrite in renames.made for edit in rewrite.edits] + [drop.edit for drop in drops]
    # one decision: every rename and drop with the import edits, the tree declared in `declared`
    changes: tuple[Change, ...] = (*renames.made, *(drop.change for drop in drops), declared)
    rule = CODE if renames.made or not drops else sem103.CODE
    ctx.make(Decision(rule, (*made, *edits), changes, settles=False, findings=tuple(findings)))


def _gone(names: list[str], *, advice: bool = True) -> str:
    """Why an import of these names from the TPU module fails, and what to import instead."""
    from semfix.rules.sem101_references import PALLAS, TPU

    removed = spelled(min(TPU_MIGRATIONS[name].removed or () for name in names))
    said = f"`{', '.join(names)}` is gone from `{TPU}` in JAX {removed} (ImportError)"
    if not advice:
        return said
    if all(name in MOVED_TO_PALLAS for name in names):
        return f"{said}: import it from `{PALLAS.module}`"
    return said + "".join(f"; import `{TPU_MIGRATIONS[n].to}` for `{n}`" for n in names if TPU_MIGRATIONS[n].to)


RUNS_FIRST = "it may run on import before `{}` is imported"


def _root(read: ast.Name | ast.Attribute) -> ast.Name:
    """The name a renamed reference's read starts from (`pltpu` in `pltpu.semaphore_wait`)."""
    root = unchain(read)[0]
    assert isinstance(root, ast.Name)  # only such chains resolve (`Context.qualified`, `_with_fallback`)
    return root


def _end(node: ast.expr) -> tuple[int, int]:
    assert node.end_lineno is not None and node.end_col_offset is not None  # set on every parsed node
    return node.end_lineno, node.end_col_offset
