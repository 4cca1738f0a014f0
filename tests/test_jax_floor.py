"""The project's JAX floor (settings.py): where it is read from, and what SEM101 does with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from semfix import fix_source
from semfix.jax_versions import OLDEST
from semfix.selection import build_settings, load_settings
from semfix.settings import find_pyproject

WAIT = "from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n"
HOST = "from jax.experimental.pallas import tpu as pltpu\n\nSPACE = pltpu.HOST\n"


@pytest.mark.parametrize(
    ("pyproject", "floor"),
    [
        ('[project]\ndependencies = ["jax>=0.7"]\n[tool.semfix]\n', (0, 7, 0)),
        ('[project]\ndependencies = ["numpy", "jax[tpu] ~= 0.8.1 ; python_version>\'3.10\'"]\n', (0, 8, 1)),
        ('[project]\ndependencies = ["JAX==0.10.2"]\n', (0, 10, 2)),
        ('[project]\ndependencies = ["jax>=0.6,<0.13"]\n', (0, 6, 0)),
        ('[project]\ndependencies = ["jax>=0.6"]\n[tool.semfix]\ntarget-jax = "0.10"\n', (0, 10, 0)),
        ('[project]\ndependencies = ["jax<0.13", "jaxlib>=0.9"]\n', OLDEST),  # no lower bound on jax itself
        ('[project]\nname = "x"\n', OLDEST),
    ],
)
def test_the_floor_is_read_from_the_project(tmp_path: Path, pyproject: str, floor: tuple[int, ...]) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(pyproject)
    found = find_pyproject([tmp_path / "k.py"])
    assert found == tmp_path / "pyproject.toml"
    settings = load_settings(found)
    assert settings.target_jax == floor and settings.target_declared == (floor != OLDEST)


def test_the_command_line_floor_overrides_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["jax>=0.5"]\n')
    assert load_settings(tmp_path / "pyproject.toml", target_jax="0.10.2").target_jax == (0, 10, 2)


@pytest.mark.parametrize(
    ("source", "floor", "fixed"),
    [(WAIT, None, False), (WAIT, "0.5.3", False), (WAIT, "0.6", True), (HOST, "0.10.0", False), (HOST, "0.10.2", True)],
)
def test_a_rename_waits_for_the_release_where_it_means_the_same(source: str, floor: str | None, fixed: bool) -> None:
    result = fix_source(source, settings=build_settings(select=["SEM101"], target_jax=floor))
    [finding] = result.findings
    assert finding.applied == fixed and ("pltpu" not in result.source) == fixed
    if not fixed:
        assert "declare `jax>=" in finding.message
