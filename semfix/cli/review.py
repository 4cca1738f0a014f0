"""`semfix review`: the findings on the lines a branch changed, with suggestions."""

from __future__ import annotations

import os
from pathlib import Path

import click

from semfix.cli.options import (
    QUIET,
    SILENT,
    RunOptions,
    common_options,
    finish,
    format_option,
    print_findings,
    usage_error,
)
from semfix.cli.report import review_summary
from semfix.cli.runner import run
from semfix.files import SOURCE_SUFFIXES
from semfix.findings import Finding
from semfix.git import BaseError, changed_lines, commit_of, default_base, resolve_base, toplevel


def _lines_of(finding: Finding) -> set[int]:
    """The lines a finding is the doing of: its own, and those of the evidence it follows from."""
    return {*range(finding.line, finding.end_line + 1), *finding.related}


@click.command()
@common_options
@click.option(
    "--base",
    default=None,
    help=(
        "Revision to compare with, or A...B for their merge base (default: the merge base with the trunk: "
        "the CI's target branch, origin/HEAD, main, master or init.defaultBranch; else HEAD, with a warning)."
    ),
)
@format_option("each finding with a diff of its suggestion")
@QUIET
@SILENT
def review(options: RunOptions, base: str | None, output_format: str, quiet: bool, silent: bool) -> None:
    """Review what a branch changed: findings on changed lines only, with suggestions.

    Files are those `git diff BASE` lists (committed, staged and unstaged changes). Nothing is
    written. A finding on an untouched line of a changed file is not the author's doing, so it
    is left out, unless the evidence it follows from (the assignment a read comes through, the
    allocation a kind is read from) is on a changed line; a notebook's lines are cell-relative,
    so a changed notebook keeps them all. Exit status: 1 if a finding counts, else 0; 2 on an
    error, and when what to compare with cannot be found (the CI's target branch missing, a
    shallow clone): never a pass.
    """
    if options.stdin:
        usage_error(
            "review reads the changed files from git, not stdin; use `semfix check -` for source on stdin",
            output_format,
        )
    here = Path.cwd()
    if toplevel(here) is None:  # one error, before the search for a trunk warns of a missing one
        usage_error(
            "not in a git work tree: review reads the changed lines from git; use `semfix check` for files outside one",
            output_format,
        )
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
        if named != "HEAD" and commit_of(here, base) == commit_of(here, "HEAD"):  # on the trunk: a push
            click.echo(
                f"semfix review: comparing with {named}, which is HEAD itself: only uncommitted changes are "
                "reviewed; pass --base to name the revision this work started from (on a push, the commit before it)",
                err=True,
            )
    except BaseError as error:  # never review against something else and pass
        usage_error(str(error), output_format)
    changed = changed_lines(here, base)
    if changed is None:
        usage_error(f"cannot compare with {named!r}: `git diff` failed", output_format)
    for missing in (p for p in options.paths if not os.path.lexists(p)):  # a typo never reviews nothing and passes
        usage_error(f"{missing}: no such file or folder", output_format)
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
        projects=options.projects,
        apply_fixes=False,
        write=False,
        force_exclude=True,
        jobs=options.jobs,
    )
    for result in outcome.files:
        lines = changed.get(Path(os.path.abspath(result.path)), set())
        if result.path.suffix != ".ipynb":
            result.findings = tuple(f for f in result.findings if not lines.isdisjoint(_lines_of(f)))
    if not silent:
        print_findings(outcome, output_format, options, with_diffs=True)
    finish(outcome, options, command="review", quiet=quiet, silent=silent, line=review_summary(outcome, base))
