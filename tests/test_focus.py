"""The quick engine analyses only the calls its survey cannot clear. That must never change a
result: whatever the focused analysis gives, the whole-file analysis gives too, findings and
text alike."""

from __future__ import annotations

import ast

from conftest import fixture_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from test_real_kernels import _kernel_files, _plant
from test_skim import kernels

from semfix import quick
from semfix.quick import Defer, QuickResult, analyse, survey
from semfix.settings import Settings

NO_MIGRATIONS = Settings.build(select=["SEM0"], unsafe_fixes=True)
SAFE_ONLY = Settings.build(select=["SEM0"])


def _survey(source: str | bytes) -> quick._Survey:
    scopes = quick._ScopeBuilder()
    scopes.build(ast.parse(source))
    return survey(scopes)


def _result(source: str | bytes, config: Settings, apply_fixes: bool, focus: bool) -> QuickResult | str:
    try:
        return analyse(source, config, apply_fixes, focus=focus)
    except Defer as deferred:
        return f"defer: {deferred}"


def _same_either_way(source: str | bytes, config: Settings = NO_MIGRATIONS) -> None:
    for apply_fixes in (True, False):
        focused = _result(source, config, apply_fixes, focus=True)
        whole = _result(source, config, apply_fixes, focus=False)
        if isinstance(focused, str) or isinstance(whole, str):
            # Deferring is always allowed (the libcst engine answers); giving a different answer is not.
            continue
        assert focused == whole


def test_fixtures_come_out_the_same_focused_or_whole() -> None:
    compared = 0
    for case in fixture_cases():
        config = Settings.build(**case.spec.get("settings", {}))
        for source in (case.before, case.after):
            _same_either_way(source, config)
            _same_either_way(source)
            compared += 1
    assert compared > 40


@settings(max_examples=200, deadline=None)
@given(st.lists(kernels(), min_size=2, max_size=4), st.sampled_from([NO_MIGRATIONS, SAFE_ONLY]))
def test_generated_modules_come_out_the_same_focused_or_whole(parts: list[str], config: Settings) -> None:
    # Several kernels in one module: some functions hold a suspect call, others are skipped.
    _same_either_way("\n".join(parts), config)


def test_real_kernels_with_planted_bugs_come_out_the_same_focused_or_whole() -> None:
    focused_files = 0
    for path in _kernel_files():
        planted, count = _plant(path.read_bytes())
        if not count:
            continue
        _same_either_way(planted)
        _same_either_way(planted, SAFE_ONLY)
        found = _survey(planted)
        focused_files += bool(found.calls) and not found.kinded
    assert focused_files >= 5  # the focused path is really taken on real code


def test_the_survey_names_only_the_suspect_calls() -> None:
    source = (
        "from jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n\n"
        "def good(sem):\n"
        "    pl.semaphore_wait(sem, 1)\n\n"
        "def bad(sem, x, y):\n"
        "    pltpu.make_async_copy(x, y, sem[...]).wait()\n"
    )
    found = _survey(source)
    assert [call.lineno for call in found.calls] == [8]
    assert not found.kinded


def test_allocations_that_may_kind_a_looked_at_name_turn_the_focus_off() -> None:
    # `sems` is a semaphore array, so `sems[...]` is reported (SEM004), not rewritten to `sems`.
    source = (
        "from jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n\n"
        "def kernel(x, sems):\n"
        "    pl.semaphore_wait(sems[...], 1)\n\n"
        "def run(x):\n"
        "    return pl.run_scoped(kernel, x, pltpu.SemaphoreType.DMA((2,)))\n"
    )
    assert _survey(source).kinded
    result = analyse(source, NO_MIGRATIONS, True)
    assert [(f.rule, f.applied) for f in result.findings] == [("SEM004", False)]
    assert result.text == source
    _same_either_way(source)


def test_the_focused_analysis_looks_at_the_suspect_calls_only() -> None:
    source = (
        "from jax.experimental import pallas as pl\n\n"
        "def quiet(sem):\n"
        "    pl.semaphore_wait(sem, 1)\n\n"
        "def loud(sem):\n"
        "    pl.semaphore_wait(sem[...], 1)\n"
    )
    tree = ast.parse(source)
    scopes = quick._ScopeBuilder()
    scopes.build(tree)
    engine = quick._Engine(quick._Text(source), scopes, NO_MIGRATIONS, survey(scopes))
    engine.run()
    assert [c.lineno for c in scopes.calls if id(c) in engine.operations] == [7]  # the only call resolved
    assert [f.line for f in engine.findings] == [7]
