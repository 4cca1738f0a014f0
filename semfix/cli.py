"""The `semfix` command line: argument parsing and printing only."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, Callable

import click

from semfix import __version__
from semfix.config import find_pyproject, load_excludes, load_settings
from semfix.report import error_line, finding_line, json_report, rules_table, summary, unified_diff
from semfix.runner import EXIT_ERROR, RunOutcome, run
from semfix.settings import Settings, SettingsError

_PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
_QUIET = click.option("-q", "--quiet", is_flag=True, help="Print no summary line.")
_PROGRESS_FROM = 200  # files to parse before a progress bar is worth drawing


@dataclass(frozen=True)
class RunOptions:
    """What every file-processing command shares: the rules, the file set, the parallelism."""

    paths: tuple[Path, ...]
    settings: Settings
    excludes: tuple[str, ...]
    force_exclude: bool
    jobs: int
    report: Path | None

    def run(self, **kwargs: Any) -> RunOutcome:
        return run(
            self.paths,
            settings=self.settings,
            excludes=self.excludes,
            force_exclude=self.force_exclude,
            jobs=self.jobs,
            progress=_ProgressBar() if sys.stderr.isatty() else None,
            **kwargs,
        )


class _ProgressBar:
    """click's progress bar on a terminal, only for runs long enough to need one."""

    def __init__(self) -> None:
        self._bar: Any = None

    def start(self, total: int) -> None:
        if total >= _PROGRESS_FROM:
            self._bar = click.progressbar(length=total, label="semfix", file=sys.stderr)
            self._bar.__enter__()

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def _common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Rule selection, file selection and parallelism, gathered into `options`."""

    @_PATHS
    @click.option("--select", multiple=True, help="Rules to run instead of the defaults: codes or prefixes (SEM0, SEM1), comma-separated.")
    @click.option("--extend-select", multiple=True, help="Rules to run on top of the selection.")
    @click.option("--ignore", multiple=True, help="Rules not to run.")
    @click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply fixes that may change meaning (SEM002 without proof).")
    @click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="pyproject.toml to read [tool.semfix] from (default: found from PATHS).")
    @click.option("--exclude", multiple=True, help="Glob of files or folders to skip (repeatable); adds to extend-exclude.")
    @click.option("--force-exclude", is_flag=True, help="Apply the excludes to files named on the command line too.")
    @click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: the number of cores).")
    @click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path), help="Write a JSON report of every change and finding to this file.")
    @wraps(command)
    def wrapper(
        paths: tuple[Path, ...],
        select: tuple[str, ...],
        extend_select: tuple[str, ...],
        ignore: tuple[str, ...],
        unsafe_fixes: bool | None,
        config_path: Path | None,
        exclude: tuple[str, ...],
        force_exclude: bool,
        jobs: int | None,
        report_path: Path | None,
        **kwargs: Any,
    ) -> Any:
        paths = paths or (Path("."),)
        try:
            pyproject = config_path or find_pyproject(paths)
            settings = load_settings(
                pyproject, select=select or None, extend_select=extend_select, ignore=ignore, unsafe_fixes=unsafe_fixes
            )
            excludes = (*load_excludes(pyproject), *exclude)
        except SettingsError as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(EXIT_ERROR)
        options = RunOptions(paths, settings, excludes, force_exclude, jobs or os.cpu_count() or 1, report_path)
        return command(options=options, **kwargs)

    return wrapper


def _finish(outcome: RunOutcome, options: RunOptions, *, command: str, quiet: bool, **summary_words: str) -> None:
    for failed in outcome.errors:
        click.echo(error_line(failed), err=True)
    if options.report is not None:
        try:
            options.report.write_text(json_report(outcome, command=command), encoding="utf-8")
        except OSError as error:
            click.echo(f"error: {options.report}: cannot write the report: {error.strerror}", err=True)
            sys.exit(EXIT_ERROR)
    if not quiet:
        click.echo(summary(outcome, **summary_words), err=True)
    sys.exit(outcome.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="semfix")
def main() -> None:
    """Pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels."""


@main.command()
@_common_options
@click.option("--diff", is_flag=True, help="Print unified diffs instead of writing files.")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change.")
@click.option("--allow-dirty", is_flag=True, help="Rewrite files even if they have unstaged changes in git.")
@_QUIET
def fix(options: RunOptions, diff: bool, check_only: bool, allow_dirty: bool, quiet: bool) -> None:
    """Rewrite semaphore arguments in place under PATHS (default: the current folder).

    In a git work tree, files with unstaged edits are not rewritten (unless --allow-dirty),
    so that semfix's changes can be reviewed on their own.

    Exit status: 0 nothing to fix, 1 something was (or would be) fixed or found,
    2 a file could not be processed.
    """
    dry = diff or check_only
    outcome = options.run(apply_fixes=True, write=not dry, allow_dirty=allow_dirty)
    for result in outcome.files:
        if diff and result.changed:
            sys.stdout.buffer.write(unified_diff(result.path, result.old, result.new))
            sys.stdout.flush()
        for finding in result.findings:
            if not diff:
                click.echo(finding_line(result.path, finding))
            elif not finding.applied:
                click.echo(finding_line(result.path, finding), err=True)
    _finish(outcome, options, command="fix", quiet=quiet, applied_verb="Would fix" if dry else "Fixed")


@main.command()
@_common_options
@_QUIET
def check(options: RunOptions, quiet: bool) -> None:
    """List problems under PATHS without changing anything ([*]: `semfix fix` can fix it).

    Exit status: 0 nothing found, 1 something found, 2 a file could not be processed.
    """
    outcome = options.run(apply_fixes=False, write=False)
    for path, finding in outcome.findings:
        click.echo(finding_line(path, finding, mark_fixable=True))
    _finish(outcome, options, command="check", quiet=quiet, applied_verb="Fixed", left_label="found")


@main.command()
def rules() -> None:
    """List every rule: its code, whether it fixes, how safely, and an example."""
    click.echo(rules_table(), nl=False)
