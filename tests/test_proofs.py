"""Each engine's proof refuses new source that parses but that CPython will not compile."""

from __future__ import annotations

import ast

import pytest

from semfix import fix_source
from semfix.errors import SafetyError
from semfix.engine.nodes import Text
from semfix.engine.proof import prove
from semfix.equivalence import check_rewrite
from semfix.errors import SafetyError, SourceError
from semfix.findings import Finding
from semfix.imports import ImportChanges
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
def test_proof_rejects_source_that_does_not_compile(old: str, new: str, error: str) -> None:
    start = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    edits = [(start, start + 1, new[start])]
    expected = ast.parse(new)  # the declared tree, so the statement-by-statement proof passes
    with pytest.raises(SafetyError, match=error):
        prove(expected, Text(old), new, edits, "utf-8", Settings(), settled=True)


def test_a_file_that_never_compiled_is_not_fixed() -> None:
    """Not valid Python before the fix: named like a syntax error, as ruff does, and left alone."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    pl.semaphore_signal(sem[...], 1)\n\n\nreturn\n"
    )
    with pytest.raises(SourceError, match="'return' outside function"):
        fix_source(source)
    assert [f.rule for f in fix_source(source, apply_fixes=False).findings] == ["SEM001"]


def _sem101(line: int) -> Finding:
    return Finding("SEM101", line, 1, line, 21, "moved", "pltpu.semaphore_wait", "pl.semaphore_wait", True)


_OLD_MIGRATION = "from __future__ import annotations\nfrom jax.experimental.pallas import tpu as pltpu\n\npltpu.semaphore_wait(s)\n"
_DECLARED = ImportChanges(dropped={2: {"pltpu"}}, added=1, migrated_to="pl")


def test_libcst_proof_accepts_the_declared_import_edits() -> None:
    new = "from __future__ import annotations\nfrom jax.experimental import pallas as pl\n\npl.semaphore_wait(s)\n"
    check_rewrite(_OLD_MIGRATION, new, [_sem101(4)], _DECLARED)


@pytest.mark.parametrize(
    ("new", "imports", "error"),
    [  # the declared edits, in an order CPython refuses: only compiling shows it
        ("from jax.experimental import pallas as pl\nfrom __future__ import annotations\n\npl.semaphore_wait(s)\n", _DECLARED, "__future__"),
        ("from __future__ import annotations\nfrom jax.experimental import pallas as pl\n\npl.semaphore_wait(s)\n", None, "not one semfix declares"),
        ("from jax.experimental import pallas as pl\n\npl.semaphore_wait(s)\n", _DECLARED, "not one semfix declares"),
        ("from __future__ import annotations\nimport os\n\npl.semaphore_wait(s)\n", _DECLARED, "not one semfix declares"),
        ("from __future__ import annotations\nfrom jax.experimental import pallas as pl\n\nos.semaphore_wait(s)\n", _DECLARED, "SEM101"),
    ],
    ids=["late-future", "undeclared", "dropped-too-much", "wrong-import-added", "wrong-module"],
)
def test_libcst_proof_accepts_only_the_declared_import_edits(new: str, imports: ImportChanges | None, error: str) -> None:
    with pytest.raises(SafetyError, match=error):
        check_rewrite(_OLD_MIGRATION, new, [_sem101(4)], imports)


def test_libcst_proof_refuses_imports_that_differ_undeclared() -> None:
    with pytest.raises(SafetyError):
        check_rewrite("import os\nimport sys\n\nf()\n", "import os\n\nf()\n", [])
