"""SEM101's added imports land where ruff's I001 (isort) puts them: a fixture whose imports
ruff finds sorted before the migration is sorted after it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Case, fixture_cases

from semfix.selection import build_settings

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
MIGRATED = [case for case in fixture_cases() if "SEM101" in build_settings(**case.spec.get("settings", {})).enabled]


def _ruff(source: bytes, *fix: str) -> subprocess.CompletedProcess[bytes]:
    command = [RUFF, "check", "--isolated", "--select", "I001", "--target-version", "py39", *fix]
    run = subprocess.run([*command, "--stdin-filename", "x.py", "-"], input=source, capture_output=True, check=False)
    assert run.returncode in (0, 1), run.stderr
    return run


def _sorted(source: bytes) -> bool:
    return _ruff(source).returncode == 0


@pytest.mark.skipif(RUFF is None, reason="ruff is a test dependency")
@pytest.mark.parametrize("case", MIGRATED, ids=[c.name for c in MIGRATED])
def test_migrated_imports_stay_sorted(case: Case) -> None:
    before = case.before
    if not _sorted(before):  # sorted by ruff first: semfix answers only for the imports it adds
        before = _ruff(before, "--fix", "--exit-zero").stdout
        assert _sorted(before)
    assert _sorted(case.fix(before).source)
