"""`semfix check --show-settings`: what a run would use for each path, and the JAX floor with the
file and line it was read from, as ruff's option of that name shows its settings, so that a user
whose migration held back a rename sees why in one command."""

from __future__ import annotations

import os
from pathlib import Path

import click

from semfix.cli.options import RunOptions
from semfix.floor import DECLARING, read_floor
from semfix.jax_versions import OLDEST, spelled
from semfix.settings import Settings, for_file


def show_settings(options: RunOptions) -> None:
    """For each path (a folder: the files right in it), the rules, the fixes allowed and the floor."""
    for path in options.paths:
        file = path / "_" if path.is_dir() else path  # a folder's files take its floor
        own = options.projects.of(file).settings  # its nearest settings file's (issue 46)
        settings = for_file(own, file)
        click.echo(f"Resolved settings for: {path}")
        click.echo(f"  rules: {', '.join(sorted(settings.enabled)) or '(none)'}")
        click.echo(f"  unsafe-fixes: {str(settings.unsafe_fixes).lower()}")
        click.echo(f"  target-jax: {floor(own, file)}")
        click.echo(f"    (read by {', '.join(sorted(own.floor_rules))}, where they run)")


def floor(settings: Settings, file: Path) -> str:
    """The floor for `file`, and where it comes from: a file and line, or why none is known."""
    if settings.target_given:
        return f"{spelled(settings.target_jax)}, from {settings.target_from}"
    found = read_floor(Path(os.path.abspath(file)).parent)
    if found is None:
        return (
            f"{spelled(OLDEST)}, the oldest JAX semfix supports: no `jax` requirement in "
            f"{', '.join(DECLARING)} up to the repository root"
        )
    if found.unread:
        return f"{spelled(found.release)}, unknown: {found.place} cannot be read ({found.unread})"
    where = f"{found.place}{' ' + found.where if found.where else ''}"
    return f"{spelled(found.release)}, from {where}" + (
        "" if found.bounded else " (`jax` with no lower bound: any JAX)"
    )
