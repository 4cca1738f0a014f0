"""The results cache (semfix/cache.py): a second run over the same bytes under the same settings
analyses nothing and says the same; any change to what a result follows from is a miss."""

from __future__ import annotations

import json
import marshal
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import FIXTURES

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
    entries = [p for p in (project / ".semfix_cache").rglob("*") if p.is_file() and p.name != ".gitignore"]
    [run] = [p for p in entries if p.name.startswith("run-")]  # the run's, holding the file's key
    [entry] = [p for p in entries if p != run and not p.name.startswith("scan-")]
    entry.write_bytes(marshal.dumps(([("SEM001",)], None, True)))
    again = _check()
    assert again.exit_code == 1 and [f["rule"] for f in json.loads(again.stdout)] == ["SEM001"]


SIBLINGS = FIXTURES / "sem006" / "regular_for_a_kernel_a_sibling_launches"  # the launch allocates in launch.py


@pytest.fixture
def package(project: Path) -> Path:
    """kern/: a kernel (before.py) whose semaphore another module's launch allocates (launch.py)."""
    package = project / "kern"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module in ("before.py", "launch.py"):
        shutil.copy(SIBLINGS / module, package / module)
    return package


def _check_package(*args: str) -> Result:
    return CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", *args, "kern"])


def _rules(run: Result) -> list[str]:
    return [f"{f['path']}:{f['rule']}" for f in json.loads(run.stdout)]


def test_an_unchanged_run_asks_its_modules_nothing(package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the run's modules give each other (here, the launch in launch.py) is kept with the
    run: a warm run neither analyses a file nor asks the run's questions again (issue 47)."""
    first = _check_package("--select", "SEM")
    assert _rules(first) == ["kern/before.py:SEM006"], first.output
    _no_analysis(monkeypatch)
    for question in ("imported_by_run", "reads_through_run", "read_through_run", "launched_by_run"):
        monkeypatch.setattr(semfix.cli.runner, question, lambda *_: pytest.fail("asked the run again"))
    for scan in ("may_fire", "_may_read_through"):  # nor scans a file's bytes again
        monkeypatch.setattr(semfix.cli.runner, scan, lambda *_: pytest.fail("scanned again"))
    second = _check_package("--select", "SEM")
    assert (second.exit_code, second.stdout) == (first.exit_code, first.stdout)


def test_an_edit_to_another_module_of_the_run_is_a_miss(package: Path) -> None:
    """The kernel's own bytes are unchanged; the launch in its sibling now allocates a DMA
    semaphore, and the finding it gave goes, as a run without the cache says."""
    assert _rules(_check_package()) == ["kern/before.py:SEM006"]
    launch = package / "launch.py"
    launch.write_text(launch.read_text().replace("SemaphoreType.REGULAR", "SemaphoreType.DMA"))
    assert _rules(_check_package("--no-cache")) == []
    assert _rules(_check_package()) == []


def test_a_file_that_does_not_parse_is_kept_with_its_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "k.py").write_text(BUGGY + "\ndef broken(:\n")
    first = _check()
    assert first.exit_code == 2 and "k.py" in first.output
    _no_analysis(monkeypatch)
    second = _check()
    assert (second.exit_code, second.stdout) == (first.exit_code, first.stdout)


def test_a_run_whose_entry_does_not_read_is_a_miss(project: Path) -> None:
    assert _check().exit_code == 1
    [run] = (project / ".semfix_cache").rglob("run-*")
    for garbage in (marshal.dumps(["not a key"]), marshal.dumps(("!",)), b"\0"):
        run.write_bytes(garbage)
        again = _check()
        assert again.exit_code == 1 and [f["rule"] for f in json.loads(again.stdout)] == ["SEM001"]


def test_a_change_to_the_names_of_the_run_s_modules_is_a_miss(project: Path) -> None:
    """No file's bytes change: a project root marker (`.hg`) makes `ring/` the top, so its
    modules are named `before` and `launch`, and `from before import kernel` names a module of
    the run; the launch's allocation then reaches the kernel, as a run without the cache says."""
    ring = project / "ring"
    ring.mkdir()
    shutil.copy(SIBLINGS / "before.py", ring / "before.py")
    launch = (SIBLINGS / "launch.py").read_text().replace("before.kernel", "body")
    (ring / "launch.py").write_text(launch.replace("from . import before", "from before import kernel as body"))
    checked = ["check", "-j", "1", "--output-format", "json", "ring"]
    assert _rules(CliRunner().invoke(main, checked)) == []
    (ring / ".hg").mkdir()
    assert _rules(CliRunner().invoke(main, [*checked, "--no-cache"])) == ["ring/before.py:SEM006"]
    assert _rules(CliRunner().invoke(main, checked)) == ["ring/before.py:SEM006"]


def test_a_scan_kept_under_other_settings_is_not_read(project: Path) -> None:
    """The default rules' byte scan clears a file that only the migration (SEM101) flags: a run
    with every rule scans it again."""
    (project / "k.py").write_text("from jax.experimental.pallas import tpu as pltpu\n\nSPACE = pltpu.ANY\n")
    default = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", "k.py"])
    assert _rules(default) == [] and "0 parsed" in default.output
    every = CliRunner().invoke(main, ["check", "-j", "1", "--output-format", "json", "--select", "SEM", "k.py"])
    assert _rules(every) == ["k.py:SEM101"]


def test_the_code_is_known_by_an_installs_record_else_by_each_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout's code is fingerprinted by each module's size and mtime, so an edit to one is
    new code; a regular install's by its RECORD, which pip writes at each install: one stat, no
    walk of the package (195 system calls of a one-file check)."""
    import os

    import semfix
    from semfix import cache

    package = os.path.dirname(cache.__file__)
    record = os.path.join(os.path.dirname(package), f"semfix-{semfix.__version__}.dist-info", "RECORD")
    assert not os.path.exists(record)  # the tests run from a checkout
    real_stat, real_walk = os.stat, os.walk
    walked: list[object] = []
    monkeypatch.setattr(os, "walk", lambda *a, **k: walked.append(a) or real_walk(*a, **k))
    fingerprints = []
    for edited in (None, os.path.join(package, "rules", "sem001.py")):

        def stat(path: object, *args: object, _edited: object = edited, **kwargs: object) -> os.stat_result:
            found = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
            if path != _edited:
                return found
            return os.stat_result((*found[:8], found[8] + 1, found[9]))  # an mtime one second later

        monkeypatch.setattr(os, "stat", stat)
        cache._code_fingerprint.cache_clear()
        fingerprints.append(cache._code_fingerprint())
    assert fingerprints[0] != fingerprints[1] and walked
    installed = tmp_path / "RECORD"
    walked.clear()
    for content in ("semfix/__init__.py,sha256=a,1\n", "semfix/__init__.py,sha256=b,1\n"):
        installed.write_text(content)
        os.utime(installed, ns=(1, len(fingerprints)))
        monkeypatch.setattr(os, "stat", lambda path, *a, **k: real_stat(installed if path == record else path, *a, **k))
        cache._code_fingerprint.cache_clear()
        fingerprints.append(cache._code_fingerprint())
    cache._code_fingerprint.cache_clear()
    assert len(set(fingerprints)) == 4 and not walked
