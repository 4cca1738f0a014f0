"""Which settings apply to a file: those of the nearest settings file above it, as ruff reads its
hierarchy, with the command line's on top; or, under --config, that one file's for every file.
So a pre-commit batch spanning two members of a monorepo, or `fix .` at its root, keeps each
member's `extend-exclude` and rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from semfix.files import Excludes
from semfix.selection import load_settings
from semfix.settings import Settings, load_excludes, load_force_exclude, settings_in


class Project(NamedTuple):
    """What one settings file (with the command line over it) says a run does with its files."""

    settings: Settings
    excludes: Excludes
    force_exclude: bool
    source: Path | None  # the settings file; None: none found, the defaults and the command line


class Projects:
    """The command line's settings, and each file's project, found once per folder."""

    def __init__(
        self,
        select: tuple[str, ...] = (),
        extend_select: tuple[str, ...] = (),
        ignore: tuple[str, ...] = (),
        unsafe_fixes: bool | None = None,
        target_jax: str | None = None,
        exclude: tuple[str, ...] = (),
        force_exclude: bool = False,
        config: Path | None = None,  # --config: the one settings file of the run
    ) -> None:
        self.select, self.extend_select, self.ignore, self.unsafe_fixes = select, extend_select, ignore, unsafe_fixes
        self.target_jax, self.exclude, self.force_exclude, self.config = target_jax, exclude, force_exclude, config
        self._loaded: dict[Path | None, Project] = {}
        self._nearest: dict[Path, Path | None] = {}  # by absolute folder
        self._folders: dict[str, Project] = {}  # by a file's folder as named

    def load(self, source: Path | None) -> Project:
        """The project of a settings file (None: none), read once. Raises SettingsError."""
        if source not in self._loaded:
            settings = load_settings(
                source,
                select=self.select or None,
                extend_select=self.extend_select,
                ignore=self.ignore,
                unsafe_fixes=self.unsafe_fixes,
                target_jax=self.target_jax,
                floor_from_file=self.config is not None,
            )
            excludes = Excludes((*load_excludes(source), *self.exclude), source.parent if source else Path())
            self._loaded[source] = Project(settings, excludes, self.force_exclude or load_force_exclude(source), source)
        return self._loaded[source]

    def of(self, path: Path) -> Project:
        """The project of a file (or folder): its nearest settings file's. Raises SettingsError."""
        if self.config is not None:
            return self.load(self.config)
        folder = os.path.dirname(path)  # a run asks for each of its files: once per folder, as text
        if (project := self._folders.get(folder)) is None:
            project = self._folders[folder] = self.load(self._near(Path(os.path.abspath(folder or "."))))
        return project

    def _near(self, folder: Path) -> Path | None:
        """`find_pyproject([folder])`, each folder above looked at once in a run."""
        if folder not in self._nearest:
            own = settings_in(folder)
            above = folder.parent != folder and own is None
            self._nearest[folder] = self._near(folder.parent) if above else own or None
        return self._nearest[folder]

    def excludes(self, path: Path) -> bool:
        """Whether the file's own project excludes it."""
        return self.of(path).excludes(path)

    def forced(self, path: Path) -> bool:
        """Whether the file's own project applies its excludes to files named too."""
        return self.of(path).force_exclude
