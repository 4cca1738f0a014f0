"""Bad input, one case each, with what the user sees: one error line, exit 2, nothing lost.

Every case puts one bad input next to a buggy kernel: the bad file must come out
byte-identical and named in a single `error: path: cause` line, and the kernel must still be
fixed. Files the byte scan rules out are never parsed, so each bad file here mentions Pallas.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import semfix.cli.runner
from semfix.cli.main import main
from semfix.files import FileError

HEADER = "from jax.experimental import pallas as pl\n"
BUGGY = HEADER + "\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"
FIXED = BUGGY.replace("sem[...]", "sem")


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False)


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        (root / name).write_bytes(data)
        return root / name

    return make


def _read_only(root: Path) -> Path:
    path = root / "locked.py"
    path.write_text(BUGGY)
    path.chmod(0o444)
    return path


def _symlink_loop(root: Path) -> Path:
    (root / "loop").mkdir()
    (root / "loop" / "again").symlink_to(root / "loop")  # a folder loop: must not be followed forever
    (root / "loop" / "self.py").symlink_to(root / "loop" / "self.py")
    return root / "loop" / "self.py"


def _broken_symlink(root: Path) -> Path:
    (root / "dangling.py").symlink_to(root / "gone.py")
    return root / "dangling.py"


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "syntax error": (
        _write("syntax.py", (HEADER + "def k(sem:\n    pl.semaphore_wait(sem[...])\n").encode()),
        r"syntax error at line 2",
    ),
    "python 2": (
        _write("py2.py", (HEADER + 'print "waiting"\npl.semaphore_wait(s[...])\n').encode()),
        r"syntax error at line 2.*print",
    ),
    "bad utf-8": (
        _write("bytes.py", HEADER.encode() + b"pl.semaphore_wait(s[...])  # \xff\xfe\n"),
        r"cannot decode as utf-8",
    ),
    "bad declared encoding": (
        _write(
            "ascii.py", b"# -*- coding: ascii -*-\n" + HEADER.encode() + b"pl.semaphore_wait(s[...])  # caf\xc3\xa9\n"
        ),
        r"cannot decode as ascii",
    ),
    "nul bytes": (_write("binary.py", HEADER.encode() + b"\x00\x01pl.semaphore_wait(s[...])\n"), r"NUL bytes"),
    "deep nesting": (
        _write("deep.py", (HEADER + "pl.semaphore_wait(" + "(" * 100_000 + "s" + ")" * 100_000 + "[...])\n").encode()),
        r"too deeply nested",
    ),
    "read-only file needing a fix": (_read_only, r"read-only file \(mode 0444\)"),
    "symlink loop": (_symlink_loop, r"cannot read: Too many levels of symbolic links"),
    "broken symlink": (_broken_symlink, r"cannot read: No such file or directory"),
}


@pytest.mark.parametrize("dirty", [False, True], ids=["checked", "allow-dirty"])  # written after, or while, analysing
@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_named_and_left_alone(tmp_path: Path, name: str, dirty: bool) -> None:
    make, cause = CASES[name]
    bad = make(tmp_path)
    before = bad.read_bytes() if bad.exists() else None
    (tmp_path / "good.py").write_text(BUGGY)
    result = cli("fix", "-j", "2", *(["--allow-dirty"] if dirty else []), ".", cwd=tmp_path)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    relative = os.path.relpath(bad, tmp_path)
    assert len(errors) == 1 and errors[0].startswith(f"error: {relative}: "), result.stderr
    assert re.search(cause, errors[0]), errors[0]
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert (bad.read_bytes() if bad.exists() else None) == before
    assert (tmp_path / "good.py").read_text() == FIXED


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "good.py").write_text(BUGGY)
    result = cli("fix", "nope.py", "empty", "good.py", cwd=tmp_path)
    warnings = [line for line in result.stderr.splitlines() if line.startswith(("error:", "warning:"))]
    assert warnings == ["warning: nope.py: no such file or folder", "warning: empty: no Python files found here"]
    # As ruff: a path that is missing or empty is a warning while something else was checked.
    assert result.returncode == 0 and (tmp_path / "good.py").read_text() == FIXED
    assert "2 paths not found or empty" in result.stderr and "0 errors" in result.stderr


def test_nothing_checked_at_all_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = cli("check", "nope.py", "empty", cwd=tmp_path)
    assert result.returncode == 2 and "error: empty: no Python files found here" in result.stderr


def test_a_folder_ignored_by_git_says_so(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "k.py").write_text(BUGGY)
    result = cli("check", "build", cwd=tmp_path)
    assert "build: its Python files are all ignored by git" in result.stderr, result.stderr
    assert "no Python files found" not in result.stderr


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root reads anything, so the failed read is simulated where semfix reads."""
    (tmp_path / "secret.py").write_text(BUGGY)
    (tmp_path / "good.py").write_text(BUGGY)
    real_read = semfix.cli.runner.read_source

    def read(path: Path) -> bytes:
        if path.name == "secret.py":
            raise FileError("cannot read: Permission denied")
        return real_read(path)

    monkeypatch.setattr(semfix.cli.runner, "read_source", read)
    result = CliRunner().invoke(main, ["fix", "-j", "1", str(tmp_path)])
    assert result.exit_code == 2
    assert f"error: {tmp_path / 'secret.py'}: cannot read: Permission denied" in result.output
    assert (tmp_path / "secret.py").read_text() == BUGGY and (tmp_path / "good.py").read_text() == FIXED


@pytest.mark.parametrize("change", ["deleted", "rewritten"])
def test_file_changed_between_read_and_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    target = tmp_path / "k.py"
    target.write_text(BUGGY)
    real_analyse = semfix.cli.runner.analyse

    def analyse_then_interfere(task):  # type: ignore[no-untyped-def]
        outcome = real_analyse(task)
        if change == "deleted":
            target.unlink()
        else:
            target.write_text("# someone else's edit\n")
        return outcome

    monkeypatch.setattr(semfix.cli.runner, "analyse", analyse_then_interfere)
    result = CliRunner().invoke(main, ["fix", "-j", "1", str(target)])
    assert result.exit_code == 2
    expected = "deleted while semfix ran" if change == "deleted" else "changed on disk while semfix ran"
    assert expected in result.output
    if change == "deleted":
        assert not target.exists()
    else:
        assert target.read_text() == "# someone else's edit\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ([] if change == "deleted" else ["k.py"])


@pytest.mark.parametrize("source", [b"", b"\xef\xbb\xbf"], ids=["empty", "bom only"])
def test_valid_oddities_are_not_errors(tmp_path: Path, source: bytes) -> None:
    (tmp_path / "odd.py").write_bytes(source)
    result = cli("check", "odd.py", cwd=tmp_path)
    assert result.returncode == 0 and (tmp_path / "odd.py").read_bytes() == source


def test_a_five_megabyte_file_finishes(tmp_path: Path) -> None:
    kernel = (
        "\n\ndef kernel_{n}(sem, sems):\n    pl.semaphore_signal(sems.at[{n}], 1)\n    pl.semaphore_wait(sem[...], 1)\n"
    )
    body = HEADER + "".join(kernel.format(n=n) for n in range(50_000))
    (tmp_path / "huge.py").write_text(body)
    assert len(body) > 5_000_000
    started = time.perf_counter()
    result = cli("fix", "-q", "huge.py", cwd=tmp_path)
    elapsed = time.perf_counter() - started
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "huge.py").read_text() == body.replace("sem[...]", "sem")
    print(f"5 MB file ({body.count(chr(10))} lines) fixed in {elapsed:.1f} s")


@pytest.mark.parametrize(
    ("signum", "group"),
    [(signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True)],
    ids=["SIGINT", "SIGTERM", "Ctrl-C"],
)
def test_interrupt_leaves_every_file_old_or_new(tmp_path: Path, signum: int, group: bool) -> None:
    """Two workers analyse (`-j 2`); the signal reaches semfix alone, or, as Ctrl-C in a
    terminal does, its workers too: they leave it to semfix, which says so once."""
    count = 400
    for index in range(count):
        (tmp_path / f"k{index:03}.py").write_text(BUGGY + f"# {index}\n" + "x = 1\n" * 400)
    started = time.perf_counter()
    cli("--version", cwd=tmp_path)
    startup = time.perf_counter() - started  # signal only once semfix is surely running
    process = subprocess.Popen(
        [sys.executable, "-m", "semfix", "fix", "-q", "-j", "2", "."],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    time.sleep(2 * startup + 0.3)
    if group:
        os.killpg(process.pid, signum)
    else:
        process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    states = set()
    for index in range(count):
        text = (tmp_path / f"k{index:03}.py").read_text()
        old, new = BUGGY + f"# {index}\n" + "x = 1\n" * 400, FIXED + f"# {index}\n" + "x = 1\n" * 400
        assert text in (old, new)
        states.add(text == new)
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".py")] == []
    assert "Traceback" not in stderr
    if process.returncode == 0:  # finished before the signal (a loaded machine): every file fixed
        assert states == {True}
    else:  # cut short
        assert process.returncode == 130 and "interrupted" in stderr


def test_a_deleted_current_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = (
        "import os, sys; os.chdir(sys.argv[1]); os.rmdir(sys.argv[1]); "
        "from semfix.cli.main import main; main(['check', 'x.py'])"
    )
    result = subprocess.run([sys.executable, "-c", script, str(gone)], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "current folder no longer exists" in result.stderr and "Traceback" not in result.stderr
