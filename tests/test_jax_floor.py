"""The project's JAX floor (settings.py): where it is read from, and what SEM101 does with it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from semfix import fix_source
from semfix.cli.main import main
from semfix.jax_versions import OLDEST
from semfix.selection import build_settings, load_settings
from semfix.settings import Settings, find_pyproject, for_file

WAIT = "from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n"
HOST = "from jax.experimental.pallas import tpu as pltpu\n\nSPACE = pltpu.HOST\n"


PYPROJECT = "pyproject.toml"


def MIGRATION(pyproject: Path | None) -> Settings:  # noqa: N802 - read as the settings it makes
    """The settings of a run with the migration's rules, which read the floor."""
    return load_settings(pyproject, extend_select=["SEM101", "SEM102", "SEM103"])


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
        # issue 45 item 1: the oldest JAX any environment can install. The Pythons no marker
        # holds for take the unconditional line; Poetry's lists and `||` are alternatives
        (
            {PYPROJECT: '[project]\ndependencies = ["jax>=0.6.0", "jax>=0.7.2; python_version >= \'3.13\'"]\n'},
            (0, 6, 0),
        ),
        (
            {
                PYPROJECT: "[tool.poetry.dependencies]\njax = [\n"
                '  {version = "^0.6.0", python = "<3.12"},\n  {version = "^0.7.2", python = ">=3.12"},\n]\n'
            },
            (0, 6, 0),
        ),
        ({PYPROJECT: '[tool.poetry.dependencies]\njax = "^0.7.2 || ^0.6.0"\n'}, (0, 6, 0)),
        # a requires-python no marker's Python meets: that environment is none of the project's
        (
            {
                PYPROJECT: '[project]\nrequires-python = ">=3.11"\n'
                "dependencies = [\"jax>=0.6.0; python_version < '3.11'\", \"jax>=0.7.2; python_version >= '3.11'\"]\n"
            },
            (0, 7, 2),
        ),
        # what tests, extras, CI files and dev pins say never raises what users install (any JAX)
        ({PYPROJECT: '[project]\ndependencies = ["jax"]\n[dependency-groups]\ntest = ["jax[cpu]==0.7.2"]\n'}, None),
        (
            {
                PYPROJECT: '[project]\ndependencies = ["jax"]\n'
                '[project.optional-dependencies]\ntpu = ["jax[tpu]>=0.7"]\n'
            },
            None,
        ),
        ({PYPROJECT: '[project]\ndependencies = ["jax"]\n', "requirements-ci.txt": "jax[cpu]==0.7.2\n"}, None),
        (
            {
                PYPROJECT: '[tool.poetry.dependencies]\njax = "*"\n'
                '[tool.poetry.group.dev.dependencies]\njax = {version = "0.7.2", extras = ["cpu"]}\n'
            },
            None,
        ),
        # a nightly is before its release
        ({"requirements.txt": "jax==0.10.2.dev20260101\n"}, (0, 10, 1)),
        ({PYPROJECT: '[project]\ndependencies = ["jax>=0.7.2rc1"]\n'}, (0, 7, 1)),
        # issue 45 item 2: what pip, setuptools and poetry-core read
        ({"requirements.txt": "https://example.com/wheels/jax-0.7.2-py3-none-any.whl\n"}, (0, 7, 2)),
        ({"requirements.txt": "jax @ https://example.com/jax-0.6.2.tar.gz ; python_version < '3.13'\n"}, (0, 6, 2)),
        ({"requirements.txt": "git+https://github.com/example/jax-tools.git\njax>=0.7.1\n"}, (0, 7, 1)),
        ({"setup.cfg": "[options]\ninstall_requires =\n    jax>=0.6.2  # the TPU kernels\n    numpy\n"}, (0, 6, 2)),
        ({"setup.cfg": "[options]\ninstall_requires = numpy; jax>=0.6.2\n"}, (0, 6, 2)),
        ({PYPROJECT: '[tool.poetry.dependencies]\njax = ">= 0.10.2"\n'}, (0, 10, 2)),
        ({PYPROJECT: '[tool.poetry.dependencies]\njax = "=0.10.2"\n'}, (0, 10, 2)),
        ({PYPROJECT: '[tool.poetry.dependencies]\njax = ">=0.6, <0.8"\n'}, (0, 6, 0)),
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
    settings = for_file(MIGRATION(find_pyproject([tmp_path / "pkg" / "k.py"])), tmp_path / "pkg" / "k.py")
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


#: Declarations semfix cannot read a floor from (issue 45 item 2), and the line it names: each
#: a line pip, setuptools or poetry-core takes.
UNREAD = [
    ({"requirements.txt": "numpy\ngit+https://github.com/jax-ml/jax.git@jax-v0.7.2#egg=jax\n"}, "requirements.txt:2"),
    ({"requirements.txt": "numpy\n\n./vendor/jax\n"}, "requirements.txt:3"),
    ({"requirements.txt": "-e ./vendor/jax\n"}, "requirements.txt:1"),
    ({"requirements.txt": "-r deps/base.txt\n", "deps/base.txt": "numpy\n./jax\n"}, "deps/base.txt:2"),
    ({"requirements.txt": "numpy\n-r deps\n", "deps/x.txt": ""}, "requirements.txt:2"),  # a folder, not a file
    ({"setup.cfg": "[metadata]\nname = x\n[options]\ninstall_requires = file: deps.in\n"}, "setup.cfg:4"),
    ({"requirements.txt": "jax>=0.6 @@\n"}, "requirements.txt:1"),
    ({PYPROJECT: '[project]\nname = "x"\n[tool.poetry.dependencies]\njax = {git = "https://x/jax.git"}\n'}, "toml:4"),
    ({PYPROJECT: '[project]\ndependencies = [\n  "numpy",\n  "jax>=0.7 # the kernels",\n]\n'}, "toml:4"),
]
#: Valid project files semfix could not read before issue 45, which stopped every file.
READABLE = [
    {"requirements.txt": "https://example.com/wheels/jax-0.7.2-py3-none-any.whl\n"},
    {"setup.cfg": "[options]\ninstall_requires =\n    jax>=0.6.2  # the TPU kernels\n"},
    {"setup.cfg": "[options]\ninstall_requires = numpy; jax>=0.6.2\n"},
    {PYPROJECT: '[tool.poetry.dependencies]\njax = ">= 0.10.2"\n'},
    {PYPROJECT: '[tool.poetry.dependencies]\njax = "=0.10.2"\n'},
]
#: A SEM001 bug, which the default rules report and fix whatever the floor.
BUG = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...], 1)\n"


def _project(root: Path, files: dict[str, str], kernels: dict[str, str]) -> None:
    (root / ".git").mkdir()
    for name, text in {**files, **kernels}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize("files", [files for files, _ in UNREAD] + READABLE)
def test_no_declaration_stops_the_default_rules(tmp_path: Path, files: dict[str, str]) -> None:
    """The default rules read no floor: a SEM001 bug is fixed, and nothing is said of the floor."""
    _project(tmp_path, files, {"k.py": BUG})
    result = CliRunner().invoke(main, ["fix", str(tmp_path / "k.py")])
    assert result.exit_code == 0, result.output
    assert "pl.semaphore_wait(sem, 1)" in (tmp_path / "k.py").read_text()
    assert "warning" not in result.output


@pytest.mark.parametrize(("files", "place"), UNREAD)
def test_a_declaration_that_cannot_be_read_is_named_once_and_the_floor_is_unknown(
    tmp_path: Path, files: dict[str, str], place: str
) -> None:
    """The run goes on: one warning naming the file and line, whatever the files; the migration
    takes the floor as the oldest JAX semfix supports (no rename), the default rules fix."""
    _project(tmp_path, files, {"a.py": WAIT, "b.py": WAIT + "\n\n" + BUG.replace("\ndef kernel", "\ndef other")})
    result = CliRunner().invoke(main, ["fix", "--extend-select", "SEM101", str(tmp_path)])
    assert result.exit_code == 1, result.output  # the renames held back are left reported
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and place in warnings[0] and "Traceback" not in result.output, result.output
    assert "pltpu.semaphore_wait" in (tmp_path / "a.py").read_text()
    assert "pl.semaphore_wait(sem, 1)" in (tmp_path / "b.py").read_text()
    settings = for_file(MIGRATION(find_pyproject([tmp_path])), tmp_path / "a.py")
    assert settings.target_jax == OLDEST and "cannot read" in settings.target_from


def test_a_workspace_members_own_jax_ends_the_walk_up(tmp_path: Path) -> None:
    """A uv workspace member that names `jax` with no bound runs on any JAX: the root app's
    `jax[tpu]>=0.10.2` is not its floor."""
    root = '[project]\nname = "app"\ndependencies = ["jax[tpu]>=0.10.2", "ring"]\n'
    root += '[tool.uv.workspace]\nmembers = ["packages/*"]\n[tool.uv.sources]\nring = { workspace = true }\n'
    member = '[project]\nname = "ring"\ndependencies = ["jax"]\n'
    _project(tmp_path, {PYPROJECT: root, "packages/ring/pyproject.toml": member}, {"packages/ring/k.py": HOST})
    settings = for_file(MIGRATION(find_pyproject([tmp_path])), tmp_path / "packages" / "ring" / "k.py")
    assert (settings.target_jax, settings.target_declared) == (OLDEST, False)
    assert for_file(MIGRATION(None), tmp_path / "app.py").target_jax == (0, 10, 2)


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
    settings = for_file(MIGRATION(find_pyproject([tmp_path])), member / "k.py")
    assert (settings.target_jax, settings.target_declared) == ((0, 7, 1), True)
    result = CliRunner().invoke(main, ["fix", "--extend-select", "SEM101", str(tmp_path)])
    assert result.exit_code in (0, 1), result.output
    assert "pltpu.HOST" in (member / "k.py").read_text()  # pl.HOST is another enum's member on 0.7.1


DEC = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, sem):
    pltpu.semaphore_signal(sem, 1)
    pltpu.semaphore_wait(sem, dec=1)
    o_ref[...] = x_ref[...] + 1


def run():
    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.SemaphoreType.REGULAR],
        interpret=True,
    )(x)


def expected():
    return np.arange(8 * 128, dtype=np.float32).reshape(8, 128) + 1
"""


@pytest.mark.jax
@pytest.mark.parametrize(
    "declared",
    [
        '[project]\ndependencies = ["jax>=0.6.2", "jax>=0.7.2; python_version >= \'3.13\'"]\n',
        '[tool.poetry.dependencies]\njax = [{version = "^0.6.2", python = "<3.12"},\n'
        '  {version = "^0.7.2", python = ">=3.12"}]\n',
        '[tool.poetry.dependencies]\njax = "^0.6.2 || ^0.7.2"\n',
    ],
)
def test_a_migration_at_an_alternatives_floor_runs_on_it(
    tmp_path: Path, declared: str, request: pytest.FixtureRequest
) -> None:
    """Issue 45 item 1: with 0.6.2 among the alternatives, the migration runs on JAX 0.6.2 (where
    `value=` is a TypeError): the amount moves to its position."""
    from jax_env import Worker, require_jax_python

    worker = Worker(require_jax_python("0.6.2", request.config))
    try:
        assert worker.run(DEC, check=True).startswith("ok"), "the kernel must run on 0.6.2 before the migration"
        _project(tmp_path, {PYPROJECT: declared}, {"k.py": DEC})
        result = CliRunner().invoke(main, ["fix", "--extend-select", "SEM101,SEM102", str(tmp_path / "k.py")])
        fixed = (tmp_path / "k.py").read_text()
        assert result.exit_code in (0, 1) and "pl.semaphore_wait(sem, 1)" in fixed, result.output + fixed
        assert worker.run(fixed, check=True).startswith("ok"), worker.run(fixed, check=True)
    finally:
        worker.close()


#: Compatibility code that runs on every JAX (issue 45 item 3): the old spelling only where the
#: pallas module lacks the new one. Each binds `signal` and `wait` for the kernel below.
FORMS = {
    "getattr or": '{short} = getattr(pl, "semaphore_{short}", None) or pltpu.semaphore_{short}\n',
    "except AttributeError": "try:\n    {short} = pl.semaphore_{short}\n"
    "except AttributeError:\n    {short} = pltpu.semaphore_{short}\n",
    "except ImportError": "try:\n    from jax.experimental.pallas import semaphore_{short} as {short}\n"
    "except ImportError:\n    from jax.experimental.pallas.tpu import semaphore_{short} as {short}\n",
}
COMPAT = {name: form.format(short="signal") + form.format(short="wait") for name, form in FORMS.items()}
COMPAT_KERNEL = (
    DEC.replace("pltpu.semaphore_wait(sem, dec=1)", "wait(sem, 1)")
    .replace("pltpu.semaphore_signal(sem, 1)", "signal(sem, 1)")
    .replace("\n\ndef kernel", "\n{compat}\n\ndef kernel")
)
#: What is still reported: the default is evaluated first, and ValueError is not what JAX raises.
NOT_COMPAT = [
    COMPAT["getattr or"].replace("None) or pltpu.semaphore_wait", "pltpu.semaphore_wait)"),
    COMPAT["except AttributeError"].replace("AttributeError", "ValueError"),
    COMPAT["except AttributeError"].replace("wait = pl.semaphore_wait", "read = pl.semaphore_read"),
]


@pytest.mark.parametrize(
    ("compat", "reported"), [*((c, False) for c in COMPAT.values()), *((c, True) for c in NOT_COMPAT)]
)
def test_compatibility_code_that_runs_on_every_jax_is_not_reported(compat: str, reported: bool) -> None:
    source = COMPAT_KERNEL.format(compat=compat)
    for floor in (None, "0.10.2"):
        result = fix_source(source, settings=build_settings(select=["SEM1"], target_jax=floor))
        assert bool(result.findings) == reported, (floor, [f.message for f in result.findings])


def test_a_compat_module_that_only_re_exports_is_not_reported(tmp_path: Path) -> None:
    """The module a package imports its names from, trying the pallas module first."""
    compat = "try:\n    from jax.experimental.pallas import semaphore_signal, semaphore_wait\nexcept ImportError:\n"
    compat += "    from jax.experimental.pallas.tpu import semaphore_signal, semaphore_wait\n\n"
    compat += '__all__ = ["semaphore_signal", "semaphore_wait"]\n'
    _project(tmp_path, {}, {"pkg/__init__.py": "", "pkg/compat.py": compat, "pkg/k.py": "from .compat import *\n"})
    result = CliRunner().invoke(main, ["check", "--select", "SEM1", "--target-jax", "0.10.2", str(tmp_path)])
    assert result.exit_code == 0, result.output


@pytest.mark.jax
@pytest.mark.parametrize("release", ["0.6.2", "0.7.2", "0.10.2", "0.12.1"])
def test_compatibility_code_runs_on_every_jax(release: str, request: pytest.FixtureRequest) -> None:
    """Each form left alone runs on the oldest JAX the tests have and the newest, the Pallas
    family's deprecations as errors (0.6.2 stands for 0.6.0: `pl.semaphore_wait` came in 0.6)."""
    from jax_env import Worker, require_jax_python

    worker = Worker(require_jax_python(release, request.config)) if release != "0.10.2" else Worker()
    try:
        for name, compat in COMPAT.items():
            answer = worker.run(COMPAT_KERNEL.format(compat=compat), check=True, strict=True)
            assert answer.startswith("ok"), (name, answer)
    finally:
        worker.close()


def test_show_settings_names_the_floor_and_where_it_was_read(tmp_path: Path) -> None:
    """Issue 45 item 4: for any path, the floor and the file and line it came from (a member's
    own, the root's, or why it is unknown), in one command that checks nothing."""
    root = '[project]\nname = "app"\ndependencies = [\n  "numpy",\n  "jax[tpu]>=0.10.2",\n]\n'
    member = '[project]\nname = "ring"\ndependencies = ["jax>=0.6.0", "jax>=0.7.2; python_version >= \'3.13\'"]\n'
    files = {PYPROJECT: root, "ring/pyproject.toml": member, "vendored/requirements.txt": "-e ./jax\n"}
    _project(tmp_path, files, {"app.py": BUG, "ring/k.py": BUG, "vendored/v.py": BUG})
    paths = [tmp_path / "app.py", tmp_path / "ring", tmp_path / "vendored" / "v.py"]
    result = CliRunner().invoke(main, ["check", "--show-settings", *map(str, paths)])
    assert result.exit_code == 0, result.output
    floors = [line.split("target-jax: ")[1] for line in result.output.splitlines() if "target-jax: " in line]
    assert floors == [
        f"0.10.2, from {tmp_path / PYPROJECT}:5 [project] dependencies",
        f"0.6.0, from {tmp_path / 'ring' / PYPROJECT}:3 [project] dependencies",
        f"0.4.35, unknown: {tmp_path / 'vendored' / 'requirements.txt'}:1 cannot be read "
        "('./jax': a URL or path, whose JAX version semfix cannot tell)",
    ]
    assert "SEM001" not in result.output.replace("rules: SEM001", "")  # nothing was checked
    given = CliRunner().invoke(main, ["check", "--show-settings", "--target-jax", "0.7", str(paths[1])])
    assert "target-jax: 0.7.0, from --target-jax" in given.output


@pytest.mark.jax
def test_a_call_through_getattr_is_a_catalog_call_for_every_rule() -> None:
    """Issue 45 item 5: `getattr(pl, "semaphore_wait")` resolves as the catalog callee it names,
    so the default rules see its arguments (SEM001's read of the semaphore), as a plain call's."""
    from jax_env import Worker

    bug = COMPAT_KERNEL.format(compat="").replace("wait(sem, 1)", 'getattr(pl, "semaphore_wait")(sem[...], 1)')
    bug = bug.replace("signal(sem, 1)", 'getattr(pl, "semaphore_signal")(sem, 1)')
    result = fix_source(bug)
    assert [f.rule for f in result.findings] == ["SEM001"] and result.findings[0].applied
    assert 'getattr(pl, "semaphore_wait")(sem, 1)' in result.source
    dec = HOST.replace("SPACE = pltpu.HOST", 'getattr(pltpu, "semaphore_wait")(sem, dec=1)')
    fixed = fix_source(dec, settings=build_settings(select=["SEM102"], target_jax="0.7.2")).source
    assert fixed == dec.replace("dec=", "value=")  # SEM102 alone, without SEM101
    worker = Worker()
    try:
        assert not worker.run(bug, check=True).startswith("ok")
        assert worker.run(result.source, check=True).startswith("ok"), worker.run(result.source, check=True)
    finally:
        worker.close()


def test_the_oracles_declarations_are_read_at_or_below_their_floor(tmp_path: Path) -> None:
    """The migration oracle's generator (tests/oracle/floors.py) writes every form of issue 45
    (markers as alternatives, Poetry's lists and `||`, a pin beside the project's own `jax`,
    hatch, pdm, flit and uv layouts, a workspace member's own `jax`, nightlies, wheel, VCS and
    local URLs, setup.cfg's comments and `;`) with the floor it admits, computed as it writes it:
    the floor semfix reads is never above it. Its soak judges the same through `--show-settings`."""
    from oracle.floors import LATER_FORMS
    from oracle.migration import COMPAT_STYLES, generate

    from semfix.floor import read_floor
    from semfix.jax_versions import parse

    forms: set[str] = set()
    styles: set[str] = set()
    above = []
    for seed in range(1000):
        project = generate(seed)
        root = tmp_path / str(seed)
        (root / ".git").mkdir(parents=True)  # the walk up stops at the repository's root
        for path, text in project.files().items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        kernel = next(m for m in project.modules if m.kernel)
        found = read_floor((root / kernel.path).parent)
        read, truth = found.release if found else OLDEST, parse(project.declaration.floor or "0.4.35")
        if read > truth:
            above.append(f"seed {seed}: {project.declaration.said}: read {read}, admits {truth}")
        forms.add(project.declaration.form + " (member)" * bool(project.plan.member))
        styles |= {style for _, style in project.plan.styles}
    assert not above, "\n".join(above)
    assert set(LATER_FORMS) <= forms and {"unbounded beside a pin (member)", "project unbounded (member)"} <= forms
    assert set(COMPAT_STYLES) <= styles


def test_the_oracle_judges_a_floor_read_above_its_declaration(tmp_path: Path) -> None:
    """The judge's check fails where the declared floor is below what semfix reads."""
    from dataclasses import replace

    from oracle.floors import Declaration
    from oracle.migrate_judge import MigrationJudge, Verdict
    from oracle.migration import build, plan_for

    plan = plan_for(0)
    lie = Declaration("project >=", "0.6.2", (("pyproject.toml", '[project]\ndependencies = ["jax>=0.7.2"]\n'),), "")
    project = build(replace(plan, declaration=lie, member=""))
    judge = MigrationJudge()
    try:
        root = judge.write(project, "before")
        (root / ".git").mkdir()
        verdict = Verdict()
        judge._floor(project, root, verdict)
    finally:
        judge.close()
    assert [f.error for f in verdict.failures] == ["semfix reads the floor 0.7.2; the project admits JAX 0.6.2"]


@pytest.mark.parametrize("name", list(COMPAT))
def test_a_wait_bound_by_compatibility_code_gets_its_amount_fixed(name: str) -> None:
    """`wait(sem, dec=1)`, `wait` bound by compatibility code: JAX's `semaphore_wait` on every
    JAX, so SEM102 passes the amount (the migration oracle's seed 800058: `getattr(pl, ...,
    None) or pltpu.semaphore_wait` was not followed, and 0.12.1 failed on `dec=`)."""
    source = COMPAT_KERNEL.format(compat=COMPAT[name]).replace("wait(sem, 1)", "wait(sem, dec=1)")
    for floor, fixed in ((None, "wait(sem, 1)"), ("0.7.2", "wait(sem, value=1)")):
        result = fix_source(source, settings=build_settings(select=["SEM1"], target_jax=floor))
        assert fixed in result.source and COMPAT[name] in result.source, (floor, result.source)


def test_a_folders_project_files_are_found_once_not_per_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file of a run asks each folder above it for its project files: a folder's listing
    is matched against the patterns once while it is unchanged, and a file added is seen."""
    import fnmatch

    from semfix import floor

    project = tmp_path / "proj"
    (project / "pkg").mkdir(parents=True)
    (project / ".git").mkdir()
    files = [project / "pkg" / f"m{i}.py" for i in range(20)]
    matched: list[str] = []
    real = fnmatch.filter
    monkeypatch.setattr(fnmatch, "filter", lambda names, pattern: matched.append(pattern) or real(names, pattern))
    settings = build_settings(select=["SEM101"])
    assert {for_file(settings, f).target_jax for f in files} == {OLDEST}
    assert len(matched) == 2 * len(floor.DECLARING)  # `pkg` and the project, once each
    (project / "pyproject.toml").write_text('[project]\ndependencies = ["jax>=0.6.0"]\n')
    assert for_file(settings, files[0]).target_jax == (0, 6, 0)  # the project's folder changed: read again
