"""`semfix rules`: the rule table, one rule's docs, or JAX's errors and the rules that find each;
and `semfix rule CODE`, ruff's spelling of one rule's docs."""

from __future__ import annotations

import click


@click.command()
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


@click.command()
@click.argument("code", required=False)
@click.option("--all", "every", is_flag=True, help="Print every rule's docs.")
def rule(code: str | None, every: bool) -> None:
    """Print one rule's docs and examples (as `ruff rule CODE`), or with --all every rule's."""
    from semfix import rules as catalog

    if every:
        click.echo("\n".join(catalog.describe(found) for found in catalog.RULES.values()), nl=False)
    elif code is None:
        raise click.UsageError("give a rule's CODE, or --all (`semfix rules` lists them)")
    elif code.upper() in catalog.RULES:
        click.echo(catalog.describe(catalog.RULES[code.upper()]), nl=False)
    else:
        raise click.BadParameter(f"unknown rule {code!r} (see `semfix rules`)", param_hint="CODE")
