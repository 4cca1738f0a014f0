"""The `semfix` command line: the group and its entry point.

Each command lives in its own module (fix_check.py: `fix` and `check`; review.py,
explain_command.py, rules_command.py, server_command.py), loaded only when it is run or its
help is shown: a one-file check does not pay for the server, explain or the output formats
it does not print (tests/test_startup.py holds this).
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from contextlib import suppress
from importlib import import_module
from typing import Any, NoReturn

try:  # signal's C module: `signal` makes an enum of every signal at import, 3.4M instructions
    import _signal as signal  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - a Python without it
    import signal
# Parsing makes millions of short-lived, acyclic nodes; collecting after every 700 allocations
# costs a tenth of a run and frees nothing. Set before click and the commands load: the
# collections while they load were 5M instructions of a one-file check's start-up.
gc.set_threshold(100_000, 50, 100)

try:
    import click

    from semfix import __version__
except KeyboardInterrupt:  # Ctrl-C while the command line loads: the same line and status as later
    os.write(2, b"error: interrupted\n")
    os._exit(130)

#: Each command, and the module that defines it (as `<module>.<function>`).
COMMANDS = {
    "check": "semfix.cli.fix_check.check",
    "explain": "semfix.cli.explain_command.explain",
    "fix": "semfix.cli.fix_check.fix",
    "review": "semfix.cli.review.review",
    "rule": "semfix.cli.rules_command.rule",
    "rules": "semfix.cli.rules_command.rules",
    "server": "semfix.cli.server_command.server",
}


class _Group(click.Group):
    """Loads each command when asked for it (click's lazy group), turns SIGTERM into an
    interrupt, and says what an interrupt leaves behind."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, name = COMMANDS[cmd_name].rpartition(".")
        command: click.Command = getattr(import_module(module), name)
        return command

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        """Parsing the options, as what follows it, stops on Ctrl-C with 130 (click would say
        `Aborted!` and exit 1, the status of a run that found something)."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            _interrupted()

    def invoke(self, ctx: click.Context) -> Any:
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # raises KeyboardInterrupt
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _interrupted()


def _interrupted() -> NoReturn:
    click.echo("error: interrupted: every file is either as it was or fully rewritten", err=True)
    sys.exit(130)


#: What a write to a full or failing disk raises: ENOSPC, EDQUOT, EFBIG, EIO.
_FULL = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EIO") if hasattr(errno, name))


def _cannot_write(error: OSError) -> int:
    """One line for output that could not be written, and the status of a run that failed."""
    with suppress(OSError, ValueError):
        sys.stderr.write(f"error: standard output: cannot write: {error.strerror or error}\n")
    return 2


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
    except OSError as error:  # standard output on a full disk (`--diff`, `fix -`, `rules`): no traceback
        if error.errno not in _FULL:
            raise
        code = _cannot_write(error)
    except KeyboardInterrupt:  # between click's parsing and the command, or after it
        click.echo("error: interrupted: every file is either as it was or fully rewritten", err=True)
        code = 130
    try:
        sys.stdout.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away, or a closed stream
        pass
    except OSError as error:  # a full disk: the findings are lost, so the run failed
        code = _cannot_write(error)
    with suppress(OSError, ValueError):
        sys.stderr.flush()
    os._exit(code)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="semfix")
def main() -> None:
    """Pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels."""
