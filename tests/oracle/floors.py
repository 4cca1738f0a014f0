"""The JAX floor a generated project declares, in each form semfix/floor.py reads (issue 36).

A declaration is chosen for a floor release the oracle can run (0.6.2 to 0.7.2, from the
`.venv-jax-*` environments), for a floor below them ("below": the kernel runs on 0.6.2, the
oldest JAX the oracle has, and the report says so), or for none at all. Each form is written
so that the oldest release pip could install for it is the chosen floor: that is the floor
the migration must hold every rewrite to.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from semfix.jax_versions import RELEASES, parse

#: The JAX releases a generated project's kernels run on before and after the migration.
FLOOR_ENVS = ("0.6.2", "0.7.0", "0.7.1", "0.7.2")
NEWEST = "0.12.1"
OLDEST_RUNNABLE = FLOOR_ENVS[0]
#: A floor below the oldest runnable release: the kernel is run on OLDEST_RUNNABLE instead.
BELOW = ("0.5.0", "0.4.35", "0.6.0")

FORMS = (
    "project >=", "project ==", "project ~=", "project >", "project ==X.*", "project [extra]",
    "project range", "project markers", "optional-dependencies", "dependency-groups",
    "requirements.txt", "dynamic file", "tpu-inference layout", "setup.cfg", "poetry ^",
    "poetry ~", "poetry table", "tool.semfix target-jax",
)  # fmt: skip
#: Issue 45's forms: the floor as packaging tools read it, the oldest any environment installs
#: (drawn by `widen`, from a stream of its own, so that each seed's earlier draws stand).
LATER_FORMS = (
    "project unmarked and marked", "poetry list", "poetry ||", "poetry spelled", "bounded beside a pin",
    "unbounded beside a pin", "project unbounded", "nightly", "wheel URL", "VCS URL", "local path",
    "setup.cfg comments", "setup.cfg semicolons", "project spelled",
)  # fmt: skip
NONE_FORMS = ("no project file", "project without a bound", "pyproject without jax")
#: Forms that admit any JAX, whatever floor they are asked for: `jax` unbounded where users install.
ANY_JAX = ("unbounded beside a pin", "project unbounded")
#: The build backends of the layouts a generated pyproject.toml takes (its [project] read alike).
BACKENDS = {
    "setuptools": ("setuptools", "setuptools.build_meta"),
    "hatch": ("hatchling", "hatchling.build"),
    "pdm": ("pdm-backend", "pdm.backend"),
    "flit": ("flit_core>=3.4", "flit_core.buildapi"),
    "uv": ("uv_build", "uv_build"),
}


@dataclass(frozen=True)
class Declaration:
    """What a project declares: its files, in words, the floor it admits and where it runs."""

    form: str
    floor: str | None  # the oldest release the declaration admits (None: none declared)
    files: tuple[tuple[str, str], ...]  # (path, text)
    said: str  # the requirement as written, for the report

    @property
    def runs_on(self) -> str:
        """The JAX the floor is judged on: the floor's own, else the oldest one the oracle has."""
        return self.floor if self.floor in FLOOR_ENVS else OLDEST_RUNNABLE

    @property
    def note(self) -> str:
        if self.floor is None:
            return f"no floor declared: judged on {OLDEST_RUNNABLE}, the oldest JAX the oracle runs"
        if self.floor not in FLOOR_ENVS:
            return f"floor {self.floor} is below the oldest JAX the oracle runs: judged on {OLDEST_RUNNABLE}"
        return ""


def _previous(release: str) -> str:
    return RELEASES[RELEASES.index(release) - 1]


def _pyproject(deps: list[str], extra: str = "") -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    return f'[project]\nname = "ringlib"\nversion = "0.1.0"\ndependencies = [{listed}]\n{extra}'


def declare(form: str, floor: str | None, rng: random.Random) -> Declaration:
    """The files of `form` declaring `floor` (a release of RELEASES; None for the none forms)."""
    if floor is None:
        files = {
            "no project file": (),
            "project without a bound": (("pyproject.toml", _pyproject(["numpy", "jax<1"])),),
            "pyproject without jax": (("pyproject.toml", _pyproject(["numpy>=1.24"])),),
        }[form]
        return Declaration(form, None, files, form)
    files, said = _declared(form, floor, rng)
    return Declaration(form, RELEASES[0] if form in ANY_JAX else floor, tuple(files.items()), said)


def _higher(floor: str, rng: random.Random) -> str:
    """A release above `floor` (or `floor` itself, where none is above it) that another
    declaration of the project may name without raising the floor."""
    return rng.choice([r for r in ("0.7.2", "0.10.2", "0.12.1") if parse(r) > parse(floor)] or [floor])


def _beside(project: str, floor: str, rng: random.Random) -> tuple[dict[str, str], str]:
    """`project` (the [project] dependencies' `jax`) beside a pin of a higher JAX where only the
    project's tests, CI or a dev environment install it: a dependency group, an extra, a CI
    requirements file, uv's, pdm's or hatch's dev environments, each in its backend's layout.
    None of them is what users install: the floor is the project's own."""
    pin = f"jax[cpu]=={_higher(floor, rng)}"
    where = rng.choice(["group", "extra", "ci", "constraints", "uv", "uv constraints", "pdm", "hatch"])
    extra = {
        "group": f'\n[dependency-groups]\ntest = ["pytest", "{pin}"]\n',
        "extra": f'\n[project.optional-dependencies]\ncpu = ["{pin}"]\n',
        "ci": "",
        "constraints": "",
        "uv constraints": f'\n[tool.uv]\nconstraint-dependencies = ["{pin}"]\n',
        "uv": f'\n[tool.uv]\ndev-dependencies = ["{pin}"]\n',
        "pdm": f'\n[tool.pdm.dev-dependencies]\ntest = ["{pin}"]\n',
        "hatch": f'\n[tool.hatch.envs.test]\ndependencies = ["{pin}"]\n',
    }[where]
    backend = where.split()[0] if where.split()[0] in BACKENDS else rng.choice(list(BACKENDS))
    requires, build = BACKENDS[backend]
    text = (
        _pyproject(["numpy", project], extra)
        + f'\n[build-system]\nrequires = ["{requires}"]\nbuild-backend = "{build}"\n'
    )
    files = {"pyproject.toml": text}
    if where == "ci":
        files["requirements-ci.txt"] = f"-e .\n{pin}\n"
    if where == "constraints":  # CI installs the project under a constraints file pinning JAX
        files["requirements-ci.txt"] = "-c constraints-ci.txt\n-e .\n"
        files["constraints-ci.txt"] = f"{pin}\nnumpy<3\n"
    return files, f"{project} beside {pin} ({where}, {backend})"


def _declared(form: str, floor: str, rng: random.Random) -> tuple[dict[str, str], str]:
    req = f"jax>={floor}"
    if form == "project ==":
        req = f"jax=={floor}"
    elif form == "project ~=":
        req = f"jax~={floor}"
    elif form == "project >" and floor != RELEASES[0]:
        req = f"jax>{_previous(floor)}"
    elif form == "project ==X.*" and floor.endswith(".0") and floor.count(".") == 2:
        req = f"jax=={floor[:-2]}.*"
    elif form == "project [extra]":
        req = f"jax[tpu]>={floor}"
    elif form == "project range":
        req = f"jax>={floor},<0.13"
    if form in (
        "project >=",
        "project ==",
        "project ~=",
        "project >",
        "project ==X.*",
        "project [extra]",
        "project range",
    ):
        return {"pyproject.toml": _pyproject(["numpy", req])}, req
    if form == "project markers":  # the floor is the lowest alternative's
        higher = rng.choice([r for r in ("0.7.2", "0.10.2", "0.12.1") if parse(r) >= parse(floor)] or [floor])
        alternatives = [f"jax>={floor}; python_version < '3.11'", f"jax>={higher}; python_version >= '3.11'"]
        rng.shuffle(alternatives)
        return {"pyproject.toml": _pyproject(alternatives)}, " | ".join(alternatives)
    if form == "optional-dependencies":
        text = _pyproject(["numpy"], f'\n[project.optional-dependencies]\ntpu = ["{req}"]\n')
        return {"pyproject.toml": text}, f"[project.optional-dependencies] {req}"
    if form == "dependency-groups":
        text = _pyproject(["numpy"], f'\n[dependency-groups]\ndev = ["pytest", "jax=={floor}"]\n')
        return {"pyproject.toml": text}, f"[dependency-groups] jax=={floor}"
    if form == "requirements.txt":
        line = rng.choice([f"jax=={floor}", req, f"jax[tpu]=={floor}  # the TPU build"])
        return {"requirements.txt": f"# pinned for CI\nnumpy>=1.24\n{line}\n"}, f"requirements.txt {line}"
    if form == "dynamic file":
        project = '[project]\nname = "ringlib"\nversion = "0.1.0"\ndynamic = ["dependencies"]\n'
        project += '\n[tool.setuptools.dynamic]\ndependencies = {file = ["deps.in"]}\n'
        return {"pyproject.toml": project, "deps.in": f"numpy\n{req}\n"}, f"deps.in (dynamic) {req}"
    if form == "tpu-inference layout":  # setup.py reads requirements.txt; pyproject has no [project]
        setup = (
            "from setuptools import setup\n\n"
            'setup(name="ringlib", install_requires=open("requirements.txt").read().split())\n'
        )
        pyproject = '[build-system]\nrequires = ["setuptools"]\n\n[tool.ruff]\nline-length = 100\n'
        files = {"setup.py": setup, "requirements.txt": f"jax=={floor}\nnumpy\n", "pyproject.toml": pyproject}
        return files, f"requirements.txt jax=={floor} (setup.py)"
    if form == "setup.cfg":
        text = f"[metadata]\nname = ringlib\n\n[options]\ninstall_requires =\n    numpy\n    {req}\n"
        return {"setup.cfg": text}, f"setup.cfg {req}"
    if form in ("poetry ^", "poetry ~", "poetry table"):
        constraint = {
            "poetry ^": f'"^{floor}"',
            "poetry ~": f'"~{floor}"',
            "poetry table": f'{{version = ">={floor}", extras = ["tpu"]}}',
        }[form]
        text = f'[tool.poetry]\nname = "ringlib"\n\n[tool.poetry.dependencies]\npython = "^3.10"\njax = {constraint}\n'
        return {"pyproject.toml": text}, f"poetry jax = {constraint}"
    if form == "project unmarked and marked":  # where the marker does not hold, the unmarked line alone
        lines = [f"jax>={floor}", f"jax>={_higher(floor, rng)}; python_version >= '3.13'"]
        if rng.random() < 0.5:  # or a platform's own, the others' lower
            lines = [f"jax>={_higher(floor, rng)}; sys_platform == 'linux'", f"jax>={floor}; sys_platform != 'linux'"]
        rng.shuffle(lines)
        return {"pyproject.toml": _pyproject(["numpy", *lines])}, " + ".join(lines)
    if form in ("poetry list", "poetry ||", "poetry spelled"):
        higher = _higher(floor, rng)
        alternatives = [f'{{version = "^{floor}", python = "<3.12"}}', f'{{version = ">={higher}", python = ">=3.12"}}']
        rng.shuffle(alternatives)
        either = [f"^{floor}", f"^{higher}"]
        rng.shuffle(either)
        constraint = {
            "poetry list": f"[{', '.join(alternatives)}]",
            "poetry ||": f'"{" || ".join(either)}"',
            "poetry spelled": rng.choice([f'">= {floor}"', f'"={floor}"', f'">={floor}, <1"']),
        }[form]
        text = f'[tool.poetry]\nname = "ringlib"\n\n[tool.poetry.dependencies]\npython = "^3.10"\njax = {constraint}\n'
        return {"pyproject.toml": text}, f"poetry jax = {constraint}"
    if form == "bounded beside a pin":
        return _beside(rng.choice([f"jax>={floor}", f"jax[tpu]>={floor}"]), floor, rng)
    if form == "unbounded beside a pin":
        return _beside(rng.choice(["jax", "jax[tpu]"]), floor, rng)
    if form == "project unbounded":
        return {"pyproject.toml": _pyproject(["numpy", "jax"])}, "jax"
    if form == "project spelled":  # as people write it: spaces, capitals, a marker that always holds, `!=`
        spellings = [
            f"JAX >= {floor}",
            f"jax[tpu] >= {floor} ; python_version >= '3.8'",
            f"jax>={floor},<={_higher(floor, rng)}",
        ]
        spellings.append(f"jax>{floor}.dev0")  # after the floor's nightlies: the floor itself
        if RELEASES.index(floor) > 0:  # the release before excluded: the floor is the next
            spellings.append(f"jax!={_previous(floor)},>={_previous(floor)}")
        if floor.endswith(".0"):
            spellings.append(f"jax~={floor[:-2]}")
        req = rng.choice(spellings)
        return {"pyproject.toml": _pyproject(["numpy", req])}, req
    if form == "nightly":  # a nightly of the release after the floor: before that release
        after = RELEASES[RELEASES.index(floor) + 1]
        req = rng.choice([f"jax=={after}.dev20250101", f"jax>={after}.dev0", f"jax>={after}rc1", f"jax=={after}rc2"])
        return {"pyproject.toml": _pyproject(["numpy", req])}, req
    if form in ("wheel URL", "VCS URL", "local path"):  # pip's: the floor's own build (a checkout of it)
        line = {
            "wheel URL": rng.choice(
                [
                    f"jax @ https://files.pythonhosted.org/packages/py3/j/jax/jax-{floor}-py3-none-any.whl",
                    f"https://files.pythonhosted.org/packages/source/j/jax/jax-{floor}.tar.gz",
                ]
            ),
            "VCS URL": rng.choice(
                [
                    f"jax @ git+https://github.com/jax-ml/jax@jax-v{floor}",
                    f"git+https://github.com/jax-ml/jax@jax-v{floor}#egg=jax",
                ]
            ),
            "local path": rng.choice(["./vendor/jax", "-e ./third_party/jax", "jax @ file:///opt/src/jax"]),
        }[form]
        return {"requirements.txt": f"numpy>=1.24\n{line}\n"}, f"requirements.txt {line}"
    if form == "setup.cfg comments":
        text = "[metadata]\nname = ringlib\n\n[options]\ninstall_requires =\n    numpy  # arrays\n"
        text += f"    {req}  # the floor\n"
        return {"setup.cfg": text}, f"setup.cfg {req}  # the floor"
    if form == "setup.cfg semicolons":
        text = f"[metadata]\nname = ringlib\n\n[options]\ninstall_requires = numpy; {req}\n"
        return {"setup.cfg": text}, f"setup.cfg install_requires = numpy; {req}"
    if form == "tool.semfix target-jax":
        text = _pyproject(["numpy", "jax"], f'\n[tool.semfix]\ntarget-jax = "{floor}"\n')
        return {"pyproject.toml": text}, f'target-jax = "{floor}"'
    raise ValueError(f"unknown declaration form {form!r}")


def widen(seed: int, declaration: Declaration) -> Declaration:
    """In about half the projects that declare a floor, the same floor in one of LATER_FORMS,
    drawn from a stream of the seed's own: the project's other choices (made for the JAX it runs
    on) stand, and so do the seeds a test replays. A form that admits any JAX (ANY_JAX) only
    where the project already runs on the oldest JAX the oracle has."""
    more = random.Random(f"floors-{seed}")
    if declaration.floor is None or more.random() < 0.5:
        return declaration
    forms = [f for f in LATER_FORMS if f not in ANY_JAX or declaration.runs_on == OLDEST_RUNNABLE]
    return declare(more.choice(forms), declaration.floor, more)


def choose(rng: random.Random) -> Declaration:
    """A declaration: mostly of a floor the oracle runs, sometimes below it, sometimes none."""
    roll = rng.random()
    if roll < 0.12:
        return declare(rng.choice(NONE_FORMS), None, rng)
    floor = rng.choice(BELOW) if roll < 0.22 else rng.choice(FLOOR_ENVS)
    return declare(rng.choice(FORMS), floor, rng)
