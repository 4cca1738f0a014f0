"""The quick engine analyses only the calls its survey cannot clear. That may never change a
result: whatever the focused analysis gives, the analysis of every call gives too, findings and
text alike."""

from __future__ import annotations

import ast

import pytest
from conftest import fixture_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from test_real_kernels import _kernel_files, _plant
from test_skim import kernels

from semfix import SourceError, fix_source, quick
from semfix.cst_engine import fix_with_libcst
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
        if isinstance(focused, str) and isinstance(whole, str):
            continue
        if isinstance(focused, str) or isinstance(whole, str):
            # Deferring is always allowed (the libcst engine answers); giving a different answer is not.
            answered = whole if isinstance(focused, str) else focused
            text, findings, _ = fix_with_libcst(source, config, apply_fixes)
            expected = text.decode(answered.encoding) if isinstance(text, bytes) else text  # type: ignore[union-attr]
            assert (answered.text, answered.findings) == (expected, findings)  # type: ignore[union-attr]
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


HEADER = (
    "import functools\n"
    "import jax\n"
    "from jax.experimental import pallas as pl\n"
    "from jax.experimental.pallas import tpu as pltpu\n"
    "FLAG = True\n"
)
# Top-level pieces that mix suspect calls, allocations and look-alikes; {n} keeps names apart. Some hold bugs, some only look as if they did.
PIECES = [
    "def clean_{n}(x_ref, sem):\n    pltpu.semaphore_wait(sem, 1)\n",
    "def buggy_{n}(x_ref, sem, sems):\n    pltpu.semaphore_wait(sem[...], 1)\n    pl.semaphore_signal(sems[0], 1)\n",
    'TEXT_{n} = """\ndef fake_{n}(sem):\n    pltpu.semaphore_wait(sem[...])\n"""\n',
    "@functools.partial(\n    jax.jit,\n)\ndef decorated_{n}(sem):\n    pltpu.semaphore_wait(sem, 1)\n",
    "VALUES_{n} = [\n1, 2,\n]\n",
    "def params_{n}(\nsem):\n    pltpu.semaphore_wait(sem, 1)\n",
    "X_{n} = 1 + \\\n2\n",
    "if FLAG:\n    def maybe_{n}(sem):\n        pltpu.semaphore_wait(sem[...])\nelse:\n    pass\n",
    "def binder_{n}():\n    global pltpu\n    pltpu = object()\n",
    "def arr_{n}(x_ref, sems):\n    pl.semaphore_signal(sems, 1)\n\n"
    "def run_arr_{n}(x):\n    return pl.pallas_call(arr_{n}, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)\n",
    "def tup_{n}(x):\n    def body(sems):\n        pl.semaphore_signal(sems[0], 1)\n    return pl.run_scoped(body, [pltpu.SemaphoreType.DMA] * 2)\n",
    "class Holder_{n}:\n    def method(self, sem):\n        pltpu.semaphore_wait(sem[...], 1)\n",
    "def commented_{n}(sem):\n    x = 1\n# a comment at column 0\n    pltpu.semaphore_wait(sem[()], x)\n",
    'def fmt_{n}(sem):\n    print(f"{{sem!r}} def not_a_def():")\n    pltpu.semaphore_wait(sem, 1)\n',
    "def semaphore_signal(sem, value):\n    return sem\n",
    "def walrus_{n}(sem):\n    if (s := sem):\n        pltpu.semaphore_wait(s)\n",
    "S_{n} = 'it\\'s \"quoted\" # not a comment ('\n",
    "T_{n} = '''( [ {{ '''\n",
    "SEMS = object()\n\ndef prover_{n}():\n    return SEMS.at[1]\n",
    "def needs_{n}():\n    pl.semaphore_signal(SEMS[0], 1)\n",
    "async def later_{n}(sem):\n    pl.semaphore_signal(sem.at[0][...], 1)\n",
    "def quiet_{n}(sem, sems):\n    pl.semaphore_signal(sems.at[0], 1)\n    return [x for x in range(3)]\n",
    "READ_{n} = SEMS[...]\n\ndef reader_{n}():\n    pl.semaphore_signal(READ_{n}, 1)\n",
    "def shaped_{n}(x_ref, sem):\n    pltpu.semaphore_wait(sem, x_ref.shape[0])\n",
    "DOC_{n} = '''\ndef fake_{n}(sem):\n    pltpu.semaphore_wait(sem[...])\n)\n'''\n",
    "def pltpu(sem):  # rebinds the module alias: no call through it resolves any more\n    return sem\n",
    "def shared_{n}(x_ref, sems):\n    pl.semaphore_signal(sems, 1)\n\n"
    "def run_shared_a_{n}(x):\n    return pl.pallas_call(shared_{n}, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)\n\n"
    "def run_shared_b_{n}(x):\n    return pl.pallas_call(shared_{n}, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA])(x)\n",
    "def run_plain_{n}(x):\n    return pl.pallas_call(clean_0, out_shape=x, scratch_shapes=(\n        pltpu.SemaphoreType.DMA,\n    ))(x)\n",
    "def a_helper_whose_name_is_much_longer_than_the_sixty_characters_of_a_line_head_{n}(sem):\n"
    "    pltpu.semaphore_wait(sem, 1)\n",
    'WORDS_{n} = """\n    alpha beta\n    gamma""".split()\n',
    'def worded_{n}(sem):\n    words = """\n(\n""".split()\n    pltpu.semaphore_wait(sem, len(words))\n',

    "if FLAG:\n    def guarded_{n}(x_ref, sems):\n        pl.semaphore_signal(sems, 1)\n\n"
    "def run_guarded_{n}(x):\n    return pl.pallas_call(guarded_{n}, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)\n",
    "def scoped_{n}(x):\n    def body(sem, flags):\n        pl.semaphore_signal(flags.at[0], 1)\n        pl.semaphore_wait(sem, 1)\n"
    "    return pl.run_scoped(body, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR((2,)))\n",
    "def scoped_whole_{n}(x):\n    def body(sem, flags):\n        pl.semaphore_signal(flags, 1)\n"
    "    return pl.run_scoped(body, pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.REGULAR((2,)))\n",
]


@st.composite
def modules(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8))
    text = HEADER + "\n\n".join(piece.format(n=n) for n, piece in enumerate(pieces))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@settings(max_examples=300, deadline=None)
@given(modules(), st.sampled_from([NO_MIGRATIONS, SAFE_ONLY]))
def test_generated_top_level_mixes_come_out_the_same_focused_or_whole(source: str, config: Settings) -> None:
    _same_either_way(source, config)


def test_a_syntax_error_in_a_definition_without_suspect_calls_is_reported_and_nothing_is_fixed() -> None:
    source = (
        HEADER
        + "\ndef buggy(sem):\n    pltpu.semaphore_wait(sem[...], 1)\n"
        + "\ndef broken(sem):\n    return sem +\n"  # no call in it could be a finding
    )
    with pytest.raises(SourceError, match="line 11"):
        fix_source(source)
    with pytest.raises(SourceError):
        fix_source(source, apply_fixes=False)
