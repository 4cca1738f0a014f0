"""What a run is asked to do, as data: the rules enabled and how far their fixes may go, the
JAX floor, and what `[tool.semfix]` in the project's pyproject.toml (found the way black finds
it) declares. This knows no rule: which codes a selector means, and which rules run by default,
is semfix.selection's, in the layer of the rules it reads."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple

from semfix.floor import SettingsError, jax_floor, read_floor, read_toml
from semfix.jax_versions import OLDEST, Version

__all__ = [
    "Allocated",
    "FileIgnore",
    "Launch",
    "Passed",
    "Place",
    "ReadThrough",
    "Settings",
    "SettingsError",
    "for_file",
    "find_pyproject",
    "jax_floor",
    "tool_table",
]


#: A finding's place: (line, column, end line, end column), 1-based, as in `Finding`.
Place = tuple[int, int, int, int]


class Passed(NamedTuple):
    """A parameter a helper of another module of the run passes on, unchanged, to a catalog
    function's (`SemParam.via`)."""

    name: str
    position: int | None  # None: keyword-only
    function: str  # the catalog function, and its parameter, it reaches
    parameter: str
    buffer: bool  # a DMA buffer, not a semaphore


class ReadThrough(NamedTuple):
    """What one module of a run reads through the run's other modules: one fact, entering the
    analysis once (`ScopeBuilder` binds the stars; `Resolution` qualifies through the aliases)."""

    #: The JAX names it reads through them, each as its own imports qualify it, with the JAX
    #: name: (`..compat.semaphore_wait`, `jax.experimental.pallas.tpu.semaphore_wait`) after
    #: `from . import compat`: calls through them are catalog calls.
    aliases: tuple[tuple[str, str], ...] = ()
    #: The names each of its star imports of a run module binds, by the module as spelled
    #: (`.compat`), where that module's literal `__all__` says them: the star then binds those
    #: names alone, as imports of them, and leaves the module's other names resolved.
    stars: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The helpers it calls through them (`from .dma import fetch`, where `dma.py`'s `fetch`
    #: passes its `sem` on, unchanged, to `make_async_copy`'s), by the name as its imports
    #: qualify it (`.dma.fetch`), with the parameters each passes on: calls of them are
    #: read as calls of a helper of the file are.
    helpers: tuple[tuple[str, tuple[Passed, ...]], ...] = ()


class Allocated(NamedTuple):
    """One allocation another module of the run passes a kernel of this one, as that module's
    analysis read it (`semfix.analysis.allocations`): data, so that it crosses to this file."""

    kind: str  # what it allocates: `Kind`'s value ("array", "tuple", "unknown")
    semaphore: str | None  # the semaphore kind (`DMA`), where it allocates one kind
    rank: int | None  # how many indices pick one semaphore, where its shape says
    where: str  # the file and line it is written at: `kern/api.py:12`
    text: str  # as written there
    name: str | None = None  # the parameter it is given by name (`pl.kernel`'s dict of scratch); None: by position


class Launch(NamedTuple):
    """A launch, in another module of the run, of a kernel this module defines at its top
    (`pl.pallas_call(kernel, scratch_shapes=[...])` after `from .ops import kernel`): its
    allocations bind the def's parameters as a launch in this file would (issue 43)."""

    kernel: str  # the def's name here
    given: int  # the leading positional parameters a partial (or a lambda) gives
    named: tuple[str, ...]  # the parameters it gives by name
    #: What `pallas_call` passes the kernel's last parameters, in order (and `pl.kernel` by
    #: name: `Allocated.name`); None where the launching module cannot read it (the kernel's
    #: parameters are then proven nothing).
    scratch: tuple[Allocated, ...] | None


class FileIgnore(NamedTuple):
    """One `per-file-ignores` entry, read as ruff reads it: the glob matches a file's name, or its
    path from `root` (the folder of the file that declares it); `*` crosses folders, `**/` may
    match no folder, and a leading `!` turns the match around."""

    glob: str
    root: str
    codes: frozenset[str]

    def matches(self, path: Path) -> bool:
        glob = self.glob.removeprefix("!")
        absolute = Path(os.path.abspath(path)).as_posix()
        full = Path(os.path.abspath(os.path.join(self.root, glob))).as_posix()
        hit = any(
            fnmatch.fnmatchcase(path.name, pattern) or fnmatch.fnmatchcase(absolute, whole)
            for pattern, whole in ((glob, full), (glob.replace("**/", ""), full.replace("**/", "")))
        )
        return hit != self.glob.startswith("!")


@dataclass(frozen=True)
class Settings:
    #: The codes of the rules that run (semfix.selection's `build_settings` makes them from
    #: selectors; with none given, the rules' defaults).
    enabled: frozenset[str]
    unsafe_fixes: bool = False
    #: When set, only these fixes are made (`explain` chooses them from a traceback), so that
    #: its writes go through the same engine and proof as `fix`. With `near`, a fix is made
    #: where its place overlaps or touches one of these: the proof's second pass asks that of
    #: the regions the first pass rewrote.
    chosen: frozenset[Place] | None = None
    near: bool = False
    #: The file is a package's `__init__.py`: its module-level names are what its importers
    #: read (`from mypkg import semaphore_wait`), so no fix drops a module-level import.
    package_init: bool = False
    #: The names the other modules of the same run import from this one by name (`from .sync
    #: import DeviceIdType`; `*` for a star import) or read through it (`compat.pltpu`): no fix
    #: drops a module-level import of them (one of a name `pl` gives alike moves to `pl`'s module).
    imported_by_run: frozenset[str] = frozenset()
    #: What this module reads through the run's other modules
    #: (`semfix.analysis.run_imports.names_read_through`).
    read_through: ReadThrough = ReadThrough()
    #: The launches, in the run's other modules, of the kernels this module defines
    #: (`semfix.analysis.run_launches`): what they allocate is proven as a launch here would prove it.
    launched_by_run: tuple[Launch, ...] = ()
    #: The oldest JAX the project supports (`target-jax`, else the oldest release its `jax`
    #: requirement admits, semfix.floor): a migration renames only where the new spelling
    #: means the same from this release on. With none declared, the oldest JAX semfix
    #: supports, as ruff assumes its oldest Python without `target-version`: no rename can
    #: then break a supported JAX.
    target_jax: Version = OLDEST
    #: Whether the floor was declared (the findings held back by it say how to declare it).
    target_declared: bool = False
    #: Where the floor was read, for the findings held back by it ("" when none was declared).
    target_from: str = ""
    #: The floor was given for the whole run (`--target-jax`, `target-jax`); else each file
    #: takes the one its nearest project declares (`for_file`).
    target_given: bool = False
    #: `per-file-ignores` and `extend-per-file-ignores`: the codes `for_file` turns off by path.
    file_ignores: tuple[FileIgnore, ...] = ()
    #: The codes of the rules that read the floor (semfix.selection names them): `for_file`
    #: reads no project file for a file where none of them runs.
    floor_rules: frozenset[str] = frozenset()
    #: What a run says once where the floor's declaration cannot be read ("" where it was).
    target_unread: str = ""

    def accepts(self, place: Place, safe: bool) -> bool:
        """Is a fix at `place` made, given its safety?"""
        if not (safe or self.unsafe_fixes):
            return False
        if self.chosen is None:
            return True
        if not self.near:
            return place in self.chosen
        start, end = place[:2], place[2:]
        return any(start <= region[2:] and region[:2] <= end for region in self.chosen)


_KEYS = {
    "select",
    "extend-select",
    "ignore",
    "unsafe-fixes",
    "extend-exclude",
    "force-exclude",
    "target-jax",
    "per-file-ignores",
    "extend-per-file-ignores",
}


def given_floor(pyproject: Path | None, table: Mapping[str, Any]) -> str | None:
    """`target-jax` in [tool.semfix], checked; None when it is not set."""
    value = table.get("target-jax")
    if value is None:
        return None
    if not isinstance(value, str):
        raise SettingsError(f'{label(pyproject)} target-jax must be a JAX release, as a string ("0.7")')
    try:
        jax_floor(value)
    except SettingsError as error:
        raise SettingsError(f"{label(pyproject)} {error}") from None
    return value


def for_file(settings: Settings, path: Path) -> Settings:
    """The settings for the file at `path`: without the rules its `per-file-ignores` turn off,
    and, unless the floor was given for the whole run, with the floor the nearest project above
    it declares, so that a pre-commit batch, a monorepo run and the server give each file the
    same floor."""
    ignored = frozenset().union(*(entry.codes for entry in settings.file_ignores if entry.matches(path)))
    if ignored:
        settings = replace(settings, enabled=settings.enabled - ignored)
    if settings.target_given or not settings.enabled & settings.floor_rules:
        return settings
    floor = read_floor(Path(os.path.abspath(path)).parent)
    if floor is None:
        return replace(settings, target_jax=OLDEST, target_declared=False, target_from="", target_unread="")
    return replace(
        settings,
        target_jax=floor.release,
        target_declared=floor.bounded,
        target_from=str(floor),
        target_unread=floor.warning if floor.unread else "",
    )


#: semfix's own settings files, which hold its keys at the top level as ruff.toml holds ruff's.
#: In one folder, as ruff prefers .ruff.toml to ruff.toml to pyproject.toml, the first of these
#: is read, then pyproject.toml.
OWN_FILES = (".semfix.toml", "semfix.toml")


def find_pyproject(paths: Iterable[Path]) -> Path | None:
    """The nearest settings file above the paths' common folder, as black and ruff find theirs:
    one of OWN_FILES, else a pyproject.toml with a [tool.semfix] table. The search stops at the
    repository root (a folder holding .git or .hg). The JAX floor is read per file instead
    (`for_file`)."""
    try:
        absolute = [Path(os.path.abspath(p)) for p in paths] or [Path.cwd()]
    except FileNotFoundError:
        raise SettingsError("the current folder no longer exists; cd to a real folder and run again") from None
    common = Path(os.path.commonpath([str(p) for p in absolute]))
    folder = common if common.is_dir() else common.parent
    for candidate in (folder, *folder.parents):
        found = settings_in(candidate)
        if found is not None:
            return found or None
    return None


def settings_in(folder: Path) -> Path | Literal[False] | None:
    """The settings file `find_pyproject` takes in `folder` itself; False where the search ends
    there without one (a repository root); None to look above. One listing of the folder, where
    asking for each name took five stats (a fifth of discovery where a system call is slow); a
    name listed is then asked as before (a folder named `semfix.toml`, a broken link), in any
    case: on a case-insensitive disk (macOS, Windows) `PyProject.toml` was found by its stat."""
    try:
        listed = {name.lower() for name in os.listdir(folder)}
    except OSError:  # a folder that can be searched but not listed: each name asked
        listed = {*OWN_FILES, "pyproject.toml", ".git", ".hg"}
    for name in OWN_FILES:
        if name in listed and (folder / name).is_file():
            return folder / name
    pyproject = folder / "pyproject.toml"
    if "pyproject.toml" in listed and pyproject.is_file() and "semfix" in _tool(pyproject):
        return pyproject
    return False if any(name in listed and (folder / name).exists() for name in (".git", ".hg")) else None


def _nested(path: Path) -> bool:
    """Whether a file's settings sit under [tool.semfix]: in pyproject.toml, or any file with a
    `tool` table; not in OWN_FILES, nor in another file given to --config (as ruff reads a
    --config file that is not pyproject.toml as it reads ruff.toml)."""
    return path.name not in OWN_FILES and (path.name == "pyproject.toml" or "tool" in read_toml(path))


def label(path: Path | None) -> str:
    """How an error names where a setting is: `path: [tool.semfix]`, or `path:` for a file of
    semfix's own."""
    return f"{path}: [tool.semfix]" if path is None or _nested(path) else f"{path}:"


def _tool(pyproject: Path) -> Mapping[str, Any]:
    """The file's `[tool]` table: a file where `tool` is something else is named, not a crash."""
    tool = read_toml(pyproject).get("tool", {})
    if not isinstance(tool, dict):
        raise SettingsError(f"{pyproject}: `tool` must be a table")
    return tool


def tool_table(pyproject: Path | None) -> Mapping[str, Any]:
    """The settings in a file, its keys known (none: empty): [tool.semfix] of pyproject.toml,
    or the top level of a file of semfix's own."""
    if pyproject is None:
        return {}
    table = _tool(pyproject).get("semfix", {}) if _nested(pyproject) else read_toml(pyproject)
    if not isinstance(table, dict):
        raise SettingsError(f"{pyproject}: [tool.semfix] must be a table")
    unknown = set(table) - _KEYS
    if unknown:
        hint = "" if _nested(pyproject) or pyproject.name in OWN_FILES else _WHERE
        raise SettingsError(f"{label(pyproject)} has unknown key(s): {', '.join(sorted(unknown))}{hint}")
    return table


_WHERE = " (semfix reads its keys at the top of semfix.toml, or under [tool.semfix] in pyproject.toml)"


def check_config(path: Path) -> None:
    """A file named with --config must hold semfix's settings: one that holds none (a ruff.toml,
    a misspelt table, a pyproject.toml without [tool.semfix]) would leave the run to the
    defaults without a word. A file of semfix's own may be empty, as an empty ruff.toml may."""
    if path.name not in OWN_FILES and not tool_table(path):
        where = "no [tool.semfix] table" if _nested(path) else "no semfix settings"
        raise SettingsError(f"{path}: {where}: the file given to --config holds nothing for semfix{_WHERE}")


def strings(
    pyproject: Path | None, table: Mapping[str, Any], key: str, what: str, *, where: str = ""
) -> list[str] | None:
    """A list of strings (or one string) under `key` of [tool.semfix] (`what`: what they are;
    `where`: the key's name in the file, if not `key`)."""
    value = table.get(key)
    if isinstance(value, str):
        value = [value]
    elif not (value is None or isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise SettingsError(f"{label(pyproject)} {where or key} must be a list of {what}")
    return value


def load_excludes(pyproject: Path | None) -> tuple[str, ...]:
    """`extend-exclude` globs from [tool.semfix], added to the command line's `--exclude`."""
    return tuple(strings(pyproject, tool_table(pyproject), "extend-exclude", "globs") or ())


def load_force_exclude(pyproject: Path | None) -> bool:
    """`force-exclude` in [tool.semfix]: the excludes apply to files named on the command line too
    (pre-commit names every file it passes), as ruff's setting of that name does."""
    value = tool_table(pyproject).get("force-exclude", False)
    if not isinstance(value, bool):
        raise SettingsError(f"{label(pyproject)} force-exclude must be true or false")
    return value
