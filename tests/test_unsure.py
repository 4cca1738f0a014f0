"""What the engine cannot make sure of: reported without a fix, left unresolved, or refused.

Each case once went to the libcst engine; with one engine, each has a sound answer of its own.
"""

from __future__ import annotations

import tokenize

import pytest

import semfix.analysis.context
from semfix import SourceError, fix_source
from semfix.selection import build_settings
from semfix.settings import Settings

PL = "from jax.experimental import pallas as pl\n"


def _not_fixed(source: str, reason: str, settings: Settings | None = None) -> list[str]:
    """The rules of the findings, after checking none is fixed and each names `reason`."""
    result = fix_source(source, settings=settings)
    assert result.source == source and result.findings
    for finding in result.findings:
        assert not finding.applied and finding.replacement is None
        assert finding.message.endswith(f"(not fixed: {reason})")
    return [f.rule for f in result.findings]


@pytest.mark.parametrize("star", ["from mykernels import *", "from jax.experimental.pallas import *"])
def test_a_star_import_leaves_the_names_it_may_bind_unresolved(star: str) -> None:
    """`pl` (and `semaphore_wait`) may be rebound by the star import: no finding is certain."""
    for source in (
        f"{PL}{star}\n\n\ndef k(sem):\n    pl.semaphore_wait(sem[...])\n",
        f"{star}\n{PL}\n\ndef k(sem):\n    pl.semaphore_wait(sem[...])\n    semaphore_wait(sem[...])\n",
    ):
        result = fix_source(source, settings=build_settings(select=["ALL"]))
        assert (result.source, result.findings) == (source, ())


def test_a_star_import_leaves_local_names_resolved() -> None:
    source = (
        "from mykernels import *\n\n\n"
        "def k(sem):\n    from jax.experimental import pallas as pl\n    pl.semaphore_wait(sem[...])\n"
    )
    assert fix_source(source).source == source.replace("sem[...]", "sem")


def test_a_semaphore_call_inside_a_semaphore_argument_fixes_nothing() -> None:
    source = (
        f"{PL}\n\ndef k(sems, x):\n"
        "    pl.semaphore_signal(sems.at[pl.semaphore_read(x[...])], 1)\n    pl.semaphore_wait(x[...])\n"
    )
    assert _not_fixed(source, "a semaphore or DMA call inside one of their arguments") == ["SEM001", "SEM001"]


@pytest.mark.parametrize("subscript", ["sems[0,]", "sems[(0,)]"])
def test_an_unusual_subscript_is_reported_not_rewritten(subscript: str) -> None:
    """Not even as an unsafe fix (`sems[*i]` is no element read: no finding)."""
    source = f"{PL}\n\ndef k(sems, i):\n    pl.semaphore_wait({subscript})\n"
    assert _not_fixed(source, "an unusual subscript", build_settings(unsafe_fixes=True)) == ["SEM002"]


def test_text_the_cut_does_not_know_before_the_bracket_is_not_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """No source is known to reach it; if one does, the finding stays and the fix does not."""
    monkeypatch.setattr(semfix.analysis.context, "_AFTER_VALUE", semfix.analysis.context.re.compile(r"(?P<after>)\A\Z"))
    source = f"{PL}\n\ndef k(sem):\n    pl.semaphore_wait(sem[...])\n"
    [finding] = fix_source(source).findings
    assert finding.rule == "SEM001" and not finding.applied and "not fixed" in finding.message


def test_a_tokenizer_failure_is_a_source_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def fails(readline):  # type: ignore[no-untyped-def]
        raise tokenize.TokenError("EOF in multi-line statement", (1, 0))

    monkeypatch.setattr(tokenize, "generate_tokens", fails)
    with pytest.raises(SourceError, match="cannot tokenize: .*EOF in multi-line statement"):
        fix_source(f"{PL}\n\ndef k(sem):\n    pl.semaphore_wait(sem[...]  # why\n    )\n")


def test_an_unknown_encoding_is_a_source_error() -> None:
    with pytest.raises(SourceError, match="bad encoding declaration: unknown encoding: nonsense"):
        fix_source(b"# -*- coding: nonsense -*-\n" + PL.encode() + b"pl.semaphore_wait(s[...])\n")


def test_an_encoding_that_does_not_round_trip_is_checked_not_fixed() -> None:
    """iso2022_jp drops a redundant escape when decoding: writing the file back would change
    bytes no rule asked to change. Checking is fine; fixing is refused, naming why."""
    source = b"# -*- coding: iso2022_jp -*-\n\x1b(B" + PL.encode() + b"pl.semaphore_wait(s[...])\n"
    assert [f.rule for f in fix_source(source, apply_fixes=False).findings] == ["SEM001"]
    with pytest.raises(SourceError, match="cannot write this file back byte for byte in iso2022_jp"):
        fix_source(source)


_SEM101 = build_settings(select=["SEM"], target_jax="0.10.2")
_RARE_PLACEMENTS = {
    "only in an if": (
        "import sys\nif sys:\n    from jax.experimental.pallas import tpu as pltpu\n    import os\n\n\n"
        "def kernel(sem):\n    pltpu.semaphore_signal(sem, 1)\n",
        "no import block to put the pallas import in",
    ),
    "one-line function": (
        "def kernel(sem): from jax.experimental.pallas import tpu as pltpu; pltpu.semaphore_signal(sem, 1)\n",
        "an import that shares its line, at line 1",
    ),
    "last statement, comment above": (
        f"{PL}\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n"
        "    # old\n    from jax.experimental.pallas import tpu as pltpu\n",
        "an import dropped at the end of a block, at line 7",
    ),
    "class body import": (
        "class K:\n    from jax.experimental.pallas import tpu as pltpu\n    pltpu.semaphore_wait(SEM, 1)\n",
        "an import in a class body, read at line 3",
    ),
    "alias read but bound nowhere": (
        "from jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(sem):\n    pltpu.semaphore_signal(sem, 1)\n    pl.semaphore_wait(sem, 1)\n",
        "`pl` is read where nothing binds it, at line 6",
    ),
    "continues a line": (  # `import jax; \` joins the import's line: cutting it would cut into that
        "import jax; \\\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n",
        "an import that shares its line, at line 2",
    ),
    "function replaced": (
        "from jax.experimental.pallas import tpu as pltpu\n\npltpu.semaphore_wait = print\n\n\n"
        "def kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n",
        "`pltpu.semaphore_wait` is assigned or deleted at line 3",
    ),
}


@pytest.mark.parametrize("source, reason", _RARE_PLACEMENTS.values(), ids=_RARE_PLACEMENTS.keys())
def test_sem101_rare_import_placements_are_reported_not_fixed(source: str, reason: str) -> None:
    assert set(_not_fixed(source, reason, _SEM101)) == {"SEM101"}


def test_sem101_a_reference_over_several_lines_is_reported_not_fixed() -> None:
    source = (
        f"{PL}from jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(sem):\n    (pltpu\n     .semaphore_signal)(sem, 1)\n    return pltpu.VMEM\n"
    )
    assert _not_fixed(source, "a reference over several lines", _SEM101) == ["SEM101"]


def test_sem101_a_reference_in_an_f_string_is_reported_not_fixed() -> None:
    source = (
        f"{PL}from jax.experimental.pallas import tpu as pltpu\n\n\n"
        'def name():\n    return f"{pltpu.semaphore_wait}"\n'
    )
    assert _not_fixed(source, "in an f-string", _SEM101) == ["SEM101"]
