"""The JAX floor a project declares: the oldest JAX release any environment of it can install.

A migration renames a spelling only where the new one is the same object on every JAX the
project supports, so the floor must never be read too high. `read_floor` (the one entry
point) reads it for a folder: from the nearest folder up to the repository root whose project
files name `jax` at all (a member's own `"jax"`, bounded or not, ends the walk up), wherever
projects declare it: `pyproject.toml` (`[project]` dependencies and extras,
`[dependency-groups]`, files named by `[tool.setuptools.dynamic]`, Poetry's tables),
`setup.cfg`, and `requirements*.txt` beside them. Each is read as its own tool reads it (pip's
`packaging`, setuptools' list splitting, poetry-core's constraints), and each list is an
environment of its own, as is each combination of markers (the environments where no marker
holds count too): the floor is the lowest of them, so what a test group, an extra, a CI file or
a dev pin says never raises it. A declaration that cannot be read never stops a run: the floor
is then unknown (the oldest JAX semfix supports) and `Floor.unread` says which line and why.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from functools import cache, lru_cache
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from semfix.jax_versions import OLDEST, RELEASES, Version, parse, spelled
from semfix.patterns import compiled

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.specifiers import SpecifierSet

#: The files a floor is read from, as globs (the server watches them); named where none declares one.
DECLARING = ("pyproject.toml", ".semfix.toml", "semfix.toml", "setup.cfg", "requirements*.txt")
_JAX = compiled(r"(?i)\bjax\b")  # a line that never spells it is not parsed
#: The environments a marker is weighed in: every Python a JAX release supported, on each
#: platform JAX publishes wheels for: (sys_platform, platform_system, platform_machine, os_name).
_PYTHONS = ("3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")
_PLATFORMS = (
    ("linux", "Linux", "x86_64", "posix"),
    ("linux", "Linux", "aarch64", "posix"),
    ("darwin", "Darwin", "arm64", "posix"),
    ("darwin", "Darwin", "x86_64", "posix"),
    ("win32", "Windows", "AMD64", "nt"),
)


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


class Floor(NamedTuple):
    release: Version
    source: Path
    #: Where in the file: "[project] dependencies", "target-jax", "" (a requirements file)...
    where: str
    line: int = 0
    #: False where `jax` is named without a lower bound: any JAX, so the oldest semfix supports.
    bounded: bool = True
    #: Why the declaration at `source:line` cannot be read ("" where it was): the floor is unknown.
    unread: str = ""

    @property
    def place(self) -> str:
        return f"{self.source}:{self.line}" if self.line else str(self.source)

    def __str__(self) -> str:
        where = (
            f"`{self.source.name}`{':' + str(self.line) if self.line else ''}{' ' + self.where if self.where else ''}"
        )
        if self.unread:
            return f"{where}, which semfix cannot read ({self.unread}): unknown, so {spelled(self.release)} assumed"
        return where + ("" if self.bounded else ": `jax` with no lower bound")

    @property
    def warning(self) -> str:
        """What a run says once of a declaration it cannot read."""
        return (
            f"{self.place}: cannot read the `jax` requirement ({self.unread}); the JAX floor is taken as "
            f"unknown ({spelled(self.release)}, the oldest JAX semfix supports) for the migration rules"
        )


class _Unread(Exception):
    """A `jax` declaration semfix cannot read: its file, line and why."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        super().__init__(reason)
        self.path, self.line, self.reason = path, line, reason


class _Choice(NamedTuple):
    """One alternative of a `jax` declaration: PEP 440 specifiers, under a PEP 508 marker and a
    Poetry `python` constraint (as PEP 440 specifiers), each "" where there is none."""

    specifier: str
    marker: str = ""
    python: str = ""


class _Declared(NamedTuple):
    """One `jax` declaration (a line, a Poetry entry): its alternatives, and where it is."""

    choices: tuple[_Choice, ...]
    path: Path  # a file `-r` or `file:` names, or the list's own
    line: int


def read_floor(folder: Path) -> Floor | None:
    """The floor of the nearest folder from `folder` up to the repository root (a folder holding
    .git or .hg) whose project files name `jax`; None where none does."""
    for candidate in (folder, *folder.parents):
        names, root = _project_files(candidate)
        files = [candidate / name for name in names]
        found = _declared(tuple((path, path.stat().st_mtime_ns) for path in files if path.is_file()))
        if found is not None:
            return found
        if root and ((candidate / ".git").exists() or (candidate / ".hg").exists()):
            return None
    return None


def _project_files(folder: Path) -> tuple[tuple[str, ...], bool]:
    """The names of a folder's project files (`DECLARING`), and whether it may be a repository's
    root (it lists a `.git` or `.hg`, in any case), read again only once the folder changes (its
    mtime): every file of a run asks for each folder above it, up to the root, where matching
    each pattern against a folder's listing per file was most of a check's floor (`/tmp`'s
    listing, for a tree outside git: 0.5 ms a file)."""
    try:
        return _selected(folder, os.stat(folder).st_mtime_ns)
    except OSError:
        return (), False


@lru_cache(maxsize=1024)
def _selected(folder: Path, stamp: int) -> tuple[tuple[str, ...], bool]:
    names = os.listdir(folder)
    declaring = tuple(name for pattern in DECLARING for name in sorted(fnmatch.filter(names, pattern)))
    return declaring, any(name.lower() in (".git", ".hg") for name in names)


@lru_cache(maxsize=256)
def _declared(stamps: tuple[tuple[Path, int], ...]) -> Floor | None:
    """The lowest floor a folder's project files declare (cached while they are unchanged)."""
    for path, _ in stamps:  # the folder's own `target-jax` says it outright
        if (given := _target_jax(path)) is not None:
            return given
    floors = []
    try:
        for path, _ in stamps:
            python = _python(path)
            for where, declared in _lists(path):
                if declared:
                    floors.append(_floor_of(declared, python, path, where))
    except _Unread as unread:
        return Floor(OLDEST, unread.path, "", unread.line, unread=unread.reason)
    except OSError as error:  # a file named by `-r` or `file:` that cannot be opened, say
        return Floor(OLDEST, Path(error.filename or stamps[0][0]), "", unread=f"cannot read: {error.strerror}")
    return min(floors, key=lambda floor: (floor.bounded, floor.release), default=None)


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


# -- the floor of one list -----------------------------------------------------------------------


def _floor_of(declared: list[_Declared], python: str, path: Path, where: str) -> Floor:
    """The oldest JAX one list admits, in any environment: there, the declarations whose marker
    holds apply together, one alternative of each."""
    from packaging.markers import default_environment

    floors: list[Version | None] = []
    for version, (platform, system, machine, os_name) in product(_PYTHONS, _PLATFORMS):
        if python and not _specifiers(python).contains(f"{version}.0", prereleases=True):
            continue
        env = {key: str(value) for key, value in default_environment().items()}
        env.update(python_version=version, python_full_version=f"{version}.0")
        env.update(sys_platform=platform, platform_system=system, platform_machine=machine, os_name=os_name)
        applying = [held for one in declared if (held := [c for c in one.choices if _holds(c, env)])]
        for combination in product(*applying) if applying else ():
            floors.append(_oldest(",".join(c.specifier for c in combination if c.specifier)))
    if not floors:  # no environment semfix weighs takes any of them: each alone
        floors = [_oldest(c.specifier) for one in declared for c in one.choices]
    bounded = None not in floors
    release = min((f for f in floors if f is not None), default=OLDEST) if bounded else OLDEST
    giving = next((one for one in declared if bounded and _lowest(one) == release), declared[0])
    return Floor(release, giving.path, where if giving.path == path else "", giving.line, bounded=bounded)


def _holds(choice: _Choice, env: dict[str, str]) -> bool:
    """Does `choice` apply in the environment `env`?"""
    python = not choice.python or _specifiers(choice.python).contains(env["python_full_version"], prereleases=True)
    return python and (not choice.marker or _marker(choice.marker).evaluate(env))


@cache
def _marker(text: str) -> Marker:
    from packaging.markers import Marker

    return Marker(text)


def _lowest(declared: _Declared) -> Version | None:
    floors = [_oldest(c.specifier) for c in declared.choices]
    return None if None in floors else min(f for f in floors if f is not None)


@cache
def _specifiers(text: str) -> SpecifierSet:
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text)


@cache
def _oldest(specifier: str) -> Version | None:
    """The oldest release the PEP 440 `specifier` admits (a nightly or release candidate: the
    release before it); None when it has no lower bound."""
    from packaging.version import InvalidVersion
    from packaging.version import Version as Release

    specifiers = _specifiers(specifier)
    if specifiers.contains("0.0.1", prereleases=False):
        return None
    named = []
    for one in specifiers:
        try:
            named.append(Release(one.version))
        except InvalidVersion:  # `==0.7.*`, `===anything`
            pass
    releases = [Release(r) for r in RELEASES]
    for candidate in sorted({*releases, *named}):
        if specifiers.contains(str(candidate), prereleases=candidate in named):
            if candidate.is_prerelease or candidate.is_devrelease:  # a nightly is before its release
                return max((tuple(r.release) for r in releases if r < candidate), default=(0,))
            return tuple(candidate.release)
    lower = [parse(s.version) for s in specifiers if s.operator in (">=", ">", "==", "~=", "===")]
    return max(lower) if lower else None  # past every release semfix knows


# -- the lists of each file ----------------------------------------------------------------------


def _lists(path: Path) -> Iterator[tuple[str, list[_Declared]]]:
    """(where in the file, its `jax` declarations) for each list of requirements in `path`."""
    if path.suffix == ".toml":
        yield from _pyproject(path) if path.name == "pyproject.toml" else ()
    elif path.suffix == ".cfg":
        yield from _setup_cfg(path)
    else:
        yield "", _requirements(_requirement_lines(path))


def _python(path: Path) -> str:
    """The Pythons a pyproject.toml's project runs on, as PEP 440 specifiers ("" for any)."""
    if path.name != "pyproject.toml":
        return ""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    data = read_toml(path)
    given = _table(data.get("project")).get("requires-python")
    poetry = _table(_table(_table(data.get("tool")).get("poetry")).get("dependencies")).get("python")
    try:
        if isinstance(given, str):
            return str(SpecifierSet(given))
        return str(SpecifierSet(_poetry_specifier(poetry))) if isinstance(poetry, str) else ""
    except (InvalidSpecifier, ValueError):
        return ""  # any Python: never a floor too high


def _pyproject(path: Path) -> Iterator[tuple[str, list[_Declared]]]:
    data = read_toml(path)
    lines = path.read_text("utf-8", "replace").splitlines()

    def located(listed: object) -> list[tuple[Path, int, str]]:
        return [(path, _line_of(lines, text), text) for text in _strings(listed)]

    project = _table(data.get("project"))
    yield "[project] dependencies", _requirements(located(project.get("dependencies")))
    for extra, listed in _table(project.get("optional-dependencies")).items():
        yield f"[project.optional-dependencies] {extra}", _requirements(located(listed))
    for group, listed in _table(data.get("dependency-groups")).items():
        yield f"[dependency-groups] {group}", _requirements(located(listed))
    tool = _table(data.get("tool"))
    dynamic = _table(_table(tool.get("setuptools")).get("dynamic"))
    named = _files(dynamic.get("dependencies"))
    named += [name for extra in _table(dynamic.get("optional-dependencies")).values() for name in _files(extra)]
    for name in named:
        if (requirements := path.parent / name).is_file():
            yield f"(named by [tool.setuptools.dynamic]: {name})", _requirements(_requirement_lines(requirements))
    poetry = _table(tool.get("poetry"))
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    tables += [_table(group).get("dependencies") for group in _table(poetry.get("group")).values()]
    for table in tables:
        for name, constraint in _table(table).items():
            if _canonical(name) == "jax":
                line = _line_of(lines, name, key=True)
                yield "[tool.poetry]", [_Declared(_poetry(constraint, path, line), path, line)]


def _setup_cfg(path: Path) -> Iterator[tuple[str, list[_Declared]]]:
    """`install_requires` and `extras_require`, as setuptools splits them: by line, or by `;` in
    a value of one line; `#` comments dropped; `file:` naming requirements files."""
    import configparser  # loaded here: most projects have no setup.cfg

    text = path.read_text("utf-8", "replace")
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, str(path))
    except configparser.Error as error:
        if _JAX.search(text):
            raise _Unread(path, getattr(error, "lineno", 0), f"not a valid setup.cfg: {error.message}") from None
        return
    lines = text.splitlines()

    def listed(value: str) -> list[tuple[Path, int, str]]:
        if value.strip().startswith("file:"):
            names = [name.strip() for name in value.strip()[5:].split(",")]
            if missing := [name for name in names if not (path.parent / name).is_file()]:  # it may name `jax`
                raise _Unread(path, _line_of(lines, "file:"), f"`file: {missing[0]}`: no such file")
            return [line for name in names for line in _requirement_lines(path.parent / name)]
        items = value.splitlines() if "\n" in value else value.split(";")
        items = [item.partition(" #")[0].strip() for item in items if not item.strip().startswith("#")]
        return [(path, _line_of(lines, item), item) for item in items if item]

    if parser.has_option("options", "install_requires"):
        yield "[options] install_requires", _requirements(listed(parser.get("options", "install_requires")))
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            yield f"[options.extras_require] {extra}", _requirements(listed(value))


def _requirement_lines(path: Path, seen: frozenset[Path] = frozenset()) -> Iterator[tuple[Path, int, str]]:
    """A pip requirements file's requirements with their lines, following `-r other.txt`; an
    editable's target is read as a URL or path; pip's other options are skipped."""
    joined, start = "", 0
    for number, raw in enumerate(path.read_text("utf-8", "replace").splitlines(), 1):
        start = start or number
        if raw.endswith("\\"):
            joined += raw[:-1] + " "
            continue
        line, joined = re.sub(r"(^|\s)#.*", "", joined + raw).strip(), ""
        at, start = start, 0
        included = re.fullmatch(r"(?:-r|--requirement)[=\s]\s*(\S+)", line)
        if included:
            if not (other := path.parent / included.group(1)).is_file():  # it may name `jax`, unseen
                raise _Unread(path, at, f"{line!r}: no such file")
            if other not in seen:
                yield from _requirement_lines(other, seen | {path})
            continue
        line = re.sub(r"^(?:-e|--editable)[=\s]\s*", "", line)
        if line := re.sub(r"(^|\s)--?[a-z].*", "", line).strip():  # pip's options: `-i URL`, `--hash=...`
            yield path, at, line


# -- one declaration -----------------------------------------------------------------------------


def _requirements(located: Iterable[tuple[Path, int, str]]) -> list[_Declared]:
    """The `jax` declarations among requirement lines (PEP 508, or a URL or path as pip takes)."""
    return [
        _Declared(choices, path, line)
        for path, line, text in located
        if _JAX.search(text) and (choices := _requirement(text, path, line))
    ]


def _requirement(text: str, path: Path, line: int) -> tuple[_Choice, ...]:
    """The alternatives of one requirement line that names `jax`; () where it names another."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
    except InvalidRequirement as error:
        if re.match(r"[a-z0-9+.-]+://|[./\\~]|[A-Za-z]:\\", text, re.I) or "/" in text.split(";")[0]:
            url, *after = re.split(r"\s+;\s*|;\s+", text, maxsplit=1)  # pip: a URL's marker after ` ;`
            return _archive(url, "".join(after).strip(), path, line)
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", text)
        if name is None or _canonical(name.group()) != "jax":
            return ()
        reason = str(error).splitlines()[0]  # packaging's next lines draw a caret under the text
        raise _Unread(path, line, f"{text.strip()!r}: {reason}") from None
    if _canonical(requirement.name) != "jax":
        return ()
    marker = str(requirement.marker or "")
    if requirement.url:
        return _archive(requirement.url, marker, path, line, named=True)
    return (_Choice(str(requirement.specifier), marker),)


def _archive(url: str, marker: str, path: Path, line: int, *, named: bool = False) -> tuple[_Choice, ...]:
    """A wheel, an sdist, a VCS URL or a local path, as pip takes them: its name from `#egg=`, the
    file's name or the last part of its path; its version from a wheel's or sdist's file name."""
    from packaging.markers import InvalidMarker, Marker
    from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename

    try:
        Marker(marker) if marker else None
    except InvalidMarker as error:
        raise _Unread(path, line, f"{marker!r}: {str(error).splitlines()[0]}") from None
    location, _, fragment = url.partition("#")
    last = re.split(r"[/\\]", location.rstrip("/\\"))[-1].split("@")[0].removesuffix(".git")
    try:
        name, version = parse_wheel_filename(last)[:2] if last.endswith(".whl") else parse_sdist_filename(last)
        if _canonical(name) == "jax":
            return (_Choice(f"=={version}", marker),)
        return () if not named else _unknown(url, path, line)
    except (InvalidWheelFilename, InvalidSdistFilename):
        pass
    egg = re.search(r"(?:^|&)egg=([A-Za-z0-9._-]+)", fragment)
    if not named and _canonical(egg.group(1) if egg else last) != "jax":
        return ()
    return _unknown(url, path, line)


def _unknown(url: str, path: Path, line: int) -> tuple[_Choice, ...]:
    raise _Unread(path, line, f"{url!r}: a URL or path, whose JAX version semfix cannot tell")


def _poetry(constraint: object, path: Path, line: int) -> tuple[_Choice, ...]:
    """Poetry's constraint (a string, a table with `version`, or a list of them: alternatives, as
    poetry-core reads them), one choice per alternative, with its `python` and `markers`."""
    if isinstance(constraint, list):
        return tuple(choice for item in constraint for choice in _poetry(item, path, line))
    marker, python = "", ""
    if isinstance(constraint, dict):
        if "version" not in constraint and {"git", "path", "url", "file"} & set(constraint):
            raise _Unread(path, line, "a git, path or URL dependency, whose JAX version semfix cannot tell")
        marker = constraint.get("markers", "") if isinstance(constraint.get("markers"), str) else ""
        if isinstance(platform := constraint.get("platform"), str):
            marker = " and ".join(filter(None, [f"({marker})" if marker else "", f"sys_platform == {platform!r}"]))
        python = constraint.get("python", "") if isinstance(constraint.get("python"), str) else ""
        constraint = constraint.get("version", "*")
    if not isinstance(constraint, str):
        raise _Unread(path, line, f"{constraint!r}: not a Poetry version constraint")
    try:
        return tuple(
            _Choice(_poetry_specifier(one), marker, _poetry_specifier(python) if python else "")
            for one in re.split(r"\s*\|\|?\s*", constraint.strip())
        )
    except ValueError as error:
        raise _Unread(path, line, str(error)) from None


_POETRY = compiled(r"\s*(\^|~=|~|===|==|=|!=|<>|<=|>=|<|>)?\s*(\*|[xX]|\d[0-9A-Za-z.*+!-]*)\s*,?")


def _poetry_specifier(constraint: str) -> str:
    """One of Poetry's `||` alternatives as PEP 440 specifiers: `^0.7.2` is `>=0.7.2,<0.8.0`,
    `~0.7` `>=0.7,<0.8`, `>= 0.10.2` and `=0.10.2` what they say. ValueError where it is none."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    parts, at = [], 0
    while at < len(constraint.strip()):
        match = _POETRY.match(constraint.strip(), at)
        if match is None or match.end() == at:
            raise ValueError(f"{constraint!r}: not a Poetry version constraint")
        parts.append(_poetry_part(match.group(1) or "", match.group(2).replace("x", "*").replace("X", "*")))
        at = match.end()
    try:
        return str(SpecifierSet(",".join(part for part in parts if part)))
    except InvalidSpecifier:
        raise ValueError(f"{constraint!r}: not a Poetry version constraint") from None


def _poetry_part(operator: str, version: str) -> str:
    if version == "*":
        return ""
    if operator in ("^", "~"):
        numbers = [int(n) for n in re.findall(r"\d+", version.split("+")[0])[:3]]
        if operator == "^":
            bump = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
        else:
            bump = min(1, len(numbers) - 1)
        return f">={version},<{'.'.join(map(str, [*numbers[:bump], numbers[bump] + 1]))}"
    return f"{ {'': '==', '=': '==', '<>': '!='}.get(operator, operator) }{version}"


# -- small readers -------------------------------------------------------------------------------


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _line_of(lines: list[str], text: str, *, key: bool = False) -> int:
    """The first line holding `text` (a key, with `key`), 1-based; 0 where none does."""
    pattern = re.compile(rf"^\s*[\"']?{re.escape(text)}[\"']?\s*=" if key else re.escape(text))
    return next((number for number, line in enumerate(lines, 1) if pattern.search(line)), 0)


def _table(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _files(value: object) -> list[str]:
    named = _table(value).get("file", [])
    return [named] if isinstance(named, str) else _strings(named)
