"""Property-based tests: arbitrary Python (hypothesmith) and generated Pallas-shaped kernels.

The default profile runs a bounded number of examples; `--hypothesis-profile=long` (or
SEMFIX_HYPOTHESIS_PROFILE=long) runs thousands.
"""

from __future__ import annotations

import ast

import hypothesmith
import libcst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semfix import SourceError, fix_source
from semfix.selection import build_settings

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith writes odd code
JAX_HEADER = "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n"
_SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]


def _parses(source: str) -> bool:
    try:
        libcst.parse_module(source)
        return True
    except Exception:
        return False


@settings(suppress_health_check=_SLOW, deadline=None)
@given(hypothesmith.from_grammar())
def test_code_without_jax_comes_out_byte_for_byte(source: str) -> None:
    try:
        result = fix_source(source)
    except SourceError:
        return  # a clear error, never a crash
    assert result.source == source and result.findings == ()


@settings(suppress_health_check=_SLOW, deadline=None)
@given(hypothesmith.from_grammar(), st.sampled_from(["s[...]", "sems.at[1][()]", "sems[0]", "s"]))
def test_any_module_with_jax_in_it_never_crashes_and_settles(body: str, argument: str) -> None:
    source = f"{JAX_HEADER}{body}\npl.semaphore_wait({argument})\n"
    everything = build_settings(select=["ALL"], unsafe_fixes=True)
    try:
        once = fix_source(source, settings=everything)
    except SourceError:
        return
    assert _parses(once.source)
    twice = fix_source(once.source, settings=everything)
    assert twice.source == once.source and not twice.applied


# -- Pallas-shaped kernels with planted bugs ------------------------------------------------
NAMES = st.sampled_from(["sem", "done", "ready_sem", "copy_sem", "s0", "flag"])
ARRAYS = st.sampled_from(["sems", "slots", "recv_sems"])
SPACE = st.sampled_from(["", " ", "  "])
COMMENT = st.sampled_from(["", "  # wait here", "  # café note", "  # pl.semaphore_wait(x[...])"])


@st.composite
def kernels(draw: st.DrawFn) -> tuple[str, str, int]:
    """(clean module, planted module, planted count): planted reads are the only difference."""
    lines_clean, lines_planted, planted = [], [], 0
    array = draw(ARRAYS)
    lines = [f"def kernel(x_hbm, o_hbm, sem, done, ready_sem, copy_sem, s0, flag, {array}, i):"]
    lines_clean += lines
    lines_planted += lines
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.integers(0, 5))
        name, pad, note = draw(NAMES), draw(SPACE), draw(COMMENT)
        plant = draw(st.booleans())
        read = draw(st.sampled_from(["[...]", "[()]", "[ ... ]"]))
        if kind == 0:
            clean_arg, bug_arg = name, name + read
            template = "    pl.semaphore_signal({pad}{arg}{pad}, 1){note}"
        elif kind == 1:
            clean_arg, bug_arg = f"{array}.at[i]", f"{array}.at[i]{read}"
            template = "    pl.semaphore_wait({arg},{pad}value=1){note}"
        elif kind == 2:
            clean_arg, bug_arg = name, name + read
            template = "    pltpu.make_async_copy(x_hbm, o_hbm,{pad}{arg}).start(){note}"
        elif kind == 3:
            clean_arg, bug_arg = f"{array}.at[0]", f"{array}.at[0]{read}"
            template = "    pltpu.async_copy(x_hbm.at[0], o_hbm.at[0], sem={arg}).wait(){note}"
        elif kind == 4:  # a decoy: a method of the same name is never touched
            clean_arg = bug_arg = name + read
            plant = False
            template = "    x_hbm.semaphore_wait({arg}){note}"
        else:  # a decoy in a string
            clean_arg = bug_arg = name + read
            plant = False
            template = '    text = "pl.semaphore_signal({arg})"{note}'
        lines_clean.append(template.format(arg=clean_arg, pad=pad, note=note))
        lines_planted.append(template.format(arg=bug_arg if plant else clean_arg, pad=pad, note=note))
        planted += plant
    return "\n".join(lines_clean) + "\n", "\n".join(lines_planted) + "\n", planted


@settings(suppress_health_check=_SLOW, deadline=None)
@given(kernels(), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["utf-8", "utf-8-sig", "latin-1"]))
def test_fixing_planted_kernels_gives_back_the_clean_kernels(
    kernel: tuple[str, str, int], newline: str, encoding: str
) -> None:
    clean, planted, count = kernel
    header = "# -*- coding: latin-1 -*-\n" if encoding == "latin-1" else ""

    def encode(text: str) -> bytes:
        return (header + JAX_HEADER + "\n\n" + text).replace("\n", newline).encode(encoding)

    result = fix_source(encode(planted))
    assert result.source == encode(clean)
    assert len(result.applied) == count
    ast.parse(result.source)
