"""JAX releases other than the project's, each in a virtual environment the tests make and keep.

The runtime tier runs in-process on the JAX the project's venv has (0.10.2 on Python 3.11). JAX
0.11+ needs Python 3.12+, so a kernel is run on another release in a worker process
(tests/kernel_worker.py) started with the Python of `<repo>/.venv-jax-<version>/`, made here
once and reused while its marker file names the same release. The worker does not import
semfix: the tests fix the kernel here and send its source.
"""

from __future__ import annotations

import glob
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from semfix.jax_versions import parse

REPO = Path(__file__).resolve().parent.parent
WORKER = Path(__file__).with_name("kernel_worker.py")
MARKER = "semfix-jax-version"  # in the env: the release pip installed and `import jax` reported
# Seconds; a kernel runs in ~0.1 s. SEMFIX_KERNEL_TIMEOUT raises it on a slow machine.
TIMEOUT = float(os.environ.get("SEMFIX_KERNEL_TIMEOUT", "5"))


class Unavailable(Exception):
    """No Python can run that JAX here, or its environment could not be made."""


def _version_of(python: str, env: dict[str, str] | None = None) -> tuple[int, ...] | None:
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True, text=True, timeout=30, env=env, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None  # a pyenv shim with no such version selected exits 127: not a Python
    return tuple(map(int, out.split()))


def find_python(needs: tuple[int, int]) -> str:
    """A Python >= `needs`: the project's own if it is one, else $SEMFIX_NEWEST_PYTHON, else
    python3.13/python3.12 on PATH that really run, else pyenv's (its versions/3.1X*/bin/python3)."""
    if sys.version_info >= needs:
        return sys.executable
    given = os.environ.get("SEMFIX_NEWEST_PYTHON")
    if given:
        if (_version_of(given) or ()) < needs:
            raise Unavailable(f"SEMFIX_NEWEST_PYTHON={given} is not a Python >= {'.'.join(map(str, needs))}")
        return given
    candidates = [found for name in ("python3.13", "python3.12") if (found := shutil.which(name))]
    pyenv = shutil.which("pyenv")
    if pyenv:
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += sorted(glob.glob(f"{root}/versions/3.1[2-9]*/bin/python3"))
    for python in candidates:
        if (_version_of(python) or ()) >= needs:
            return python
    raise Unavailable(
        f"no Python >= {'.'.join(map(str, needs))} found (set SEMFIX_NEWEST_PYTHON, or put python3.12 on PATH)"
    )


def _ready(env: Path, version: str) -> bool:
    marker = env / MARKER
    return marker.is_file() and marker.read_text().strip() == version


def jax_python(version: str, say: Callable[[str], None] = print) -> str:
    """The Python of `<repo>/.venv-jax-<version>/`, made first when missing or stale: built in a
    temporary folder beside it and renamed into place, so an interrupted run leaves no half env."""
    env = REPO / f".venv-jax-{version}"
    python = env / "bin" / "python"
    if _ready(env, version):
        return str(python)
    base = find_python((3, 12) if parse(version) >= (0, 11) else (3, 10))
    say(f"making {env.name}: jax=={version} with {base} (once; kept for later runs)")
    building = Path(tempfile.mkdtemp(prefix=f"{env.name}.tmp-", dir=REPO))
    try:
        log = building / "make.log"
        with log.open("w") as out:
            steps = [
                [base, "-m", "venv", str(building)],
                [str(building / "bin" / "python"), "-m", "pip", "install", "-q", f"jax=={version}", "numpy"],
            ]
            for step in steps:
                if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT).returncode:
                    tail = log.read_text()[-2000:]
                    raise Unavailable(f"making {env.name} failed at: {' '.join(step)}\n{tail}")
        found = subprocess.run(
            [str(building / "bin" / "python"), "-c", "import jax; print(jax.__version__)"],
            capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        if found != version:
            raise Unavailable(f"making {env.name}: pip installed jax {found or 'that does not import'}")
        (building / MARKER).write_text(version + "\n")
        if env.exists() and not _ready(env, version):
            say(f"removing {env.name}: not a finished env of jax {version}")
            shutil.rmtree(env)
        try:
            building.rename(env)
        except OSError:  # another session made it meanwhile
            if not _ready(env, version):
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    say(f"made {env.name}")
    return str(python)


def require_jax_python(version: str, config: pytest.Config) -> str:
    """jax_python for a test module: a failure when SEMFIX_REQUIRE_JAX=1 (CI), else a skip."""
    capture = config.pluginmanager.getplugin("capturemanager")

    def say(text: str) -> None:
        with capture.global_and_fixture_disabled():
            print(f"\n[jax_env] {text}", file=sys.stderr, flush=True)

    try:
        return jax_python(version, say)
    except Unavailable as error:
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":
            pytest.fail(f"SEMFIX_REQUIRE_JAX=1 but JAX {version} cannot run: {error}", pytrace=False)
        pytest.skip(f"JAX {version} cannot run here: {error}")


class Worker:
    """One JAX process, of a given Python, that runs kernel modules; restarted when a kernel hangs."""

    def __init__(
        self, python: str = sys.executable, timeout: float = TIMEOUT, env: dict[str, str] | None = None
    ) -> None:
        self.python = python
        self.timeout = timeout
        self.env = env or {}  # more variables for the worker (the oracle's: two CPU devices)
        self.process: subprocess.Popen[str] | None = None
        self.cache: dict[str, str] = {}

    def _start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "JAX_PLATFORMS": "cpu", **self.env}
        process = subprocess.Popen(
            [self.python, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        assert self._read(process, 120) == "ready", f"the kernel worker ({self.python}) did not start"
        return process

    @staticmethod
    def _read(process: subprocess.Popen[str], timeout: float) -> str | None:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], timeout)
        return process.stdout.readline().strip() if ready else None

    def run(self, source: str, *, check: bool = False, strict: bool = False) -> str:
        """ "ok <digest>", "error <text>" or "hang"; answers are cached by request. `check`:
        the result must equal the module's expected(); `strict`: the Pallas family's
        DeprecationWarnings are errors (kernel_worker.py says which)."""
        request = json.dumps({"source": source, "check": check, "strict": strict})
        if request not in self.cache:
            self.cache[request] = self._run(request)
        return self.cache[request]

    def _run(self, request: str) -> str:
        answer = self.answer(request)
        if answer is None:
            return "hang"
        return f"ok {answer['ok']}" if "ok" in answer else f"error {answer['error']}"

    def run_file(self, path: Path, *, check: bool = False) -> tuple[str, str]:
        """run() of the module at `path`, as that file (a traceback names it), uncached: the
        answer and, for an error, its whole traceback."""
        answer = self.answer(json.dumps({"source": path.read_text(), "check": check, "path": str(path)}))
        if answer is None:
            return "hang", ""
        return (f"ok {answer['ok']}", "") if "ok" in answer else (f"error {answer['error']}", answer["traceback"])

    def run_package(self, modules: dict[str, str], entry: str, path: Path | None = None) -> tuple[str, str]:
        """run() of the `entry` module of the package `kern` of `modules` ({name: source}), held
        to its expected(): as files of the folder `path` where given (a traceback names them;
        uncached), else cached by request. The answer and, for an error, its whole traceback."""
        request = {"source": "", "check": True, "package": modules, "entry": entry}
        if path is None:
            key = json.dumps(request)
            if key not in self.cache:
                self.cache[key] = self._run(key)
            return self.cache[key], ""
        answer = self.answer(json.dumps({**request, "path": str(path)}))
        if answer is None:
            return "hang", ""
        return (f"ok {answer['ok']}", "") if "ok" in answer else (f"error {answer['error']}", answer["traceback"])

    def answer(self, request: str) -> dict[str, str] | None:
        """The worker's answer to one request, or None when it hangs (it is restarted)."""
        if self.process is None or self.process.poll() is not None:
            self.process = self._start()
        assert self.process.stdin is not None
        self.process.stdin.write(request + "\n")
        self.process.stdin.flush()
        line = self._read(self.process, self.timeout)
        if not line:
            self.close()
            return None
        return json.loads(line)

    def close(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None
