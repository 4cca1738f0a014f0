"""What the file-processing commands share: their options, the run they make, and how it ends."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import redirect_stdout, suppress
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, NoReturn

import click

from semfix.cache import FOLDER, Cache
from semfix.cli.projects import Projects
from semfix.cli.report import (
    FORMATS,
    TEXT_FORMATS,
    colour,
    finding_line,
    fix_mark,
    for_ci,
    full_finding,
    shown,
    statistics_rows,
    suggestion_diff,
    summary,
)
from semfix.cli.report import statistics as stats_text
from semfix.cli.runner import EXIT_CLEAN, EXIT_ERROR, RunOutcome, run, run_stdin
from semfix.files import FileError, check_writable, decode_source, read_source
from semfix.findings import Finding
from semfix.git import toplevel
from semfix.settings import (
    Settings,
    SettingsError,
    check_config,
    find_pyproject,
)

QUIET = click.option("-q", "--quiet", is_flag=True, help="Print the findings and errors but no summary (as ruff's -q).")
SILENT = click.option("--silent", is_flag=True, help="Print nothing: the exit status alone tells.")
STATISTICS = click.option("--statistics", is_flag=True, help="Print counts by rule (as ruff) instead of each finding.")
STDIN = Path("-")
STDIN_FILENAME = click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path),
    default=None,
    help="With PATH '-': the name of the file on stdin (for settings, excludes, messages and notebooks).",
)


def format_option(text_means: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--output-format`, and `-o/--output-file`, where what it prints goes instead of stdout."""
    output_format = click.option(
        "--output-format",
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help=f"How to print findings: text or concise ({text_means}), full (with the source lines, a caret "
        "and the suggested fix, as ruff's), json, github, sarif, rdjson.",
    )
    output_file = click.option(
        "-o",
        "--output-file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Write the findings (as --output-format prints them) to this file instead of stdout, as ruff's -o.",
    )
    return lambda command: output_format(output_file(command))


class RunOptions:
    """What every file-processing command shares: the rules, the file set, the parallelism."""

    def __init__(
        self,
        paths: tuple[Path, ...],
        settings: Settings,  # those of the settings file above the paths' common folder
        projects: Projects,  # each file's own
        jobs: int | None,  # None: the number of cores
        report: Path | None,
        stdin_name: Path,  # with PATH '-': the name the source on stdin goes by
        exit_zero: bool = False,  # findings do not fail the run; errors still do
        output_file: Path | None = None,  # -o: where the findings go instead of stdout
        cache: Cache | None = None,  # where results are kept between runs (--no-cache: None)
    ) -> None:
        self.paths, self.settings, self.projects, self.jobs, self.report = paths, settings, projects, jobs, report
        self.stdin_name, self.exit_zero, self.output_file, self.cache = stdin_name, exit_zero, output_file, cache

    @property
    def stdin(self) -> bool:
        return self.paths == (STDIN,)

    @cached_property
    def stdin_data(self) -> bytes:
        return sys.stdin.buffer.read()

    def run(
        self, *, apply_fixes: bool, write: bool = False, allow_dirty: bool = True, shown: bool = True
    ) -> RunOutcome:
        """The run over PATHS, or over the source on stdin (then nothing is written). `shown`:
        whether the output is for people (not -q, --silent, nor a machine format), and so may
        have a progress bar on a terminal."""
        try:
            if self.stdin:
                return run_stdin(self.stdin_name, self.stdin_data, projects=self.projects, apply_fixes=apply_fixes)
            return run(
                self.paths,
                projects=self.projects,
                apply_fixes=apply_fixes,
                write=write,
                jobs=self.jobs,
                allow_dirty=allow_dirty,
                progress=shown and sys.stderr.isatty(),
                cache=self.cache,
            )
        except SettingsError as error:  # a settings file under the paths, read as its files were met
            usage_error(str(error))

    def text(self, path: Path) -> str:
        """A file's text as Python decodes it (for '-', the source on stdin); '' if unreadable."""
        with suppress(FileError):
            return decode_source(self.stdin_data if self.stdin else read_source(path))
        return ""


def common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Rule selection, file selection and parallelism, gathered into `options`."""

    @click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
    @click.option(
        "--select",
        multiple=True,
        help="Rules to run instead of the defaults: codes or prefixes (`semfix rules` lists them), comma-separated.",
    )
    @click.option("--extend-select", multiple=True, help="Rules to run on top of the selection.")
    @click.option("--ignore", multiple=True, help="Rules not to run.")
    @click.option(
        "--unsafe-fixes/--no-unsafe-fixes",
        default=None,
        help=(
            "Count fixes that may change meaning (a view of what is not shown to be a Ref) as fixable; "
            "only a fix (`fix`, `check --fix`) with this option applies them."
        ),
    )
    @click.option(
        "--target-jax",
        default=None,
        help="The oldest JAX the code must run on (e.g. 0.7): a migration renames only what means the same "
        "from it on. Default: [tool.semfix] target-jax, else the `jax` requirement's lower bound in [project] "
        "dependencies, else the oldest JAX semfix supports.",
    )
    @click.option(
        "--config",
        "config_path",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="The settings file: semfix.toml (keys at the top, as ruff.toml), or pyproject.toml's [tool.semfix] "
        "(default: the nearest .semfix.toml, semfix.toml or pyproject.toml with [tool.semfix] above PATHS).",
    )
    @click.option(
        "--exclude", multiple=True, help="Glob of files or folders to skip (repeatable); adds to extend-exclude."
    )
    @click.option("--force-exclude", is_flag=True, help="Apply the excludes to files named on the command line too.")
    @click.option(
        "-j",
        "--jobs",
        type=click.IntRange(min=1),
        default=None,
        help="Worker processes to start (default: as many as the work pays for, up to the cores).",
    )
    @click.option(
        "--exit-zero", is_flag=True, help="Exit 0 even when problems are found or fixed (errors still exit 2)."
    )
    @click.option(
        "-n",
        "--no-cache",
        is_flag=True,
        envvar="SEMFIX_NO_CACHE",
        help="Analyse every file again, not reading or writing .semfix_cache (beside the settings file, else in "
        "the working directory; SEMFIX_CACHE_DIR moves it).",
    )
    @click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write a JSON report of every finding (and, from `fix`, every change) to this file.",
    )
    @wraps(command)
    def wrapper(
        paths: tuple[Path, ...],
        select: tuple[str, ...],
        extend_select: tuple[str, ...],
        ignore: tuple[str, ...],
        unsafe_fixes: bool | None,
        target_jax: str | None,
        config_path: Path | None,
        exclude: tuple[str, ...],
        force_exclude: bool,
        jobs: int | None,
        report_path: Path | None,
        exit_zero: bool,
        no_cache: bool,
        **kwargs: Any,
    ) -> Any:
        output_format = kwargs.get("output_format", "text")
        stdin_name = kwargs.pop("stdin_filename", None)
        if stdin_name is not None:  # as in ruff, --stdin-filename always reads stdin, and writes no file
            for ignored in (p for p in paths if p != STDIN):
                click.echo(
                    f"warning: ignoring {shown(ignored)} in favor of standard input (--stdin-filename)", err=True
                )
            paths = (STDIN,)
        paths = paths or (Path("."),)
        if STDIN in paths and len(paths) > 1:
            usage_error("'-' (source on stdin) cannot be given with other paths", output_format)
        if kwargs.get("statistics") and (kwargs.get("diff") or output_format not in (*TEXT_FORMATS, "json")):
            with_what = "--diff" if kwargs.get("diff") else f"--output-format {output_format}"
            usage_error(f"--statistics cannot be used with {with_what} (as in ruff): it prints text or json")
        output_file = kwargs.pop("output_file", None)
        located = (stdin_name,) if paths == (STDIN,) and stdin_name else paths  # where settings live
        writing = "report"  # which file an error in writing is about
        projects = Projects(
            select, extend_select, ignore, unsafe_fixes, target_jax, exclude, force_exclude, config_path
        )
        try:
            if config_path is not None:
                check_config(config_path)
            # The settings file above the paths' common folder: errors in it stop the run before
            # it starts; each file then takes its own nearest one (`Projects.of`).
            project = projects.load(config_path or find_pyproject(located))
            if report_path is not None:
                check_writable(report_path)
            if output_file is not None:  # its folders are made, as ruff makes them
                writing = "output"
                output_file.parent.mkdir(parents=True, exist_ok=True)
                check_writable(output_file)
        except SettingsError as error:
            usage_error(str(error), output_format)
        except (FileError, OSError) as error:
            path = output_file if writing == "output" else report_path
            usage_error(
                f"{path}: cannot write the {writing}: {getattr(error, 'strerror', None) or error}", output_format
            )
        options = RunOptions(
            paths,
            project.settings,
            projects,
            jobs,
            report_path,
            stdin_name or STDIN,
            exit_zero=exit_zero,
            output_file=output_file,
            cache=None if no_cache else Cache(project.source.parent / FOLDER if project.source else None),
        )
        return command(options=options, **kwargs)

    return wrapper


def for_people(output_format: str, *, quiet: bool, silent: bool) -> bool:
    """Whether a run's output is read by people, who may be shown a progress bar: not under -q,
    --silent or a machine format, where anything drawn would end up in the output."""
    return output_format in TEXT_FORMATS and not (quiet or silent)


def usage_error(message: str, output_format: str = "text") -> NoReturn:
    """Stop the run (exit 2) before it checked anything: the message on stderr, and under a
    machine `output_format` on stdout too, as that format's document, so a CI reading only
    stdout sees the error rather than an empty (or unparsable) output. (Errors click finds
    while parsing the options come before any format is known: stderr alone, as in ruff.)"""
    if output_format not in TEXT_FORMATS:
        from semfix.cli.formats import run_error

        title = f"semfix {click.get_current_context().info_name}"
        click.echo(run_error(message, output_format, title=title), nl=False)
    click.echo(f"error: {for_ci(message)}", err=True)
    sys.exit(EXIT_ERROR)


def finish(
    outcome: RunOutcome,
    options: RunOptions,
    *,
    command: str,
    quiet: bool,
    line: str = "",
    code: int | None = None,
    silent: bool = False,
) -> None:
    """Print the errors, write the report, print the summary `line` (by default the usual one), exit
    with `code` (by default the outcome's), or with 0 under --exit-zero unless a file had an error."""
    for note in [] if silent else outcome.notes:
        click.echo(f"warning: {note}", err=True)
    for failed in [] if silent else outcome.warnings:
        click.echo(f"warning: {shown(failed.path)}: {for_ci(failed.error or '')}", err=True)
    for failed in [] if silent else outcome.errors:
        click.echo(f"error: {shown(failed.path)}: {for_ci(failed.error or '')}", err=True)
    if options.report is not None:
        from semfix.cli.formats import json_report

        try:
            options.report.write_text(json_report(outcome, command=command), encoding="utf-8")
        except OSError as error:
            usage_error(f"{options.report}: cannot write the report: {error.strerror}")
    if not (quiet or silent):
        click.echo(
            line or summary(outcome, unsafe_fixes=options.settings.unsafe_fixes, check=command == "check"), err=True
        )
    code = outcome.exit_code if code is None else code
    sys.exit(EXIT_CLEAN if options.exit_zero and code != EXIT_ERROR else code)


def print_findings(
    outcome: RunOutcome,
    output_format: str,
    options: RunOptions,
    *,
    with_diffs: bool,
    statistics: bool = False,
    mark: Callable[[Path, Finding], str] | None = None,
) -> None:
    """The findings on stdout (or -o's file) in `output_format`, or (`statistics`) their counts
    by rule. `mark`: the text format's `[fixed]`/`[*]` (by default what `fix` would apply)."""
    try:
        if options.output_file is None:
            _print_findings(outcome, output_format, options, with_diffs=with_diffs, statistics=statistics, mark=mark)
            sys.stdout.flush()  # a full disk is found here, not after the summary says all went well
            return
        with options.output_file.open("w", encoding="utf-8") as out, redirect_stdout(out):
            _print_findings(outcome, output_format, options, with_diffs=with_diffs, statistics=statistics, mark=mark)
    except BrokenPipeError:
        raise  # a reader that went away (`| head`): as any command, not an error of semfix's
    except OSError as error:  # one line and 2, as a report that cannot be written
        where = options.output_file or "standard output"
        click.echo(f"error: {for_ci(str(where))}: cannot write the findings: {error.strerror or error}", err=True)
        with suppress(OSError, ValueError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - what is left unwritten is dropped
        sys.exit(EXIT_ERROR)


def _print_findings(
    outcome: RunOutcome,
    output_format: str,
    options: RunOptions,
    *,
    with_diffs: bool,
    statistics: bool,
    mark: Callable[[Path, Finding], str] | None,
) -> None:
    findings = outcome.findings
    if statistics:  # as ruff, what is left: not what `fix` wrote
        left = (f for p, f in findings if not (mark and mark(p, f) == "[fixed]"))
        if output_format == "json":
            import json

            rows = statistics_rows(left, unsafe_fixes=options.settings.unsafe_fixes)
            click.echo(json.dumps(rows, indent=2))
        else:
            click.echo(stats_text(left, unsafe_fixes=options.settings.unsafe_fixes), nl=False)
        return
    errors = [(failed.path, failed.error or "") for failed in outcome.errors]  # also on stderr, by finish
    if output_format not in TEXT_FORMATS:  # each machine format is loaded only when asked for
        from semfix.cli.formats import as_github, as_json, as_rdjson, as_sarif
    if output_format == "json":
        click.echo(as_json(findings, errors), nl=False)
    elif output_format in ("github", "sarif"):  # paths from the repository root, as GitHub reads them
        root = toplevel(Path.cwd()) or Path.cwd()
        made = (as_github if output_format == "github" else as_sarif)(findings, root, errors, options.text)
        click.echo(made, nl=False)
    elif output_format == "rdjson":
        click.echo(as_rdjson(findings, options.text, errors), nl=False)
    else:
        texts: dict[Path, str] = {}
        unsafe = options.settings.unsafe_fixes
        color = colour(sys.stdout)
        for path, finding in findings:
            shown = mark(path, finding) if mark else fix_mark(finding, fixed=False, unsafe_fixes=unsafe)
            if (with_diffs or output_format == "full") and path not in texts:
                texts[path] = options.text(path)
            if output_format == "full":
                click.echo(full_finding(path, texts[path], finding, shown, color=color), nl=False)
                continue
            click.echo(finding_line(path, finding, shown))
            if with_diffs:
                click.echo(suggestion_diff(path, texts[path], finding, color=color), nl=False)
