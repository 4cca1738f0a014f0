"""`semfix explain`: print what a JAX traceback is about, and its proven fixes (or write them)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from semfix.cli.options import usage_error
from semfix.cli.report import for_ci, shown, unified_diff
from semfix.cli.runner import EXIT_ERROR, dirty_refusals
from semfix.files import FileError, write_atomic


@click.command()
@click.argument("log", type=click.File("rb"), default="-")
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
    from semfix.api import decode_log, distinct_failures, explain_failure, left_after, merged_fixes, parse_log

    counted = [
        (explain_failure(failure, root), count)
        for failure, count in distinct_failures(parse_log(decode_log(log.read())))
    ]
    known = [item for item, _ in counted if item.kind is not None]
    if not known:
        usage_error("no JAX semaphore or DMA error found in the text")
    for item, count in counted:
        if item.kind is None:
            continue
        click.echo(item.failure.message + (f" (the log holds it {count} times)" if count > 1 else ""))
        for line in item.lines:
            click.echo(f"  {line}")
    fixes = merged_fixes(known)
    unproven = [fix for fix in fixes if fix.error is not None]
    for fix in unproven:
        click.echo(f"Cannot fix {shown(fix.name)}: {fix.error}.")
    fixes = [fix for fix in fixes if fix.error is None]
    refused = dirty_refusals([fix.path for fix in fixes]) if apply and not allow_dirty else {}
    failed = False
    for fix in fixes:
        for line in fix.then:
            click.echo(f"  {line}")
        sys.stdout.buffer.write(unified_diff(fix.name, fix.old, fix.new))
        sys.stdout.flush()
        try:
            if apply and fix.path in refused:
                raise FileError(refused[fix.path])
            if apply:
                write_atomic(fix.path, fix.new, expected=fix.old)
                click.echo(f"Fixed {shown(fix.name)}.")
        except FileError as error:
            click.echo(f"error: {shown(fix.name)}: {for_ci(str(error))}", err=True)
            failed = True
            continue
        for line in left_after(fix):
            click.echo(line)
    settled = not unproven and all(item.blame.fixed for item in known)
    sys.exit(EXIT_ERROR if failed else 0 if settled else 1)
