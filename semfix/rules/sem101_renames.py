"""SEM101's renames, one reference at a time: the new spelling where it is the same object at
the project's JAX floor, else a report saying why not (and how to declare the floor). The
references are sem101_references.py's; the import edits the renames need, sem101_imports.py's."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from semfix.analysis.context import Context
from semfix.analysis.nodes import LINE_BREAK, Rewrite, unchain
from semfix.catalog import TPU_MIGRATIONS, Moved
from semfix.floor import DECLARING
from semfix.jax_versions import Version, spelled
from semfix.rules import sem103

if TYPE_CHECKING:  # the rule is off by default: its logic's imports load where it is enabled
    from semfix.analysis.importer import ImportChanges
    from semfix.rules.sem101_references import Reference

CODE = "SEM101"
DEFAULT_PALLAS_ALIAS = "pl"


class Renames:
    """The file's references still to rename, last first, and what the renames need."""

    def __init__(self) -> None:
        self.pending: list[Reference] = []
        self.alias: str | None = None  # the module-level name of the pallas module, if the file has one
        self.unsure: list[str] = []  # why the import edits cannot be made sure of
        self.made: list[Rewrite] = []  # the accepted renames: one decision with the import edits
        self.findings: list[int] = []  # their findings, by index
        self.taken: list[ast.Name | ast.Attribute] = []  # the reads the renames took
        self.declared: ImportChanges | None = None  # the tree the renames and the import edits declare
        self.drops = sem103.Drops([], set())  # SEM103's, same imports
        self.stale: list[ast.ImportFrom] = []  # imports of names the TPU module has no more


RUNS_FIRST = "it may run on import before `{}` is imported"


def rename_one(ctx: Context, renames: Renames, reference: Reference) -> None:
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
        name = root(reference.read).id
        why = f"`{name}` may be None, bound so at line {reference.fallback}; the rename would change what runs"
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


def root(read: ast.Name | ast.Attribute) -> ast.Name:
    """The name a renamed reference's read starts from (`pltpu` in `pltpu.semaphore_wait`)."""
    root = unchain(read)[0]
    assert isinstance(root, ast.Name)  # only such chains resolve (`Context.qualified`, `_with_fallback`)
    return root
