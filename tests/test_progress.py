"""The progress bar of a long run: the cursor hidden once when it starts, shown once when it ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from semfix.cli.runner import _analyse_all, _Task
from semfix.selection import build_settings

HIDE, SHOW = "\x1b[?25l", "\x1b[?25h"
BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"


def test_the_bar_hides_the_cursor_once_and_shows_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = [_Task(Path(f"{i}.py"), b"", build_settings(), False) for i in range(250)]
    assert len(list(_analyse_all(tasks, 1, progress=True))) == 250
    err = capsys.readouterr().err
    assert (err.count(HIDE), err.count(SHOW)) == (1, 1)
    assert err.startswith(HIDE + "\rsemfix [") and err.endswith("100%  250/250" + SHOW + "\n")


def test_the_bar_shows_the_cursor_again_when_the_run_is_interrupted(capsys: pytest.CaptureFixture[str]) -> None:
    tasks = [_Task(Path(f"{i}.py"), b"", build_settings(), False) for i in range(250)]
    results = _analyse_all(tasks, 1, progress=True)
    next(results)
    results.close()  # what an interrupt does to the generator: its `finally` ends the bar
    err = capsys.readouterr().err
    assert (err.count(HIDE), err.count(SHOW)) == (1, 1) and err.endswith(SHOW + "\n")


@pytest.mark.skipif(os.name == "nt", reason="a pseudo-terminal is POSIX")
def test_a_run_on_a_terminal_draws_one_bar_with_one_hide_and_one_show(tmp_path: Path) -> None:
    """The real command with stderr on a pseudo-terminal, as a user at a shell sees it."""
    import pty

    for i in range(210):  # past the threshold where a bar is worth drawing
        (tmp_path / f"k{i}.py").write_text(BUGGY)
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "semfix", "check", "-j", "2", "."],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    ) as process:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: every writer has exited
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(timeout=120) == 1
    os.close(leader)
    err = seen.decode()
    assert (err.count(HIDE), err.count(SHOW)) == (1, 1), err
    assert err.index(HIDE) < err.index("210/210") < err.index(SHOW)
    assert "210 problems found" in err.split(SHOW, 1)[1]  # the summary comes after the bar
