"""The `semfix` command line: argument parsing, printing, and what each command runs."""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import cached_property, wraps
from pathlib import Path
from typing import Any, NoReturn

import click

from semfix import __version__
from semfix.cli.files import (
    SOURCE_SUFFIXES,
    FileError,
    check_writable,
    decode_source,
    read_source,
    write_atomic,
)
from semfix.cli.git import (
    BaseError,
    changed_lines,
    default_base,
    resolve_base,
    toplevel,
)
from semfix.cli.report import (
    FORMATS,
    as_github,
    as_json,
    as_rdjson,
    as_sarif,
    finding_line,
    fix_mark,
    github_error,
    json_report,
    review_summary,
    suggestion_diff,
    summary,
    unified_diff,
)
from semfix.cli.runner import EXIT_ERROR, RunOutcome, dirty_refusals, run, run_stdin
from semfix.settings import (
    Settings,
    SettingsError,
    find_pyproject,
    load_excludes,
    load_settings,
)

_QUIET = click.option("-q", "--quiet", is_flag=True, help="Print no summary line.")
_STDIN = Path("-")
_STDIN_FILENAME = click.option(
    "--stdin-filename",
    type=click.Path(path_type=Path),
    default=None,
    help="With PATH '-': the name of the file on stdin (for settings, excludes, messages and notebooks).",
)


def _format(text_means: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help=f"How to print findings: text ({text_means}), json, github, sarif, rdjson.",
    )


@dataclass(frozen=True)
class RunOptions:
    """What every file-processing command shares: the rules, the file set, the parallelism."""

    paths: tuple[Path, ...]
    settings: Settings
    excludes: tuple[str, ...]
    force_exclude: bool
    jobs: int | None  # None: the number of cores
    report: Path | None
    stdin_name: Path  # with PATH '-': the name the source on stdin goes by

    @property
    def stdin(self) -> bool:
        return self.paths == (_STDIN,)

    @cached_property
    def stdin_data(self) -> bytes:
        return sys.stdin.buffer.read()

    def run(self, *, apply_fixes: bool, write: bool = False, allow_dirty: bool = True) -> RunOutcome:
        """The run over PATHS, or over the source on stdin (then nothing is written)."""
        if self.stdin:
            return run_stdin(
                self.stdin_name,
                self.stdin_data,
                settings=self.settings,
                apply_fixes=apply_fixes,
                excludes=self.excludes,
                force_exclude=self.force_exclude,
            )
        return run(
            self.paths,
            settings=self.settings,
            apply_fixes=apply_fixes,
            write=write,
            jobs=self.jobs,
            excludes=self.excludes,
            force_exclude=self.force_exclude,
            allow_dirty=allow_dirty,
            progress=sys.stderr.isatty(),
        )

    def text(self, path: Path) -> str:
        """A file's text as Python decodes it (for '-', the source on stdin); '' if unreadable."""
        with suppress(FileError):
            return decode_source(self.stdin_data if self.stdin else read_source(path))
        return ""


def _common_options(command: Callable[..., Any]) -> Callable[..., Any]:
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
            "Count fixes that may change meaning (a view of what is not shown to be a Ref) as fixable: "
            "`fix` then applies them."
        ),
    )
    @click.option(
        "--config",
        "config_path",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="pyproject.toml to read [tool.semfix] from (default: found from PATHS).",
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
        help="Worker processes (default: the number of cores).",
    )
    @click.option(
        "--report",
        "report_path",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write a JSON report of every change and finding to this file.",
    )
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
        if _STDIN in paths and len(paths) > 1:
            _usage_error("'-' (source on stdin) cannot be given with other paths")
        stdin_name = kwargs.pop("stdin_filename", None)
        located = (stdin_name,) if paths == (_STDIN,) and stdin_name else paths  # where settings live
        try:
            pyproject = config_path or find_pyproject(located)
            settings = load_settings(
                pyproject, select=select or None, extend_select=extend_select, ignore=ignore, unsafe_fixes=unsafe_fixes
            )
            excludes = (*load_excludes(pyproject), *exclude)
            if report_path is not None:
                check_writable(report_path)
        except SettingsError as error:
            _usage_error(str(error))
        except FileError as error:
            _usage_error(f"{report_path}: cannot write the report: {error}")
        options = RunOptions(paths, settings, excludes, force_exclude, jobs, report_path, stdin_name or _STDIN)
        return command(options=options, **kwargs)

    return wrapper


def _usage_error(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _finish(outcome: RunOutcome, options: RunOptions, *, command: str, quiet: bool, line: str = "") -> None:
    """Print the errors, write the report, print the summary `line` (by default the usual one), exit."""
    for failed in outcome.errors:
        click.echo(f"error: {failed.path}: {failed.error}", err=True)
    if options.report is not None:
        try:
            options.report.write_text(json_report(outcome, command=command), encoding="utf-8")
        except OSError as error:
            _usage_error(f"{options.report}: cannot write the report: {error.strerror}")
    if not quiet:
        click.echo(
            line or summary(outcome, unsafe_fixes=options.settings.unsafe_fixes, check=command == "check"), err=True
        )
    sys.exit(outcome.exit_code)


class _Group(click.Group):
    """Turns SIGTERM into an interrupt, and says what an interrupt leaves behind."""

    def invoke(self, ctx: click.Context) -> Any:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt
        # Parsing makes millions of short-lived, acyclic nodes; collecting after every 700
        # allocations costs a tenth of a run and frees nothing.
        gc.set_threshold(100_000, 50, 100)
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("error: interrupted: every file is either as it was or fully rewritten", err=True)
            ctx.exit(130)


def entry() -> None:
    """The `semfix` command and `python -m semfix`.

    Once a run is over and its output flushed, the process ends without tearing the
    interpreter down, which would free every object one by one: up to a tenth of a short
    run. Every file is written and every worker and thread joined before this point.
    """
    try:
        main(prog_name="semfix")
        code: int = 0
    except SystemExit as done:
        if isinstance(done.code, str):  # `sys.exit(message)` prints the message
            click.echo(done.code, err=True)
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    with suppress(BrokenPipeError, ValueError):  # a reader that went away, or a closed stream
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="semfix")
def main() -> None:
    """Pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels."""


@main.command()
@_common_options
@click.option("--diff", is_flag=True, help="Print unified diffs instead of writing files.")
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file would change.")
@click.option("--allow-dirty", is_flag=True, help="Rewrite files even if they have unstaged changes in git.")
@_STDIN_FILENAME
@_QUIET
def fix(options: RunOptions, diff: bool, check_only: bool, allow_dirty: bool, quiet: bool) -> None:
    """Rewrite semaphore arguments in place under PATHS (default: the current folder).

    Each finding is printed, [fixed] marking the fixes written. In a git work tree, files
    with unstaged edits or untracked files are not rewritten (unless --allow-dirty), so that
    semfix's changes can be reviewed on their own.

    Exit status: 0 nothing to fix, 1 something was (or would be) fixed or found,
    2 a file could not be processed.
    """
    dry = diff or check_only
    outcome = options.run(apply_fixes=True, write=not dry, allow_dirty=allow_dirty)
    if options.stdin:
        outcome.written = not dry  # the fixed source is the output
    for result in outcome.files:
        if diff and result.changed:
            sys.stdout.buffer.write(unified_diff(result.path, result.old, result.new))
        elif options.stdin and not dry:  # on an error the source goes back out unchanged: a pipe never loses it
            sys.stdout.buffer.write(result.new if result.changed else options.stdin_data)
        sys.stdout.flush()
        for finding in result.findings:
            fixed = finding.applied and outcome.written and result.error is None
            line = finding_line(
                result.path, finding, fix_mark(finding, fixed=fixed, unsafe_fixes=options.settings.unsafe_fixes)
            )
            if not (diff or options.stdin):
                click.echo(line)
            elif options.stdin or not (finding.applied and result.changed):  # a diff shows the applied ones
                click.echo(line, err=True)
    command = "fix --diff" if diff else "fix --check" if check_only else "fix"
    _finish(outcome, options, command=command, quiet=quiet or options.stdin)


@main.command()
@_common_options
@_format("one line per finding")
@_STDIN_FILENAME
@_QUIET
def check(options: RunOptions, output_format: str, quiet: bool) -> None:
    """List problems under PATHS without changing anything ([*]: `semfix fix` can fix it).

    PATH '-' reads the source from stdin. Exit status: 0 nothing found, 1 something found,
    2 a file could not be processed.
    """
    outcome = options.run(apply_fixes=False)
    _print_findings(outcome, output_format, options, with_diffs=False)
    _finish(outcome, options, command="check", quiet=quiet)


@main.command()
@_common_options
@click.option(
    "--base",
    default=None,
    help=(
        "Revision to compare with, or A...B for their merge base (default: the merge base with the trunk: "
        "the CI's target branch, origin/HEAD, main, master or init.defaultBranch; else HEAD, with a warning)."
    ),
)
@_format("each finding with a diff of its suggestion")
@_QUIET
def review(options: RunOptions, base: str | None, output_format: str, quiet: bool) -> None:
    """Review what a branch changed: findings on changed lines only, with suggestions.

    Files are those `git diff BASE` lists (committed, staged and unstaged changes). Nothing is
    written. A finding on an untouched line of a changed file is not the author's doing, so it
    is left out; a notebook's lines are cell-relative, so a changed notebook keeps them all.
    Exit status: 1 if a finding touches a changed line, else 0; 2 on an error, and when what to
    compare with cannot be found (the CI's target branch missing, a shallow clone): never a pass.
    """
    if options.stdin:
        _usage_error("review reads the changed files from git, not stdin; use `semfix check -` for source on stdin")
    here = Path.cwd()
    try:
        named = base or default_base(here)
        if named is None:
            named = "HEAD"
            click.echo(
                "semfix review: no trunk found (the CI's target branch, origin/HEAD, main, master or "
                "init.defaultBranch): comparing with HEAD, so only uncommitted changes are reviewed; "
                "pass --base to name the branch this one started from",
                err=True,
            )
        base = resolve_base(here, named)
    except BaseError as error:  # never review against something else and pass
        if output_format == "github":
            click.echo(github_error(str(error), "semfix review"), nl=False)
        _usage_error(str(error))
    changed = changed_lines(here, base)
    if changed is None:
        _usage_error(f"cannot compare with {named!r}: `git diff` failed")
    roots = [Path(os.path.abspath(p)) for p in options.paths]
    selected = [
        Path(os.path.relpath(path, here))
        for path in sorted(changed)
        if path.suffix in SOURCE_SUFFIXES
        and path.exists()
        and any(path == root or root in path.parents for root in roots)
    ]
    outcome = run(
        selected,
        settings=options.settings,
        apply_fixes=False,
        write=False,
        excludes=options.excludes,
        force_exclude=True,
        jobs=options.jobs,
    )
    for result in outcome.files:
        lines = changed.get(Path(os.path.abspath(result.path)), set())
        if result.path.suffix != ".ipynb":
            result.findings = tuple(f for f in result.findings if not lines.isdisjoint(range(f.line, f.end_line + 1)))
    _print_findings(outcome, output_format, options, with_diffs=True)
    _finish(outcome, options, command="review", quiet=quiet, line=review_summary(outcome, base))


def _print_findings(outcome: RunOutcome, output_format: str, options: RunOptions, *, with_diffs: bool) -> None:
    findings = outcome.findings
    errors = [(failed.path, failed.error or "") for failed in outcome.errors]  # also on stderr, by _finish
    if output_format == "json":
        click.echo(as_json(findings, errors), nl=False)
    elif output_format in ("github", "sarif"):  # paths from the repository root, as GitHub reads them
        root = toplevel(Path.cwd()) or Path.cwd()
        click.echo((as_github if output_format == "github" else as_sarif)(findings, root, errors), nl=False)
    elif output_format == "rdjson":
        click.echo(as_rdjson(findings, options.text, errors), nl=False)
    else:
        texts: dict[Path, str] = {}
        for path, finding in findings:
            click.echo(
                finding_line(path, finding, fix_mark(finding, fixed=False, unsafe_fixes=options.settings.unsafe_fixes))
            )
            if with_diffs:
                if path not in texts:
                    texts[path] = options.text(path)
                click.echo(suggestion_diff(path, texts[path], finding, color=sys.stdout.isatty()), nl=False)


@main.command()
@click.argument("log", type=click.File("r"), default="-")
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=Path("."),
    help=(
        "Where to look for files named in the traceback, and the only folder written to (default: the current folder)."
    ),
)
@click.option("--fix", "apply", is_flag=True, help="Apply the fix (atomically, with the usual checks).")
@click.option(
    "--allow-dirty", is_flag=True, help="With --fix: rewrite files even if they have unstaged changes in git."
)
def explain(log: Any, root: Path, apply: bool, allow_dirty: bool) -> None:
    """Read a JAX traceback (a file, or stdin) and explain and fix the semaphore argument behind it.

    A log is untrusted text: only files under --root are rewritten, and, as with `fix`, not
    those with unstaged edits in git (unless --allow-dirty). Diffs name files relative to --root.

    Exit status: 0 the cause was found and can be (or was) fixed, 1 a known error that semfix
    cannot fix (it says why), 2 no known error in the text, or a file it could not write.
    """
    from semfix.api import parse_log
    from semfix.cli.explain import explain as explain_failure
    from semfix.cli.explain import merged_fixes

    failures = [explain_failure(failure, root) for failure in parse_log(log.read())]
    known = [item for item in failures if item.kind is not None]
    if not known:
        _usage_error("no JAX semaphore or DMA error found in the text")
    for item in known:
        click.echo(f"{item.failure.message}")
        for line in item.lines:
            click.echo(f"  {line}")
    fixes = merged_fixes(known)
    unproven = [fix for fix in fixes if fix.error is not None]
    for fix in unproven:
        click.echo(f"Cannot fix {fix.name}: {fix.error}.")
    fixes = [fix for fix in fixes if fix.error is None]
    refused = dirty_refusals([fix.path for fix in fixes]) if apply and not allow_dirty else {}
    failed = False
    for fix in fixes:
        sys.stdout.buffer.write(unified_diff(fix.name, fix.old, fix.new))
        sys.stdout.flush()
        if not apply:
            continue
        try:
            if fix.path in refused:
                raise FileError(refused[fix.path])
            write_atomic(fix.path, fix.new, expected=fix.old)
            click.echo(f"Fixed {fix.name}.")
        except FileError as error:
            click.echo(f"error: {fix.name}: {error}", err=True)
            failed = True
    settled = not unproven and all(item.blame.fixed for item in known)
    sys.exit(EXIT_ERROR if failed else 0 if settled else 1)


@main.command()
@click.argument("code", required=False)
@click.option("--errors", is_flag=True, help="Print JAX's errors, the rules that find each, what explain does.")
@click.option("--markdown", is_flag=True, help="Print the rule table as the README holds it.")
def rules(code: str | None, errors: bool, markdown: bool) -> None:
    """List every rule (code, name, fix safety, default, summary), or one rule's docs and examples."""
    from semfix import rules as catalog

    if errors:
        from semfix.api import errors_markdown as errors_table

        click.echo(errors_table(), nl=False)
    elif markdown:
        click.echo(catalog.markdown(), nl=False)
    elif code is None:
        click.echo(catalog.table(), nl=False)
    elif code.upper() in catalog.RULES:
        click.echo(catalog.describe(catalog.RULES[code.upper()]), nl=False)
    else:
        raise click.BadParameter(f"unknown rule {code!r} (see `semfix rules`)", param_hint="CODE")


@main.command()
def server() -> None:
    """Run semfix as a language server over stdio (for editors; see the README).

    Needs the `server` extra: pip install 'semfix[server]'.
    """
    try:
        from semfix.cli.server import serve
    except ImportError as error:
        if error.name is None or error.name.split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        _usage_error(f"semfix server needs pygls ({error}): install it with pip install 'semfix[server]'")
    serve()
