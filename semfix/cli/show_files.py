"""`--show-files`, as ruff has it: the files a run would check, one a line on stdout, and on
stderr each source file under the paths that it would not check, with why: so that a user can
see why a kernel was never looked at (an exclude, .gitignore, ruff's default excludes, a link
leaving the project) without reading the discovery code."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import click

from semfix.cli.projects import Projects
from semfix.cli.report import for_ci, shown
from semfix.files import EXCLUDED_DIRS, SOURCE_SUFFIXES, discover
from semfix.git import work_tree_files


def show_files(paths: tuple[Path, ...], projects: Projects) -> int:
    """Print what a run over `paths` checks and skips; the exit status (2 if a path is missing)."""
    found = discover(paths, projects.excludes, force_exclude=projects.forced)
    for path in found.files:
        click.echo(shown(path))
    taken = {os.path.normpath(path) for path in found.files}
    skipped = dict(found.skipped)
    for given in paths:
        if given.is_dir():
            for path, why in _left_out(given, projects):
                if os.path.normpath(path) not in taken:
                    skipped.setdefault(path, why)  # discovery's own reason first
        elif (
            given.exists()
            and os.path.normpath(given) not in taken
            and (glob := projects.of(given).excludes.match(given))
        ):
            skipped[given] = f"{_excluded(glob, projects, given)}, named but force-exclude applies"
    for path, why in sorted(skipped.items(), key=lambda item: item[0].as_posix()):
        click.echo(f"skipped: {shown(path)}: {for_ci(why)}", err=True)
    for path, why in found.errors:
        click.echo(f"error: {shown(path)}: {for_ci(why)}", err=True)
    return 2 if found.errors else 0


def _left_out(folder: Path, projects: Projects) -> Iterator[tuple[Path, str]]:
    """Each source file under `folder` (and folder skipped whole) with why a run would leave it
    out, where it would: discovery itself says nothing of what it does not take."""
    listed = work_tree_files(folder)
    tracked = None if listed is None else {os.path.normpath(path) for path in listed}
    for root, dirs, files in os.walk(folder):
        for name in sorted(d for d in dirs if d in EXCLUDED_DIRS and d not in (".git", ".hg", ".svn", ".bzr")):
            yield Path(root, name), "a folder ruff and semfix skip by default"
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS)
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                path = Path(root, name)
                if glob := projects.of(path).excludes.match(path):
                    yield path, _excluded(glob, projects, path)
                elif tracked is not None and os.path.normpath(path) not in tracked:
                    yield path, "ignored by git (.gitignore, info/exclude or the global excludes file)"
                else:
                    yield path, "the same file as a name checked (a link to it, or a hard link)"


def _excluded(glob: str, projects: Projects, path: Path) -> str:
    source = projects.of(path).source
    return f"excluded by {glob!r} (--exclude or extend-exclude{f' in {source}' if source else ''})"
