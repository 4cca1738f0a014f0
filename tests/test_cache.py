"""The results cache (semfix/cache.py): a second run over the same bytes under the same settings
analyses nothing and says the same; any change to what a result follows from is a miss."""

from __future__ import annotations

import json
import marshal
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import semfix.cli.runner
from semfix.cli.main import main

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_signal(sem[...], 2)\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SEMFIX_NO_CACHE", raising=False)
    monkeypatch.delenv("SEMFIX_CACHE_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(BUGGY)
    return tmp_path


def _check(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", *args, "k.py"])


def _no_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, analysing a file fails the run: only the cache can answer."""

    def refuse(task: object) -> object:
        raise AssertionError(f"analysed again: {task}")

    monkeypatch.setattr(semfix.cli.runner, "analyse", refuse)


def test_a_second_run_reads_the_first_runs_findings(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _check()
    assert first.exit_code == 1 and [f["rule"] for f in json.loads(first.stdout)] == ["SEM001"]
    assert (project / ".semfix_cache" / ".gitignore").read_text().splitlines()[-1] == "*"
    _no_analysis(monkeypatch)
    second = _check()
    assert (second.exit_code, second.stdout) == (first.exit_code, first.stdout)


def test_new_bytes_other_rules_or_no_cache_analyse_again(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check().exit_code == 1
    _no_analysis(monkeypatch)
    for args in (("--no-cache",), ("--select", "SEM"), ("--unsafe-fixes",)):
        assert isinstance(_check(*args).exception, AssertionError), args
    (project / "k.py").write_text(BUGGY.replace("2)", "3)"))
    assert isinstance(_check().exception, AssertionError)


def test_a_fix_is_kept_and_written_from_the_cache(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CliRunner().invoke(main, ["fix", "-j", "1", "--diff", "k.py"]).exit_code == 1
    _no_analysis(monkeypatch)
    fixed = CliRunner().invoke(main, ["fix", "-j", "1", "--allow-dirty", "k.py"])
    assert fixed.exit_code == 0, fixed.output
    assert (project / "k.py").read_text() == BUGGY.replace("sem[...]", "sem")


def test_an_entry_that_does_not_read_is_a_miss(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _check().exit_code == 1
    [entry] = [p for p in (project / ".semfix_cache").rglob("*") if p.is_file() and p.name != ".gitignore"]
    entry.write_bytes(marshal.dumps(([("SEM001",)], None, True)))
    again = _check()
    assert again.exit_code == 1 and [f["rule"] for f in json.loads(again.stdout)] == ["SEM001"]
