"""The runtime tier on the newest JAX semfix supports (semfix.jax_versions.NEWEST), which needs
Python 3.12+: each fixture kernel runs in a worker process of the env tests/jax_env.py makes.

The buggy kernel fails with that release's error: case.json "runtime" "errors" {version: regex}
where its text differs from 0.10.2's "error" (searched in the worker's "Type: message"), and
semfix's fix computes the module's expected() with the Pallas family's deprecation warnings
made errors, so a migrated kernel is one that the next JAX still runs. A case with "oldest":
"X.Y.Z" also runs its fixed kernel on that JAX, where nothing new warns. With
SEMFIX_REQUIRE_JAX=1 (set by .ci/run) an env that cannot be made fails these tests.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest
from conftest import FIXTURES, Case, fixture_cases
from jax_env import Worker, find_python, jax_python, require_jax_python

from semfix.jax_versions import NEWEST, spelled

pytestmark = pytest.mark.jax

VERSION = spelled(NEWEST)
CASES = [case for case in fixture_cases() if "runtime" in case.spec]


def newest_error(case: Case) -> str | None:
    runtime = case.spec["runtime"]
    return runtime.get("errors", {}).get(VERSION, runtime.get("error"))


@pytest.fixture(scope="module")
def workers(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Worker]]:
    """A worker per JAX release, started (and its env made) when a test first asks for it."""
    running: dict[str, Worker] = {}

    def worker(version: str) -> Worker:
        if version not in running:
            running[version] = Worker(require_jax_python(version, request.config))
        return running[version]

    yield worker
    for each in running.values():
        each.close()


def _fixed(case: Case) -> str:
    return case.fix(case.before).source.decode()


BUGGY = [case for case in CASES if newest_error(case)]
CORRECT = [case for case in CASES if case.spec["runtime"].get("runs_as_written")]
FIXED = [case for case in CASES if case.spec.get("changes")]


def test_every_runtime_kernel_says_what_it_does_on_the_newest_jax() -> None:
    assert CASES and sorted(BUGGY + CORRECT, key=lambda case: case.name) == CASES


@pytest.mark.parametrize("case", BUGGY, ids=[c.name for c in BUGGY])
def test_buggy_kernel_raises_the_newest_jax_error(case: Case, workers: Callable[[str], Worker]) -> None:
    """Under the same rule as the fixed kernels: a Pallas deprecation is an error on the newest JAX."""
    answer = workers(VERSION).run(case.before.decode(), strict=True)
    assert answer.startswith("error ") and re.search(newest_error(case) or "", answer), answer


@pytest.mark.parametrize("case", CORRECT, ids=[c.name for c in CORRECT])
def test_correct_kernel_runs_as_written(case: Case, workers: Callable[[str], Worker]) -> None:
    assert workers(VERSION).run(case.before.decode(), check=True, strict=True).startswith("ok "), case.name


@pytest.mark.parametrize(
    "case",
    FIXED,
    ids=[c.name for c in FIXED],
)
def test_fixed_kernel_computes_without_a_pallas_deprecation(case: Case, workers: Callable[[str], Worker]) -> None:
    fixed = _fixed(case)
    answer = workers(VERSION).run(fixed, check=True, strict=True)
    assert answer.startswith("ok "), answer
    if "oldest" in case.spec["runtime"]:  # that JAX warns of nothing new: its warnings stay warnings
        oldest = case.spec["runtime"]["oldest"]
        answer = workers(oldest).run(fixed, check=True)
        assert answer.startswith("ok "), f"on JAX {oldest}: {answer}"


# The worker's strict mode: what it makes an error, and what it leaves alone.
DEPRECATED = """
import warnings
from jax.experimental import pallas as pl

def run():
    warnings.warn("numpy.something is deprecated", DeprecationWarning)  # not Pallas's: stays a warning
    return [len(pl.DeviceIdType.MESH.name)]

def expected():
    return [4]
"""


def test_strict_worker_fails_a_pallas_deprecation_every_time_and_no_other(workers: Callable[[str], Worker]) -> None:
    worker = workers(VERSION)
    assert worker.run(DEPRECATED, check=True).startswith("ok ")
    # JAX warns once per process for a name; the worker clears that so the later strict run still fails
    strict = worker.run(DEPRECATED, check=True, strict=True)
    assert strict.startswith("error DeprecationWarning: jax.experimental.pallas.DeviceIdType is deprecated"), strict
    assert worker.run(DEPRECATED.replace("pl.DeviceIdType.MESH.name", "'MESH'"), strict=True).startswith("ok ")
    assert worker.run(DEPRECATED.replace("[4]", "[5]"), check=True).startswith("error AssertionError")


def test_the_env_is_made_once_with_the_jax_it_names(workers: Callable[[str], Worker]) -> None:
    python = workers(VERSION).python
    said: list[str] = []
    assert jax_python(VERSION, said.append) == python and not said, "a ready env is reused, not remade"
    found = subprocess.run(
        [python, "-c", "import jax, sys; print(jax.__version__, *sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert found[0] == VERSION and tuple(map(int, found[1:])) >= (3, 12)
    assert find_python(sys.version_info[:2]) == sys.executable


PARTIAL = Case(FIXTURES / "sem002" / "partial_gives_the_parameter")


@pytest.mark.parametrize("version", ["0.10.2", VERSION])
def test_what_a_partial_gives_runs_as_written_and_not_as_a_view(version: str, workers: Callable[[str], Worker]) -> None:
    """The kernel another launch allocates an array for, launched through a partial that gives
    `sems` a tuple of Refs: it runs as written, and the view a safe fix would write fails (the
    fixture's case.json: reported, unsafe)."""
    pytest.importorskip("jax")
    worker = Worker() if version == "0.10.2" else workers(version)
    try:
        source = PARTIAL.before.decode()
        assert worker.run(source, check=True).startswith("ok ")
        answer = worker.run(source.replace("sems[0])", "sems.at[0])"), check=True)
        assert answer.startswith("error") and "has no attribute 'at'" in answer, answer
    finally:
        if version == "0.10.2":
            worker.close()
