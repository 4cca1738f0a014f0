"""Each engine's proof refuses new source that parses but that CPython will not compile."""

from __future__ import annotations

import ast

import pytest

from semfix import fix_source
from semfix.equivalence import check_rewrite
from semfix.errors import SafetyError, SourceError
from semfix.findings import Finding
from semfix.quick import QuickSafetyError, _prove, _Text
from semfix.settings import Settings


def _sem102(line: int, column: int) -> Finding:
    return Finding("SEM102", line, column, line, column + 3, "dec is value", "dec", "value", True)


def test_libcst_proof_rejects_a_repeated_keyword() -> None:
    old = "pl.semaphore_wait(sem, value=1, dec=2)\n"
    new = "pl.semaphore_wait(sem, value=1, value=2)\n"
    ast.parse(new)  # it parses: only compiling shows it is invalid
    with pytest.raises(SafetyError, match="keyword argument repeated"):
        check_rewrite(old, new, [_sem102(1, 33)])


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("f(a=1, b=2)\n", "f(a=1, a=2)\n", "keyword argument repeated"),
        ("def f():\n    pass\nreturn_(1)\n", "def f():\n    pass\nreturn (1)\n", "'return' outside function"),
    ],
)
def test_quick_proof_rejects_source_that_does_not_compile(old: str, new: str, error: str) -> None:
    start = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    edits = [(start, start + 1, new[start])]
    expected = ast.parse(new)  # the declared tree, so the statement-by-statement proof passes
    with pytest.raises(QuickSafetyError, match=error):
        _prove(expected, _Text(old), new, edits, "utf-8", Settings(), settled=True)


def test_a_file_that_never_compiled_is_not_fixed() -> None:
    """Not valid Python before the fix: named like a syntax error, as ruff does, and left alone."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    pl.semaphore_signal(sem[...], 1)\n\n\nreturn\n"
    )
    with pytest.raises(SourceError, match="'return' outside function"):
        fix_source(source)
    assert [f.rule for f in fix_source(source, apply_fixes=False).findings] == ["SEM001"]
