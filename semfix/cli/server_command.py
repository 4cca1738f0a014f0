"""`semfix server`: the language server, when its extra is installed."""

from __future__ import annotations

import click


@click.command()
def server() -> None:
    """Run semfix as a language server over stdio (for editors; see the README).

    Needs the `server` extra: pip install 'semfix[server]'.
    """
    try:
        from semfix.server.server import serve
    except ImportError as error:
        if error.name is None or error.name.split(".")[0] not in ("pygls", "lsprotocol", "cattrs", "attrs"):
            raise
        from semfix.cli.options import usage_error  # loads the run's modules: only to say this

        usage_error(f"semfix server needs pygls ({error}): install it with pip install 'semfix[server]'")
    serve()
