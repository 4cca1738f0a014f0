"""The quick engine must agree with the libcst engine exactly wherever it does not defer."""

from __future__ import annotations

import pytest
from conftest import Case, fixture_cases

from semfix import fix_source
from semfix.quick import Defer
from semfix.settings import Settings

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
