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

from semfix.analysis.context import Context
from semfix.catalog import MOVED_TO_PALLAS
from semfix.jax_versions import spelled
from semfix.rules.base import Invalid, Rule
from semfix.rules.sem101_renames import CODE as CODE  # the rule's state, beside its renames
from semfix.rules.sem101_renames import Renames as Renames
from semfix.rules.sem101_renames import rename_one

RULE = Rule(
    code=CODE,
    name="deprecated-tpu-semaphore-op",
    summary="pltpu.semaphore_signal/wait/read, pltpu.semaphore, pltpu.DeviceIdType and pltpu.HOST were deprecated in "
    "JAX 0.10 (all but HOST removed in 0.11), pltpu.ANY in 0.9, pltpu.TPUMemorySpace in 0.6.2; use their new names.",
    fix="safe",
    fix_note="the new name, the very same object at the project's JAX floor; the pallas import is reused or added "
    "where ruff's I001 puts it, and imports left unused are dropped; the TPU enum's ANY reported",
    docs=__doc__ or "",
    needs_tree=True,
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

# -- the logic: the references (sem101_references.py), each renamed as text (sem101_renames.py),
# then the import edits the renames need (sem101_imports.py) -------------------------------------


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
        rename_one(ctx, renames, renames.pending.pop())


def skip(renames: Renames, spans: list[tuple[int, int]], ctx: Context) -> None:
    """Leave alone the references inside keywords SEM103 drops: the drop wins."""
    if spans:
        renames.pending = [
            r
            for r in renames.pending
            if not any(a <= ctx.text.start(r.node)[2] and ctx.text.end(r.node)[2] <= b for a, b in spans)
        ]


def finish(ctx: Context, renames: Renames) -> None:
    """After every rename and drop (SEM103's), the import edits they need, in one decision with
    them (semfix/rules/sem101_imports.py); or, where those are unsure, no fix."""
    if renames.made or renames.drops.made or renames.stale or renames.unsure:
        from semfix.rules.sem101_imports import edit

        edit(ctx, renames)


def _end(node: ast.expr) -> tuple[int, int]:
    assert node.end_lineno is not None and node.end_col_offset is not None  # set on every parsed node
    return node.end_lineno, node.end_col_offset
