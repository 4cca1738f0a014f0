"""The JAX floor a project declares: the oldest JAX release pip could install for it.

A migration renames a spelling only where the new one is the same object on every JAX the
project supports, so the floor must never be read too high. It is read per file, from the
nearest folder above it (up to the repository root) whose project files name a `jax`
requirement, wherever projects declare one: `pyproject.toml` (`[project] dependencies` and
optional dependencies, `[dependency-groups]`, files named by `[tool.setuptools.dynamic]`,
Poetry's tables), `setup.cfg`'s `install_requires`, and `requirements*.txt` beside them.
Requirements are read by `packaging`, as pip reads them; the floor is the oldest release in
`jax_versions.RELEASES` they admit, the lowest across marker alternatives and across the
lists that name JAX (an extra, a group, a requirements file). A requirement with no lower
bound (`jax`, `jax<1`) declares nothing.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from semfix.jax_versions import RELEASES, Version, parse, spelled

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

#: The files a floor is read from, as globs (the server watches them); named where none declares one.
DECLARING = ("pyproject.toml", ".semfix.toml", "semfix.toml", "setup.cfg", "requirements*.txt")
_JAX = re.compile(r"(?i)\bjax\b")  # a line that never spells it is not parsed


class SettingsError(ValueError):
    """A rule selector, setting or declared requirement that means nothing; the message says which
    (semfix.settings re-exports it: the floor is read below the settings, which read it)."""


def jax_floor(text: str) -> Version:
    """`"0.7"` -> `(0, 7, 0)`: a JAX release, as `target-jax` and `--target-jax` give it, padded
    so that it compares with the catalog's releases (`(0, 7) < (0, 7, 0)` as tuples)."""
    try:
        return (*parse(text), 0, 0)[:3] if len(parse(text)) < 3 else parse(text)
    except ValueError:
        raise SettingsError(f'target-jax: not a JAX release number: {text!r} (e.g. "0.7")') from None


def read_toml(path: Path) -> Mapping[str, Any]:
    if sys.version_info >= (3, 11):  # loaded here: a run with no pyproject.toml reads no TOML
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with path.open("rb") as handle:
            data: dict[str, Any] = tomllib.load(handle)
            return data
    except OSError as error:
        raise SettingsError(f"{path}: cannot read: {error.strerror or error}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not valid TOML: {error}") from None


@dataclass(frozen=True)
class Floor:
    release: Version
    #: Where it was read: "pyproject.toml [project] dependencies", "requirements.txt"...
    source: Path
    where: str

    def __str__(self) -> str:
        return f"{spelled(self.release)} (`{self.source.name}`{' ' + self.where if self.where else ''})"


def nearest(folder: Path) -> Floor | None:
    """The floor of the nearest folder from `folder` up to the repository root (a folder holding
    .git or .hg) whose project files declare one."""
    for candidate in (folder, *folder.parents):
        found = declared_in(candidate)
        if found is not None:
            return found
        if (candidate / ".git").exists() or (candidate / ".hg").exists():
            return None
    return None


def declared_in(folder: Path) -> Floor | None:
    """The lowest floor the project files of `folder` declare (cached while they are unchanged)."""
    files = [path for pattern in DECLARING for path in sorted(folder.glob(pattern))]
    stamps = tuple((path, path.stat().st_mtime_ns) for path in files if path.is_file())
    return _declared(stamps)


@lru_cache(maxsize=256)
def _declared(stamps: tuple[tuple[Path, int], ...]) -> Floor | None:
    for path, _ in stamps:  # the folder's own `target-jax` says it outright
        if (given := _target_jax(path)) is not None:
            return given
    floors = [
        Floor(release, path, where)
        for path, _ in stamps
        for where, requirements in _lists(path)
        if (release := floor_of(requirements, path)) is not None
    ]
    return min(floors, key=lambda floor: floor.release, default=None)


def _target_jax(path: Path) -> Floor | None:
    """`target-jax` in `[tool.semfix]` of a pyproject.toml, or at the top of semfix.toml."""
    if path.suffix != ".toml":
        return None
    data = read_toml(path)
    table = _table(_table(data.get("tool")).get("semfix")) if path.name == "pyproject.toml" else data
    value = table.get("target-jax")
    if value is None:
        return None
    if isinstance(value, str):
        try:
            return Floor(jax_floor(value), path, "target-jax")
        except SettingsError:
            pass
    raise SettingsError(f'{path}: target-jax must be a JAX release, as a string ("0.7")')


def _lists(path: Path) -> Iterator[tuple[str, list[str]]]:
    """(where in the file, its requirement strings) for each list of requirements in `path`."""
    if path.suffix == ".toml":
        yield from _pyproject(path) if path.name == "pyproject.toml" else ()
    elif path.suffix == ".cfg":
        yield from _setup_cfg(path, path.read_text("utf-8", "replace"))
    else:
        yield "", list(_requirement_lines(path))


def _pyproject(path: Path) -> Iterator[tuple[str, list[str]]]:
    data = read_toml(path)
    project = _table(data.get("project"))
    yield "[project] dependencies", _strings(project.get("dependencies"))
    for extra, listed in _table(project.get("optional-dependencies")).items():
        yield f"[project.optional-dependencies] {extra}", _strings(listed)
    for group, listed in _table(data.get("dependency-groups")).items():
        yield f"[dependency-groups] {group}", _strings(listed)
    tool = _table(data.get("tool"))
    dynamic = _table(_table(tool.get("setuptools")).get("dynamic"))
    named = _files(dynamic.get("dependencies"))
    named += [name for extra in _table(dynamic.get("optional-dependencies")).values() for name in _files(extra)]
    for name in named:
        if (requirements := path.parent / name).is_file():
            yield f"(named by [tool.setuptools.dynamic]: {name})", list(_requirement_lines(requirements))
    poetry = _table(tool.get("poetry"))
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [_table(group).get("dependencies") for group in _table(poetry.get("group")).values()]
    for table in tables:
        for name, constraint in _table(table).items():
            if name.lower() == "jax":
                yield "[tool.poetry]", [f"jax {spec}" for spec in _poetry(constraint)]


def _setup_cfg(path: Path, text: str) -> Iterator[tuple[str, list[str]]]:
    import configparser  # loaded here: most projects have no setup.cfg

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, str(path))
    except configparser.Error as error:
        raise SettingsError(f"{path}: not a valid setup.cfg: {error}") from None
    if parser.has_option("options", "install_requires"):
        yield "[options] install_requires", parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for extra, listed in parser.items("options.extras_require"):
            yield f"[options.extras_require] {extra}", listed.splitlines()


def _requirement_lines(path: Path, seen: frozenset[Path] = frozenset()) -> Iterator[str]:
    """A pip requirements file's requirements, following `-r other.txt` (options are skipped)."""
    for line in path.read_text("utf-8", "replace").replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*", "", line).strip()
        included = re.fullmatch(r"(?:-r|--requirement)[=\s]\s*(\S+)", line)
        if included and (other := path.parent / included.group(1)).is_file() and other not in seen:
            yield from _requirement_lines(other, seen | {path})
        elif line := re.sub(r"(^|\s)--?[a-z].*", "", line).strip():  # pip's options: `-e .`, `--hash=...`
            yield line


def floor_of(requirements: Iterable[str], source: Path) -> Version | None:
    """The oldest JAX release one list of requirements admits: its `jax` lines without a marker
    apply together, and each marker names an alternative, which they apply to as well; the
    floor is the lowest alternative's. None when no line bounds JAX from below."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.specifiers import SpecifierSet

    always, alternatives = SpecifierSet(), dict[str, SpecifierSet]()
    for text in requirements:
        if not _JAX.search(text):
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            reason = str(error).splitlines()[0]  # packaging's next lines draw a caret under the text
            raise SettingsError(f"{source}: cannot read the requirement {text.strip()!r}: {reason}") from None
        if requirement.name.lower() != "jax":
            continue
        if requirement.marker is None:
            always &= requirement.specifier
        else:
            marker = str(requirement.marker)
            alternatives[marker] = alternatives.get(marker, SpecifierSet()) & requirement.specifier
    floors = [_oldest(always & alternative) for alternative in alternatives.values() or [SpecifierSet()]]
    bounded = [floor for floor in floors if floor is not None]
    return min(bounded) if bounded and len(bounded) == len(floors) else None


def _oldest(specifier: SpecifierSet) -> Version | None:
    """The oldest known release `specifier` admits; None when it has no lower bound."""
    if specifier.contains("0.0.1", prereleases=False):
        return None
    for release in RELEASES:
        if specifier.contains(release, prereleases=False):
            return parse(release)
    lower = [parse(s.version) for s in specifier if s.operator in (">=", ">", "==", "~=", "===")]
    return max(lower) if lower else None  # past every release semfix knows


def _poetry(constraint: object) -> list[str]:
    """Poetry's constraint (a string, a table with `version`, or a list of them: alternatives) as
    PEP 440 specifier sets, one per alternative: `^0.7.2` is `>=0.7.2,<0.8.0`, `~0.7` `>=0.7,<0.8`."""
    if isinstance(constraint, list):
        return [spec for item in constraint for spec in _poetry(item)]
    if isinstance(constraint, dict):
        constraint = constraint.get("version", "*")
    if not isinstance(constraint, str):
        return [""]
    return [
        ",".join(_poetry_part(part) for part in re.split(r"[,\s]+", one.strip()) if part)
        for one in constraint.split("||")
    ]


def _poetry_part(part: str) -> str:
    if part == "*":
        return ""
    if part[0] in "^~" and part[:2] != "~=":
        numbers = [int(n) for n in re.findall(r"\d+", part)]
        if part[0] == "^":
            bump = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
        else:
            bump = min(1, len(numbers) - 1)
        upper = [*numbers[:bump], numbers[bump] + 1]
        return f">={part[1:]},<{'.'.join(map(str, upper))}"
    return part if part[0] in "<>=!~" else f"=={part}"


def _table(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _files(value: object) -> list[str]:
    named = _table(value).get("file", [])
    return [named] if isinstance(named, str) else _strings(named)
