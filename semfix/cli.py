"""The `semfix` command line: argument parsing and printing only."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from semfix import __version__
from semfix.report import error_line, finding_line, summary, unified_diff
from semfix.runner import RunOutcome, run

_PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
_QUIET = click.option("-q", "--quiet", is_flag=True, help="Print no summary line.")


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
def fix(paths: tuple[Path, ...], diff: bool, check_only: bool, quiet: bool) -> None:
    """Rewrite semaphore arguments in place under PATHS (default: the current folder).

    Exit status: 0 nothing to fix, 1 something was (or would be) fixed or found,
    2 a file could not be processed.
    """
    dry = diff or check_only
    outcome = run(paths or (Path("."),), apply_fixes=True, write=not dry)
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
def check(paths: tuple[Path, ...], quiet: bool) -> None:
    """List problems under PATHS without changing anything ([*]: `semfix fix` can fix it).

    Exit status: 0 nothing found, 1 something found, 2 a file could not be processed.
    """
    outcome = run(paths or (Path("."),), apply_fixes=False, write=False)
    for path, finding in outcome.findings:
        click.echo(finding_line(path, finding, mark_fixable=True))
    _print_errors(outcome)
    if not quiet:
        click.echo(summary(outcome, applied_verb="Fixed", left_label="found"), err=True)
    sys.exit(outcome.exit_code)
