"""`semfix fix` and `semfix check`: the commands that run over files."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from semfix.cli.options import (
    QUIET,
    SILENT,
    STATISTICS,
    STDIN_FILENAME,
    RunOptions,
    common_options,
    finish,
    for_people,
    format_option,
    print_findings,
    usage_error,
)
from semfix.cli.report import TEXT_FORMATS, applied_fixes, finding_line, fix_mark, unified_diff
from semfix.cli.runner import FileOutcome, RunOutcome
from semfix.findings import Finding
from semfix.settings import SettingsError

#: What `fix` does beyond `check`: ruff's `check --fix` takes them too.
FIX_OPTIONS = (
    click.option("--diff", is_flag=True, help="Print unified diffs instead of writing files."),
    click.option("--allow-dirty", is_flag=True, help="Rewrite files even if they have unstaged changes in git."),
    click.option(
        "--exit-non-zero-on-fix",
        is_flag=True,
        help="Exit 1 when a file was changed, even with nothing left (pre-commit).",
    ),
    click.option("--show-fixes", is_flag=True, help="After the findings, list the fixes written, by file and rule."),
)


SHOW_FILES = click.option(
    "--show-files",
    is_flag=True,
    help="List the files a run would check (on stderr, those it skips and why); check nothing.",
)


def fix_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(FIX_OPTIONS):
        command = option(command)
    return command


@click.command()
@common_options
@fix_options
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change.")
@format_option("one line per finding, [fixed] marking the fixes written")
@STATISTICS
@STDIN_FILENAME
@SHOW_FILES
@QUIET
@SILENT
def fix(options: RunOptions, check_only: bool, show_files: bool, **kwargs: Any) -> None:
    """Rewrite semaphore arguments in place under PATHS (default: the current folder).

    Each finding is printed, [fixed] marking the fixes written. In a git work tree, files
    with unstaged edits or untracked files are not rewritten (unless --allow-dirty), so that
    semfix's changes can be reviewed on their own.

    Exit status: 0 nothing left to fix (everything found was fixed), 1 something is left, or
    would be fixed (--diff, --check), or was fixed (--exit-non-zero-on-fix), 2 a file could
    not be processed.
    """
    if show_files:
        _show_files(options)
    run_fix(options, check_only=check_only, **kwargs)


def run_fix(
    options: RunOptions,
    *,
    diff: bool,
    check_only: bool,
    allow_dirty: bool,
    exit_non_zero_on_fix: bool,
    show_fixes: bool,
    output_format: str,
    statistics: bool,
    quiet: bool,
    silent: bool,
) -> None:
    """`semfix fix`, and `semfix check --fix` or `--diff` (ruff's spelling of it)."""
    dry = diff or check_only
    if (diff or options.stdin) and output_format not in TEXT_FORMATS:
        usage_error(
            "--output-format applies to the findings list; with --diff or '-' they go to stderr as text", output_format
        )
    shown = for_people(output_format, quiet=quiet, silent=silent)
    outcome = options.run(apply_fixes=True, write=not dry, allow_dirty=allow_dirty, shown=shown)
    if options.stdin:
        outcome.written = not dry  # the fixed source is the output
    unsafe = options.settings.unsafe_fixes
    for result in outcome.files:
        if diff and result.changed:
            sys.stdout.buffer.write(unified_diff(result.path, result.old, result.new))
        elif options.stdin and not dry:  # on an error the source goes back out unchanged: a pipe never loses it
            sys.stdout.buffer.write(result.new if result.changed else options.stdin_data)
        sys.stdout.flush()
        for finding in result.findings if (diff or options.stdin) and not silent else ():
            if options.stdin or not (finding.applied and result.changed):  # a diff shows the applied ones
                click.echo(finding_line(result.path, finding, _mark(finding, result, outcome, unsafe)), err=True)
    if not (diff or options.stdin or silent):
        marks = {id(f): _mark(f, r, outcome, unsafe) for r in outcome.files for f in r.findings}
        print_findings(
            outcome, output_format, options, with_diffs=False, statistics=statistics, mark=lambda _, f: marks[id(f)]
        )
    if show_fixes and outcome.written and not silent:
        applied = [(r.path, f) for r in outcome.files if r.error is None for f in r.findings if f.applied]
        click.echo(applied_fixes(applied), nl=False, err=diff or options.stdin)
    command = "fix --diff" if diff else "fix --check" if check_only else "fix"
    code = outcome.fix_exit_code(non_zero_on_fix=exit_non_zero_on_fix)
    finish(outcome, options, command=command, quiet=quiet or options.stdin, code=code, silent=silent)


def _mark(finding: Finding, result: FileOutcome, outcome: RunOutcome, unsafe_fixes: bool) -> str:
    """`[fixed]` only for a fix that was written; else `[*]` for one `fix` would apply."""
    fixed = finding.applied and outcome.written and result.error is None
    return fix_mark(finding, fixed=fixed, unsafe_fixes=unsafe_fixes)


@click.command()
@common_options
@click.option(
    "--fix/--no-fix", "apply", default=False, help="Fix what can be fixed, as `semfix fix` (ruff's `check --fix`)."
)
@fix_options
@format_option("one line per finding")
@STATISTICS
@STDIN_FILENAME
@SHOW_FILES
@QUIET
@SILENT
@click.option(
    "--show-settings",
    is_flag=True,
    help="Show the settings each PATH takes, and its JAX floor with the file and line it was read from; check nothing.",
)
def check(options: RunOptions, apply: bool, show_settings: bool, show_files: bool, **kwargs: Any) -> None:
    """List problems under PATHS ([*]: `semfix fix` would fix it; check itself changes nothing).

    PATH '-' reads the source from stdin. With --fix or --diff, as in ruff, it is `semfix fix`
    (and takes fix's options). Exit status: 0 nothing found, 1 something found, 2 a file could
    not be processed.
    """
    if show_settings:
        from semfix.cli.show_settings import show_settings as show

        return show(options)
    if show_files:
        _show_files(options)
    if apply or kwargs["diff"]:
        return run_fix(options, check_only=False, **kwargs)
    output_format, statistics, quiet, silent = (kwargs[k] for k in ("output_format", "statistics", "quiet", "silent"))
    outcome = options.run(apply_fixes=False, shown=for_people(output_format, quiet=quiet, silent=silent))
    if not silent:
        print_findings(outcome, output_format, options, with_diffs=False, statistics=statistics)
    finish(outcome, options, command="check", quiet=quiet, silent=silent)


def _show_files(options: RunOptions) -> NoReturn:
    from semfix.cli.show_files import show_files  # loaded only when asked for

    if options.stdin:
        usage_error("--show-files lists the files under PATHS; with '-' the source is on stdin")
    try:
        code = show_files(options.paths, options.projects)
    except SettingsError as error:  # a settings file under the paths, read as its files were met
        usage_error(str(error))
    sys.exit(code)
