"""The byte prefilter may skip a file only if the full engine would find nothing in it."""

from __future__ import annotations

from conftest import fixture_cases
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest import MonkeyPatch

from semfix import catalog
from semfix.api import may_fire
from semfix.catalog import MODULES, may_contain_calls
from semfix.engine.run import analyse
from semfix.selection import build_settings

EVERYTHING = build_settings(select=["ALL"], unsafe_fixes=True)
_FUNCTIONS = sorted({(module, name) for module, ops in MODULES.items() for name in ops})


@st.composite
def modules(draw: st.DrawFn) -> str:
    """A small module that imports a catalog function in one of the ways people write it."""
    module, name = draw(st.sampled_from(_FUNCTIONS))
    parent, _, leaf = module.rpartition(".")
    alias = draw(st.sampled_from(["m", "pl", "pltpu", "plgpu", "ops"]))
    style = draw(st.integers(0, 3))
    if style == 0:
        header, callee = f"import {module} as {alias}", f"{alias}.{name}"
    elif style == 1:
        header, callee = f"from {parent} import {leaf} as {alias}", f"{alias}.{name}"
    elif style == 2:
        header, callee = f"from {module} import {name} as fn", "fn"
    else:
        header, callee = f"import {module}", f"{module}.{name}"
    argument = draw(st.sampled_from(["sem[...]", "sem[()]", "sems.at[1][...]", "sems[0]", "sems[0:2]", "sem"]))
    padding = draw(st.lists(st.sampled_from(["", "x = 1", "# note", "def f():\n    return 2"]), max_size=3))
    arguments = ", ".join([argument] * 4)  # covers every semaphore position in the catalog
    return "\n".join([header, *padding, f"{callee}({arguments})", ""])


@settings(max_examples=150, deadline=None)
@given(modules())
def test_prefilter_keeps_every_file_the_engine_flags(source: str) -> None:
    findings = analyse(source, EVERYTHING, apply_fixes=False).findings
    if findings:
        assert may_contain_calls(source) and may_contain_calls(source.encode())


def test_prefilter_keeps_every_fixture_with_findings() -> None:
    flagged = 0
    for case in fixture_cases():
        findings = analyse(case.before, EVERYTHING, apply_fixes=False).findings
        if findings:
            flagged += 1
            assert may_fire(case.before, EVERYTHING), case.name  # a migration's gate lets one in without a call
    assert flagged > 20


def test_the_byte_scan_sees_every_catalog_name() -> None:
    """Each catalog function's name alone, in a file that spells "pallas", passes the scan: its
    parts' search (`NAME_PARTS`, which passes most files over) and its names' both find it."""
    for name in sorted({name for ops in MODULES.values() for name in ops}):
        assert may_contain_calls(f"from jax.experimental import pallas\n{name}\n".encode()), name
        assert may_contain_calls(f"{name}\n".encode(), through_run=True), name
    assert not may_contain_calls(b"from jax.experimental import pallas\nsemaphore\n")


_PIECES = sorted({*(n for ops in MODULES.values() for n in ops), "pallas", "sync", "_", "copy", "emaphore", "x"})


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=6), st.booleans())
def test_the_byte_scan_answers_as_a_search_of_every_name(pieces: list[str], through_run: bool) -> None:
    """The parts' search (`NAME_PARTS`, each name searched from its part's first spelling on) keeps
    exactly what searching the file for every catalog name keeps."""
    data = "".join(pieces).encode()
    spelled = any(name.encode() in data for ops in MODULES.values() for name in ops)
    assert may_contain_calls(data, through_run=through_run) == ((through_run or b"pallas" in data) and spelled)


def test_a_file_is_scanned_once_however_many_ask(monkeypatch: MonkeyPatch) -> None:
    """The run's scan and its questions of its modules share each file's answer (`_SCANNED`)."""
    searched: list[bytes] = []
    search = catalog._spells_a_name
    monkeypatch.setattr(catalog, "_spells_a_name", lambda raw: searched.append(raw) or search(raw))
    data = b"from jax.experimental import pallas\npltpu.sync_copy(a, b)\n"
    for through_run in (False, True, False, True):
        assert may_contain_calls(data, through_run=through_run)
    assert may_fire(data, EVERYTHING) and len(searched) == 1
    assert not may_contain_calls(b"import numpy\n") and len(searched) == 1  # no "pallas": no search
