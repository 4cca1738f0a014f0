"""Every before/after fixture: the fix, its idempotency, and what it reports."""

from __future__ import annotations

import ast
import re
from dataclasses import replace

import pytest
from conftest import FIXTURES, Case, fixture_cases

from semfix import fix_source
from semfix.findings import Fix
from semfix.rules import RULES
from semfix.selection import build_settings

CASES = fixture_cases()


def _without_imports(source: bytes) -> list[bytes]:
    """The lines of no import statement (a parenthesized import's lines included)."""
    spans = [
        (n.lineno, n.end_lineno) for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.Import, ast.ImportFrom))
    ]
    return [line for number, line in enumerate(source.splitlines(), 1) if not any(a <= number <= b for a, b in spans)]


def _splice(source: bytes, result_findings, encoding: str) -> bytes:
    """Apply each applied finding's replacement text at its reported position."""
    text = source.decode(encoding)
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column - 1

    for finding in sorted(result_findings, key=lambda f: (f.line, f.column), reverse=True):
        if finding.applied:
            begin, end = offset(finding.line, finding.column), offset(finding.end_line, finding.end_column)
            assert text[begin:end] == finding.original
            text = text[:begin] + finding.replacement + text[end:]
    return text.encode(encoding)


def test_cases_are_filed_by_rule_under_one_naming_scheme() -> None:
    """tests/fixtures/<group>/<case>/: a rule's code in lower case, or `general`; no case repeats
    its group's code, and `rt_` names exactly the cases whose kernel runs in JAX."""
    groups = {code.lower() for code in RULES} | {"general"}
    assert {entry.name for entry in FIXTURES.iterdir()} <= groups
    folders = [folder for group in FIXTURES.iterdir() for folder in group.iterdir()]
    assert all((folder / "before.py").exists() for folder in folders)
    for case in fixture_cases() + fixture_cases(newer=True):
        group, _, name = case.name.partition("/")
        assert not name.startswith(f"{group}_"), case.name
        assert name.startswith("rt_") == ("runtime" in case.spec), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fix_gives_after_byte_for_byte(case: Case) -> None:
    assert case.fix(case.before).source == case.after


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fixing_after_changes_nothing(case: Case) -> None:
    result = case.fix(case.after)
    assert result.source == case.after
    assert [f for f in result.findings if f.applied] == []


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_reported_changes_and_positions(case: Case) -> None:
    result = case.fix(case.before)
    applied = [f"{f.line}:{f.column} {f.rule}" for f in result.findings if f.applied]
    reported = [f"{f.line}:{f.column} {f.rule}" for f in result.findings if not f.applied]
    assert applied == case.spec.get("changes", [])
    assert reported == case.spec.get("reported", [])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_replacement_texts_rebuild_the_fix(case: Case) -> None:
    result = case.fix(case.before)
    spliced = _splice(case.before, result.findings, result.encoding)
    if any(f.rule in ("SEM101", "SEM103") and f.applied for f in result.findings):
        # SEM101 and SEM103 also add and drop imports, which no finding carries: compare the rest.
        assert _without_imports(spliced) == _without_imports(result.source)
    else:
        assert spliced == result.source


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_str_and_bytes_agree(case: Case) -> None:
    as_bytes = case.fix(case.before)
    as_text = case.fix(case.before.decode(as_bytes.encoding))
    assert as_text.source.encode(as_bytes.encoding) == as_bytes.source
    assert as_text.findings == as_bytes.findings


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_check_mode_reports_what_fix_mode_applies(case: Case) -> None:
    settings = build_settings(**case.spec.get("settings", {}))
    fixed = fix_source(case.before, settings=settings)
    checked = fix_source(case.before, settings=settings, apply_fixes=False)
    assert checked.source == case.before
    assert checked.findings == tuple(replace(f, applied=False) for f in fixed.findings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_lone_carriage_returns_are_line_breaks(case: Case) -> None:
    """CPython ends a line at a lone CR, as at `\\n`: the file with every `\\n` made a CR gets
    the `\\n` file's result, line breaks made CRs."""
    settings = build_settings(**case.spec.get("settings", {}))
    try:
        reference = fix_source(case.before, settings=settings)
    except Exception:  # noqa: BLE001 - the error fixtures: test_bad_input.py and their own tests
        return
    text = case.before.decode(reference.encoding)
    if "\r" in text:
        return

    def lone(value: object) -> object:
        if isinstance(value, Fix):  # its new text, and the texts of its edits (at the same offsets)
            edits = tuple((start, end, lone(text)) for start, end, text in value.edits)
            return replace(value, replacement=lone(value.replacement), edits=edits)
        return value.replace("\n", "\r") if isinstance(value, str) else value

    result = fix_source(text.replace("\n", "\r"), settings=settings)
    findings = tuple(replace(f, **{k: lone(v) for k, v in vars(f).items()}) for f in reference.findings)
    assert result.findings == findings
    assert result.source == reference.source.decode(reference.encoding).replace("\n", "\r")
