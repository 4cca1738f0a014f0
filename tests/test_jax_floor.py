"""The project's JAX floor (settings.py): where it is read from, and what SEM101 does with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from semfix import fix_source
from semfix.cli.main import main
from semfix.jax_versions import OLDEST
from semfix.selection import build_settings, load_settings
from semfix.settings import find_pyproject, for_file

WAIT = "from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n"
HOST = "from jax.experimental.pallas import tpu as pltpu\n\nSPACE = pltpu.HOST\n"


PYPROJECT = "pyproject.toml"


@pytest.mark.parametrize(
    ("files", "floor"),
    [
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.7"]\n[tool.semfix]\n'}, (0, 7, 0)),
        (
            {PYPROJECT: '[project]\ndependencies = ["numpy", "jax[tpu] ~= 0.8.1 ; python_version>\'3.10\'"]\n'},
            (0, 8, 1),
        ),
        ({PYPROJECT: '[project]\ndependencies = ["JAX==0.10.2"]\n'}, (0, 10, 2)),
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.6,<0.13"]\n'}, (0, 6, 0)),
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.6"]\n[tool.semfix]\ntarget-jax = "0.10"\n'}, (0, 10, 0)),
        ({PYPROJECT: '[project]\ndependencies = ["jax<0.13", "jaxlib>=0.9"]\n'}, None),  # no lower bound on jax
        ({PYPROJECT: '[project]\nname = "x"\n'}, None),
        # an exclusive bound admits the next release; `==X.*` and `===` as pip reads them
        ({PYPROJECT: '[project]\ndependencies = ["jax>0.6.2"]\n'}, (0, 7, 0)),
        ({PYPROJECT: '[project]\ndependencies = ["jax==0.7.*"]\n'}, (0, 7, 0)),
        ({PYPROJECT: '[project]\ndependencies = ["jax===0.7.2"]\n'}, (0, 7, 2)),
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.6,!=0.6.0,!=0.6.1"]\n'}, (0, 6, 2)),
        # marker alternatives: the lowest of them (issue 36 item 3), each with the unconditional lines
        (
            {
                PYPROJECT: "[project]\ndependencies = [\"jax>=0.5.0; python_version<'3.11'\", "
                "\"jax>=0.7.2; python_version>='3.11'\"]\n"
            },
            (0, 5, 0),
        ),
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.6", "jax>=0.4; sys_platform==\'linux\'"]\n'}, (0, 6, 0)),
        # where else projects declare it
        ({PYPROJECT: "[tool.ruff]\n", "requirements.txt": "numpy\njax==0.7.2  # pinned\n", "setup.py": ""}, (0, 7, 2)),
        (
            {"requirements-tpu.txt": "-r deps/base.txt\n", "deps/base.txt": "jax[tpu]>=0.6.1 \\\n  --hash=sha256:00\n"},
            (0, 6, 1),
        ),
        ({"setup.cfg": "[options]\ninstall_requires =\n    numpy\n    jax>=0.6.2\n"}, (0, 6, 2)),
        ({"setup.cfg": "[options.extras_require]\ntpu = jax[tpu]>=0.7.1\n"}, (0, 7, 1)),
        (
            {
                PYPROJECT: '[project]\ndynamic = ["dependencies"]\n[tool.setuptools.dynamic]\n'
                'dependencies = {file = ["deps/run.txt"]}\n',
                "deps/run.txt": "jax>=0.9.0\n",
            },
            (0, 9, 0),
        ),
        ({PYPROJECT: '[tool.poetry.dependencies]\npython = "^3.10"\njax = "^0.7.2"\n'}, (0, 7, 2)),
        ({PYPROJECT: '[tool.poetry.dependencies]\njax = {version = "~0.6", extras = ["tpu"]}\n'}, (0, 6, 0)),
        ({PYPROJECT: '[tool.poetry.group.tpu.dependencies]\njax = "0.8.1"\n'}, (0, 8, 1)),
        ({PYPROJECT: '[project.optional-dependencies]\ntpu = ["jax[tpu]>=0.7.0"]\n'}, (0, 7, 0)),
        ({PYPROJECT: '[dependency-groups]\ndev = ["jax>=0.9.2"]\n'}, (0, 9, 2)),
        # past every release semfix knows: every rename it knows holds
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.13"]\n'}, (0, 13)),
    ],
)
def test_the_floor_is_read_where_the_project_declares_it(
    tmp_path: Path, files: dict[str, str], floor: tuple[int, ...] | None
) -> None:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / "pkg").mkdir()
    settings = for_file(load_settings(find_pyproject([tmp_path / "pkg" / "k.py"])), tmp_path / "pkg" / "k.py")
    assert (settings.target_jax, settings.target_declared) == (floor or OLDEST, floor is not None)


def test_the_floor_is_the_nearest_project_per_file(tmp_path: Path) -> None:
    """A monorepo (issue 36 item 4): the library's files take the library's floor, in one run
    with the app's files, and alone, as pre-commit would pass them."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["jax>=0.10.2"]\n')
    library = tmp_path / "libs" / "ring"
    (library / "src").mkdir(parents=True)
    (library / "pyproject.toml").write_text('[project]\nname = "ring"\ndependencies = ["jax>=0.5.0"]\n')
    (library / "src" / "k.py").write_text(WAIT)
    (tmp_path / "app.py").write_text(WAIT)
    for paths in ([tmp_path], [library / "src" / "k.py"], [library / "src" / "k.py", tmp_path / "app.py"]):
        result = CliRunner().invoke(main, ["fix", "--extend-select", "SEM101", *map(str, paths)])
        assert result.exit_code in (0, 1), result.output
        assert "pltpu.semaphore_wait" in (library / "src" / "k.py").read_text(), paths  # 0.5.0 < 0.6: held back
    assert "pl.semaphore_wait" in (tmp_path / "app.py").read_text()  # 0.10.2: renamed


def test_a_floor_that_cannot_be_read_names_its_file(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "requirements.txt").write_text("jax>=0.6 @@\n")
    (tmp_path / "k.py").write_text(WAIT)
    result = CliRunner().invoke(main, ["check", "--extend-select", "SEM101", str(tmp_path / "k.py")])
    assert result.exit_code == 2 and "requirements.txt" in result.output and "Traceback" not in result.output


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


def test_a_members_own_target_jax_is_its_floor(tmp_path: Path) -> None:
    """A member declaring `target-jax` in its own [tool.semfix] under a root of a higher floor
    (the migration oracle's seed 2069): its files take its floor, in a run from the root."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "app"\ndependencies = ["jax>=0.7.2"]\n')
    member = tmp_path / "member"
    member.mkdir()
    (member / "pyproject.toml").write_text('[tool.semfix]\ntarget-jax = "0.7.1"\n')
    (member / "k.py").write_text(HOST)
    settings = for_file(load_settings(find_pyproject([tmp_path])), member / "k.py")
    assert (settings.target_jax, settings.target_declared) == ((0, 7, 1), True)
    result = CliRunner().invoke(main, ["fix", "--extend-select", "SEM101", str(tmp_path)])
    assert result.exit_code in (0, 1), result.output
    assert "pltpu.HOST" in (member / "k.py").read_text()  # pl.HOST is another enum's member on 0.7.1
