"""SEM101's import edits, after every rename and SEM103's drops: the pallas import added or
reused, imports left unused dropped, a name the TPU module has no more moved to `pl`'s module
or dropped, all in one decision with the renames (semfix/analysis/importer.py makes the edits)."""

from __future__ import annotations

import ast

from semfix.analysis.context import Context
from semfix.analysis.fixes import Change, Decision
from semfix.analysis.run_imports import STAR
from semfix.catalog import MOVED_TO_PALLAS, TPU_MIGRATIONS
from semfix.jax_versions import spelled
from semfix.rules import sem103
from semfix.rules.sem101_renames import CODE, DEFAULT_PALLAS_ALIAS, Renames, needs, root


def edit(ctx: Context, renames: Renames) -> None:
    """After every rename and drop (SEM103's), the import edits they need
    (semfix/analysis/importer.py), in one decision with them; or, where those are unsure, no fix."""
    drops = renames.drops.made
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
    roots = [root(node) for node in renames.taken] + [drop.root for drop in drops]
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
