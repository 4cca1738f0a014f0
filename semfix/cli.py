"""The `semfix` command line: argument parsing and printing only."""

from __future__ import annotations

import sys
from functools import wraps
from pathlib import Path
from typing import Any, Callable

import click

from semfix import __version__
from semfix.config import find_pyproject, load_settings
from semfix.report import error_line, finding_line, rules_table, summary, unified_diff
from semfix.runner import EXIT_ERROR, RunOutcome, run
from semfix.settings import Settings, SettingsError

_PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
_QUIET = click.option("-q", "--quiet", is_flag=True, help="Print no summary line.")


def _rule_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--select/--extend-select/--ignore/--unsafe-fixes/--config, turned into `settings`."""

    @click.option("--select", multiple=True, help="Rules to run instead of the defaults: codes or prefixes (SEM0, SEM1), comma-separated.")
    @click.option("--extend-select", multiple=True, help="Rules to run on top of the selection.")
    @click.option("--ignore", multiple=True, help="Rules not to run.")
    @click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes that may change meaning (SEM002 without proof).")
    @click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="pyproject.toml to read [tool.semfix] from (default: found from PATHS).")
    @wraps(command)
    def wrapper(
        paths: tuple[Path, ...],
        select: tuple[str, ...],
        extend_select: tuple[str, ...],
        ignore: tuple[str, ...],
        unsafe_fixes: bool | None,
        config_path: Path | None,
        **kwargs: Any,
    ) -> Any:
        paths = paths or (Path("."),)
        try:
            settings = load_settings(
                config_path or find_pyproject(paths),
                select=select or None,
                extend_select=extend_select,
                ignore=ignore,
                unsafe_fixes=unsafe_fixes,
            )
        except SettingsError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(EXIT_ERROR)
        return command(paths=paths, settings=settings, **kwargs)

    return wrapper


def _print_errors(outcome: RunOutcome) -> None:
    for failed in outcome.errors:
        click.echo(error_line(failed), err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="semfix")
def main() -> None:
    """Pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels."""


@main.command()
@_PATHS
@click.option("--diff", is_flag=True, help="Print unified diffs instead of writing files.")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change.")
@_QUIET
@_rule_options
def fix(paths: tuple[Path, ...], settings: Settings, diff: bool, check_only: bool, quiet: bool) -> None:
    """Rewrite semaphore arguments in place under PATHS (default: the current folder).

    Exit status: 0 nothing to fix, 1 something was (or would be) fixed or found,
    2 a file could not be processed.
    """
    dry = diff or check_only
    outcome = run(paths, settings=settings, apply_fixes=True, write=not dry)
    for result in outcome.files:
        if diff and result.changed:
            sys.stdout.buffer.write(unified_diff(result.path, result.old, result.new))
            sys.stdout.flush()
        for finding in result.findings:
            if not diff:
                click.echo(finding_line(result.path, finding))
            elif not finding.applied:
                click.echo(finding_line(result.path, finding), err=True)
    _print_errors(outcome)
    if not quiet:
        click.echo(summary(outcome, applied_verb="Would fix" if dry else "Fixed"), err=True)
    sys.exit(outcome.exit_code)


@main.command()
@_PATHS
@_QUIET
@_rule_options
def check(paths: tuple[Path, ...], settings: Settings, quiet: bool) -> None:
    """List problems under PATHS without changing anything ([*]: `semfix fix` can fix it).

    Exit status: 0 nothing found, 1 something found, 2 a file could not be processed.
    """
    outcome = run(paths, settings=settings, apply_fixes=False, write=False)
    for path, finding in outcome.findings:
        click.echo(finding_line(path, finding, mark_fixable=True))
    _print_errors(outcome)
    if not quiet:
        click.echo(summary(outcome, applied_verb="Fixed", left_label="found"), err=True)
    sys.exit(outcome.exit_code)


@main.command()
def rules() -> None:
    """List every rule: its code, whether it fixes, how safely, and an example."""
    click.echo(rules_table(), nl=False)
