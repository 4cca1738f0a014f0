"""Faults around a run: a full disk under its output, its main process killed, Ctrl-C while it
starts. Each ends in one line and the status it means, never a traceback or a stray process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"


def semfix(*args: str, cwd: Path, stdout: object = subprocess.PIPE, code: str = "") -> subprocess.CompletedProcess[str]:
    start = [sys.executable, "-c", code] if code else [sys.executable, "-m", "semfix"]
    return subprocess.run(
        [*start, *args], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True, check=False, timeout=60
    )


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to stand for a full disk")
@pytest.mark.parametrize(
    "args",
    [["check", "k.py"], ["check", "k.py", "--format", "json"], ["fix", "--diff", "k.py"], ["rules"]],
    ids=["text", "json", "diff", "rules"],
)
def test_standard_output_on_a_full_disk_is_one_error_line(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "k.py").write_text(BUGGY)
    with open("/dev/full", "w") as full:
        result = semfix(*args, cwd=tmp_path, stdout=full)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1].startswith("error: standard output: cannot write")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full to stand for a full disk")
def test_output_file_on_a_full_disk_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(BUGGY)
    result = semfix("check", "k.py", "-o", "/dev/full", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr == "error: /dev/full: cannot write the findings: No space left on device\n"


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; elsewhere workers are spawned")
def test_workers_end_when_their_parent_is_killed(tmp_path: Path) -> None:
    """A CI step that captures a run's output waits for every process holding it."""
    body = "".join(f"\n\ndef kernel{i}(sem):\n    pl.semaphore_wait(sem[...])\n" for i in range(40))
    for index in range(200):
        (tmp_path / f"k{index:03}.py").write_text("from jax.experimental import pallas as pl\n" + body)
    with open(tmp_path / "out.txt", "w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "semfix", "check", "-j", "2", "."], cwd=tmp_path, stdout=out, stderr=out
        )
    workers: list[int] = []
    deadline = time.monotonic() + 30
    while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
        workers = [pid for pid in _children(process.pid) if "multiprocessing" in _command(pid) or _is_python(pid)]
        time.sleep(0.01)
    assert len(workers) == 2, "the workers never started"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _is_python(pid: int) -> bool:
    return Path(sys.executable).name in _command(pid) or "python" in _command(pid)


INTERRUPT = """
import sys, click
import semfix.cli.main as main
def interrupted(*args, **kwargs):
    raise KeyboardInterrupt
{target} = interrupted
sys.argv = ["semfix", "check", "."]
main.entry()
"""


@pytest.mark.parametrize("target", ["click.Command.parse_args", "main._Group.get_command"], ids=str)
def test_ctrl_c_while_starting_exits_130_without_a_traceback(tmp_path: Path, target: str) -> None:
    """Ctrl-C while click parses the options, or while a command's module loads: the line any
    interrupt prints, and 130 (click alone says `Aborted!` and exits 1)."""
    result = semfix(cwd=tmp_path, code=INTERRUPT.format(target=target))
    assert result.returncode == 130, result.stderr
    assert result.stderr == "error: interrupted: every file is either as it was or fully rewritten\n"


def test_ctrl_c_while_the_command_line_loads_exits_130(tmp_path: Path) -> None:
    code = (
        "import builtins\nreal = builtins.__import__\n"
        "def load(name, *args, **kwargs):\n"
        "    if name == 'click':\n        raise KeyboardInterrupt\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = load\nimport semfix.cli.main\n"
    )
    result = semfix(cwd=tmp_path, code=code)
    assert (result.returncode, result.stderr) == (130, "error: interrupted\n")
