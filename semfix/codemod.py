"""semfix as a libcst codemod command, for teams that run their codemods with `libcst.tool`.

    python -m libcst.tool codemod -x semfix.codemod.SemfixCommand --no-format PATH ...

The command hands each module's bytes to `fix_source`, so it applies the same rules with the
same proof (parse, compile, a second pass changes nothing, the tree differs only at declared
rewrites) and writes the same bytes as `semfix fix`. Settings come from the file's
`[tool.semfix]`, overridden by `--select` and `--unsafe-fixes`, as on semfix's own command line.

libcst's tool hands a command Python modules only (it gathers `.py` files and parses each
before the command sees it), so notebooks cannot reach this command; `semfix fix` and
`semfix.fix_notebook` fix them with the same engine and proof.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import libcst as cst
from libcst.codemod import CodemodCommand, CodemodContext, SkipFile

from semfix.api import fix_source
from semfix.messages import nothing_fixed
from semfix.selection import expand, load_settings
from semfix.settings import SettingsError, find_pyproject, for_file


class SemfixCommand(CodemodCommand):
    DESCRIPTION = "Pass semaphore Refs, not values read out of them, in JAX Pallas kernels (semfix)."

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument(
            "--select",
            action="append",
            default=None,
            type=_selector,
            help="rule codes or prefixes, as in `semfix fix --select`",
        )
        arg_parser.add_argument(
            "--unsafe-fixes", action="store_true", default=None, help="also apply fixes semfix cannot prove safe"
        )

    def __init__(
        self, context: CodemodContext, select: list[str] | None = None, unsafe_fixes: bool | None = None
    ) -> None:
        super().__init__(context)
        self.select = select
        self.unsafe_fixes = unsafe_fixes

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        """Fix the module with semfix's engine; findings it leaves in place become warnings."""
        located = [Path(self.context.filename)] if self.context.filename else []
        settings = load_settings(find_pyproject(located), select=self.select, unsafe_fixes=self.unsafe_fixes)
        settings = for_file(settings, located[0]) if located else settings
        result = fix_source(tree.bytes, settings=settings)
        for finding in result.findings:
            if not finding.applied:
                self.warn(f"{finding.line}:{finding.column}: {finding.rule} {finding.message}")
        if not result.applied:
            unsafe = 0 if settings.unsafe_fixes else sum(f.safety == "unsafe" for f in result.findings)
            raise SkipFile(nothing_fixed(len(result.findings), unsafe, "--unsafe-fixes"))
        return cst.parse_module(result.source)


def _selector(value: str) -> str:
    """Check a --select value while parsing, so a typo is one usage error, not a failure per file."""
    try:
        expand([value])
    except SettingsError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return value
