"""The quick engine must agree with the libcst engine exactly wherever it does not defer."""

from __future__ import annotations

import ast
import dataclasses
import re
import sys

import pytest
from conftest import Case, fixture_cases

from semfix import FixResult, fix_source
from semfix.findings import Finding
from semfix.quick import Defer, analyse
from semfix.settings import Settings
from semfix.text import line_starts

CASES = fixture_cases()


def _both(source: bytes, settings: Settings, apply_fixes: bool):  # type: ignore[no-untyped-def]
    reference = fix_source(source, settings=settings, apply_fixes=apply_fixes, engine="libcst")
    try:
        quick = fix_source(source, settings=settings, apply_fixes=apply_fixes, engine="quick")
    except Defer:
        return reference, None
    return reference, quick


@pytest.mark.parametrize("apply_fixes", [True, False], ids=["fix", "check"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_quick_engine_matches_libcst(case: Case, apply_fixes: bool) -> None:
    settings = Settings.build(**case.spec.get("settings", {}))
    for source in (case.before, case.after):
        reference, quick = _both(source, settings, apply_fixes)
        if quick is not None:
            assert quick.source == reference.source
            assert quick.findings == reference.findings
            assert quick.encoding == reference.encoding


def test_quick_engine_takes_most_fixtures() -> None:
    """Guard against a quick engine that defers everything (and so proves nothing)."""
    taken = 0
    for case in CASES:
        try:
            fix_source(case.before, settings=Settings.build(**case.spec.get("settings", {})), engine="quick")
            taken += 1
        except Defer:
            pass
    assert taken >= len(CASES) // 2


# What the quick engine still hands to libcst: the rules a later step of issue 13 takes over.
_STILL_DEFERRED = re.compile(r"SEM003|SEM101|SEM102|attribute chain|assignment expression")


def _quick_takes(source: str | bytes, settings: Settings) -> bool:
    try:
        analyse(source, settings, apply_fixes=True)
    except Defer as reason:
        assert _STILL_DEFERRED.search(str(reason)), f"deferred: {reason}"
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_quick_engine_defers_only_what_it_does_not_model(case: Case) -> None:
    """Ignore comments, comments and line breaks at the brackets and reads of reads are the
    quick engine's own."""
    for settings in (Settings.build(**case.spec.get("settings", {})), Settings.build(select=["SEM"])):
        for source in (case.before, case.after):
            _quick_takes(source, settings)


def _same(case: Case, variant: str, settings: Settings, reference: FixResult | None = None) -> None:
    """Both engines give the variant the same output and findings; the quick engine takes it
    whenever it takes the fixture itself."""
    if not _quick_takes(case.before, settings) or not _quick_takes(variant, settings):
        return
    if reference is None:
        reference = fix_source(variant, settings=settings, engine="libcst")
    quick = fix_source(variant, settings=settings, engine="quick")
    assert (quick.source, quick.findings) == (reference.source, reference.findings), variant


def _quick_findings(case: Case, text: str, settings: Settings) -> tuple[Finding, ...]:
    """The fixture's findings, from the quick engine; none when it defers the fixture."""
    if not _quick_takes(case.before, settings):
        return ()
    return fix_source(text, settings=settings, apply_fixes=False, engine="quick").findings


def _text(case: Case) -> str:
    return case.before.decode(fix_source(case.before, apply_fixes=False).encoding)


def _offset(text: str, line: int, column: int) -> int:
    return line_starts(text)[line - 1] + column - 1


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ignore_comments_agree(case: Case) -> None:
    """Every finding's first or last line gets a bare ignore, one for its rule, or one for
    another rule (lower case, in a list); findings are silenced alike, and the fixes kept."""
    settings = Settings.build(**case.spec.get("settings", {}))
    text = _text(case)
    findings = _quick_findings(case, text, settings)
    comments: dict[int, str] = {}
    shift = len(case.name)  # varies which finding gets which comment from fixture to fixture
    for index, finding in enumerate(findings):
        kind = (index + shift) % 3
        codes = ["", f"[{finding.rule}]", "[sem004, SEM002]" if finding.rule == "SEM001" else "[ sem001 ]"][kind]
        comments.setdefault(finding.line if (index + shift) % 2 else finding.end_line, f"  # semfix: ignore{codes}")
    lines = text.splitlines(keepends=True)
    for line, comment in comments.items():
        body = lines[line - 1].rstrip("\r\n")
        lines[line - 1] = body + comment + lines[line - 1][len(body) :]
    variant = "".join(lines)
    if comments and _parses(variant):
        _same(case, variant, settings)


_BRACKETS = {  # (value, `[...]`) -> the variant text of the whole subscript
    "comment in the brackets": lambda value, rest: f"{value}[  # note\n{rest[1:]}",
    "line break in the brackets": lambda value, rest: f"{value}{rest[:-1]}\n]",
    "continued line before them": lambda value, rest: f"{value} \\\n    {rest}",
    "line break before them": lambda value, rest: f"{value}\n    {rest}",
    "comment in the value's parentheses": lambda value, rest: f"({value}  # note\n){rest}",
    "comment after it, in parentheses": lambda value, rest: f"({value}{rest}  # note\n)",
    "comment before it, in parentheses": lambda value, rest: f"(  # note\n{value}{rest})",
}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_comments_and_line_breaks_at_the_brackets_agree(case: Case) -> None:
    """Each flagged subscript, written with comments or line breaks around or inside its last
    brackets (one form each, in turn): libcst reports what it cannot cut, and cuts line
    breaks inside the brackets."""
    settings = Settings.build(**case.spec.get("settings", {}))
    text = _text(case)
    findings = _quick_findings(case, text, settings)
    variant = text
    forms = list(_BRACKETS.values())
    for index, finding in enumerate(sorted(findings, key=lambda f: (f.line, f.column), reverse=True)):
        start, end = _offset(text, finding.line, finding.column), _offset(text, finding.end_line, finding.end_column)
        written = text[start:end]
        if not written.endswith("]"):
            continue
        cut = written.rindex("[")
        form = forms[(index + len(case.name)) % len(forms)]
        variant = variant[:start] + form(written[:cut], written[cut:]) + variant[end:]
    if variant != text and _parses(variant):
        _same(case, variant, settings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_lone_carriage_returns_are_line_breaks(case: Case) -> None:
    """CPython ends a line at a lone CR, as at `\\n`: the file with every `\\n` made a CR gets
    the result of the `\\n` file (which the libcst engine's equals), line breaks made CRs."""
    text = _text(case)
    if "\r" in text or not _quick_takes(case.before, Settings.build(**case.spec.get("settings", {}))):
        return
    settings = Settings.build(**case.spec.get("settings", {}))
    reference = fix_source(text, settings=settings, engine="quick")

    def lone(value: object) -> object:
        return value.replace("\n", "\r") if isinstance(value, str) else value

    findings = tuple(dataclasses.replace(f, **{k: lone(v) for k, v in vars(f).items()}) for f in reference.findings)
    _same(case, text.replace("\n", "\r"), settings, FixResult(lone(reference.source), findings, reference.encoding))  # type: ignore[arg-type]


_NEWER = pytest.mark.skipif(sys.version_info < (3, 12), reason="this Python's ast cannot parse PEP 695 syntax")


@_NEWER
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_type_parameters_agree(case: Case) -> None:
    """Every function and class made generic, and a type alias added: same results."""
    text = re.sub(r"^(\s*)def (\w+)\(", r"\1def \2[T: int, *Ts, **P](", _text(case), flags=re.MULTILINE)
    text = re.sub(r"^(\s*)class (\w+)\b", r"\1class \2[T]", text, flags=re.MULTILINE)
    text += "\ntype Pair[T] = tuple[T, T]\n"
    if _parses(text):
        _same(case, text, Settings.build(**case.spec.get("settings", {})))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="`except*` is Python 3.11 syntax: see test_newer_syntax.py")
def test_except_star_agrees() -> None:
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef kernel(sem, sems, i):\n"
        "    try:\n        pl.semaphore_wait(sem[...])\n    except* ValueError as group:\n"
        "        pl.semaphore_signal(sems.at[i][...], 1)\n        sems.at[i]\n"
        "    finally:\n        pl.semaphore_read(sem[()])\n"
    )
    reference = fix_source(source, engine="libcst")
    quick = fix_source(source, engine="quick")
    assert quick.findings == reference.findings and len(quick.findings) == 3
    assert quick.source == reference.source
