"""Catalog calls however they are reached (issue 43, section 3), beside what the runtime
fixture sem001/rt_catalog_reached_however runs: Pallas imported in `try:` with a None fallback is
read through for the rules on semaphore arguments, never for the migration's renames, which would
make the fallback work where it did not."""

from __future__ import annotations

from semfix import fix_source
from semfix.selection import build_settings

FALLBACK = """\
try:
    from jax.experimental.pallas import tpu as pltpu
except ImportError:
    pltpu = None


def kernel(x_ref, o_ref, sem):
    pltpu.semaphore_signal(sem[...], 1)
"""


def test_a_call_through_an_import_with_a_none_fallback_is_a_catalog_call() -> None:
    result = fix_source(FALLBACK)
    assert [(f.rule, f.line, f.applied) for f in result.findings] == [("SEM001", 8, True)]
    assert result.source == FALLBACK.replace("sem[...]", "sem")


def test_the_migration_still_leaves_a_name_with_a_none_fallback_unrenamed() -> None:
    settings = build_settings(extend_select=["SEM101"], target_jax="0.7.0")
    result = fix_source(FALLBACK, settings=settings)
    assert result.source == FALLBACK.replace("sem[...]", "sem")
    renames = [f for f in result.findings if f.rule == "SEM101"]
    assert renames and not any(f.applied for f in renames)
    assert all("may be None" in f.message for f in renames)
