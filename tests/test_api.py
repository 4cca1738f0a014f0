"""The in-memory API: types, errors, and the safety checks that guard every rewrite."""

from __future__ import annotations

import dataclasses

import pytest

import semfix.analysis.context
import semfix.api
import semfix.rules.sem003
from semfix import SafetyError, SourceError, fix_source
from semfix.analysis.fixes import Decision
from semfix.catalog import FUNCTION_NAMES, may_contain_calls
from semfix.selection import build_settings

BUGGY = "from jax.experimental import pallas as pl\n\ndef k(sem):\n    pl.semaphore_wait(sem[...])\n"
FIXED = "from jax.experimental import pallas as pl\n\ndef k(sem):\n    pl.semaphore_wait(sem)\n"


def test_str_in_str_out_and_bytes_in_bytes_out() -> None:
    assert fix_source(BUGGY).source == FIXED
    assert fix_source(BUGGY.encode()).source == FIXED.encode()


def test_check_only_reports_without_changing() -> None:
    result = fix_source(BUGGY, apply_fixes=False)
    assert result.source == BUGGY
    [finding] = result.findings
    assert (finding.line, finding.column, finding.applied) == (4, 23, False)
    assert finding.replacement == "sem" and finding.original == "sem[...]"


def test_syntax_error_names_the_line() -> None:
    with pytest.raises(SourceError, match=r"syntax error at line 2"):
        fix_source("from jax.experimental import pallas as pl\npl.semaphore_wait(sem[...]\n")


def test_undecodable_bytes_are_a_source_error() -> None:
    with pytest.raises(SourceError, match="cannot decode as utf-8"):
        fix_source(b"import jax.experimental.pallas as pl\npl.semaphore_wait(s[...])  # \xff\n")


def test_lone_carriage_returns_are_line_breaks() -> None:
    """CPython ends a line at a lone CR; the engine reads the file as it does, byte for byte."""
    source = b"import jax.experimental.pallas as pl\rpl.semaphore_wait(s[...])\r"
    result = fix_source(source)
    assert result.source == source.replace(b"s[...]", b"s")
    assert [(f.rule, f.line, f.column) for f in result.findings] == [("SEM001", 2, 19)]


@pytest.mark.parametrize("name", sorted(FUNCTION_NAMES))
def test_prefilter_never_skips_a_file_with_a_call(name: str) -> None:
    assert may_contain_calls(f"from jax.experimental.pallas import tpu\ntpu.{name}(s[...])\n")
    assert may_contain_calls(f"import jax\njax.experimental.pallas.{name}(s[...])\n".encode())


def test_prefilter_skips_files_without_pallas_or_names() -> None:
    assert not may_contain_calls("import numpy\nsemaphore_wait(x)\n")
    assert not may_contain_calls("from jax.experimental import pallas as pl\npl.program_id(0)\n")


def test_a_wrong_rewrite_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine cut one character short leaves `sem.`: the new tree is not the declared one."""
    original_cut = semfix.analysis.context.Context.cut

    def short_cut(self, subscript, *where):  # type: ignore[no-untyped-def]
        start, end = original_cut(self, subscript, *where)
        return start + 1, end

    monkeypatch.setattr(semfix.analysis.context.Context, "cut", short_cut)
    source = BUGGY.replace("sem[...]", "sem[(...)]")
    with pytest.raises(SafetyError, match="does not parse|does not compile|differs from the declared"):
        fix_source(source)


def test_the_ast_check_accepts_every_declared_rewrite() -> None:
    """SEM001 through SEM102 together in one file, through the whole-tree check of the rewrites."""
    source = (
        "import jax.experimental.pallas.tpu as pltpu\n"
        "from jax.experimental import pallas as pl\n\n\n"
        "def k(x, y, sem, sems, i):\n"
        "    pl.semaphore_signal(sems.at[i], 1)\n"
        "    v = sem[...]\n"
        "    pl.semaphore_wait(v, 1)\n"
        "    pltpu.semaphore_wait(sem, dec=2)\n"
        "    pltpu.make_async_copy(x, y, sems[0][...]).start()\n"
    )
    result = fix_source(source, settings=build_settings(select=["ALL"], target_jax="0.10.2"))
    assert {f.rule for f in result.applied} == {"SEM001", "SEM003", "SEM101", "SEM102"}
    assert "pltpu.make_async_copy(x, y, sems.at[0])" in result.source


PLACES = {
    "top level": "pl.semaphore_wait(sem[...], 1)\n",
    "in a function": "def k(sem):\n    pl.semaphore_wait(sem[...], 1)\n",
    "deep inside": (
        "def k(sem, xs):\n    for x in xs:\n        with x:\n            try:\n                if x:\n"
        "                    pass\n                else:\n                    pl.semaphore_wait(sem[...], 1)\n"
        "            except ValueError:\n                pass\n"
    ),
    "after a colon": "def k(sem):\n    if sem: pl.semaphore_wait(sem[...], 1)\n",
    "after a semicolon": "def k(sem):\n    x = 1; pl.semaphore_wait(sem[...], x)\n",
    "over several lines": "def k(sem):\n    pl.semaphore_wait(\n        sem[...],  # why\n        1,\n    )\n",
    "in a decorator": "@pl.semaphore_wait(sem[...], 1)\ndef k():\n    pass\n",
    "in a match case": "def k(sem, v):\n    match v:\n        case 1:\n            pl.semaphore_wait(sem[...], 1)\n",
}


@pytest.mark.parametrize("place", list(PLACES), ids=list(PLACES))
def test_a_rewrite_that_parses_but_differs_is_refused_wherever_it_is(
    monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    """A cut one character too early turns `sem[...]` into `se`, which parses: the re-parsed
    statement around the edit must still differ from the declared one, however nested."""
    original_cut = semfix.analysis.context.Context.cut
    monkeypatch.setattr(
        semfix.analysis.context.Context,
        "cut",
        lambda self, node, *where: (original_cut(self, node, *where)[0] - 1, original_cut(self, node, *where)[1]),
    )
    source = (
        "from jax.experimental import pallas as pl\n\ndef quiet(sem):\n    pl.semaphore_wait(sem, 1)\n\n"
        + PLACES[place]
    )
    with pytest.raises(SafetyError, match="differs from the declared"):
        fix_source(source)
    monkeypatch.undo()
    assert "sem[...]" not in fix_source(source).source  # the real cut is accepted


def test_a_sem003_removal_that_takes_another_line_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEM003 drops the assignment's line; an edit that also drops the line after it (which
    compiles) leaves a tree other than the declared one, and the whole-tree proof refuses it."""
    original_decide = semfix.rules.sem003.decide

    def greedy(self, plan):  # type: ignore[no-untyped-def]
        decision = original_decide(self, plan)
        if plan.fix is not None and plan.fix in self.fixes:  # the plan's fix: its removal's edit takes a line more
            ((start, end, _),) = plan.fix.edits
            cut = ((start, self.text.text.index("\n", end) + 1, ""),)
            greedier = Decision(plan.fix.rule, cut, plan.fix.changes, plan.fix.settles, plan.fix.findings)
            self.fixes[self.fixes.index(plan.fix)] = plan.fix = greedier
        return decision

    monkeypatch.setattr(semfix.rules.sem003, "decide", greedy)
    source = (
        "from jax.experimental import pallas as pl\n\n"
        "def k(sem):\n    v = sem[...]\n    n = 1\n    pl.semaphore_wait(v, 1)\n"
    )
    with pytest.raises(SafetyError, match="differs from the declared"):
        fix_source(source)
    monkeypatch.undo()
    assert fix_source(source).source.endswith("    n = 1\n    pl.semaphore_wait(sem, 1)\n")


_TWO_UNSAFE = """\
from jax.experimental import pallas as pl


def helper(sems, i):
    pl.semaphore_signal(sems[i], 1)
    pl.semaphore_wait(sems[i])
"""


def test_fix_finding_makes_that_finding_s_fix_alone_even_an_unsafe_one() -> None:
    """An editor's quick fix: one finding's Fix, through the same run and proof as `fix`."""
    first, second = fix_source(_TWO_UNSAFE, apply_fixes=False).findings
    assert first.safety == "unsafe" and fix_source(_TWO_UNSAFE).source == _TWO_UNSAFE
    result = semfix.api.fix_finding(_TWO_UNSAFE, second)
    assert result.source == _TWO_UNSAFE.replace("wait(sems[i])", "wait(sems.at[i])")
    assert [f.applied for f in result.findings] == [False, True]


_CARRIED = """\
from jax.experimental import pallas as pl


def kernel(flag):
    seen = flag[...]
    pl.semaphore_signal(seen, 1)
    pl.semaphore_wait(seen, 1)
"""


def test_fix_finding_makes_a_carried_read_s_whole_decision() -> None:
    """One use's quick fix drops the assignment and rewrites every use: the decision is one Fix."""
    use = [f for f in fix_source(_CARRIED, apply_fixes=False).findings if f.line == 6][0]
    result = semfix.api.fix_finding(_CARRIED, use)
    assert result.source == fix_source(_CARRIED).source != _CARRIED


def test_a_carried_read_is_not_marked_applied_when_only_one_of_its_uses_is_chosen() -> None:
    """A carried read's fix is one decision: choosing one use alone (as explain or an editor
    may) makes nothing, and no finding may then claim its fix is in the source."""
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef handshake(sems):\n    done = sems.at[1][...]\n"
        "    pl.semaphore_signal(done, 1)\n    pl.semaphore_wait(done, 1)\n"
    )
    use = next(f for f in fix_source(source, apply_fixes=False).findings if f.line == 6)
    chosen = frozenset({(use.line, use.column, use.end_line, use.end_column)})
    result = fix_source(source, settings=dataclasses.replace(build_settings(), chosen=chosen))
    assert result.source == source
    assert [f.applied for f in result.findings] == [False, False, False]
    assert result.findings[1].fix is not None  # the suggestion is still shown
