"""Syntax newer than the running Python: one clear error naming the Python it needs (exit 2);
where this Python parses it, it is analysed and fixed like any other."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from conftest import Case, fixture_cases
from test_cli import semfix

from semfix import SourceError, fix_source

HEADER = (
    "from jax.experimental import pallas as pl\n\n\ndef kernel(sem, x, idx, d):\n    pl.semaphore_wait(sem[...], 1)\n"
)
FIXED = HEADER.replace("sem[...]", "sem")
RUNNING = f"{sys.version_info.major}.{sys.version_info.minor}"

# (name, a line that uses the construct, the Python that parses it, words of the error)
CONSTRUCTS = [
    ("starred index", "    return x.at[*idx]\n", "3.11", "a starred index `x[*i]`"),
    ("starred index after a comma", "    return x[0, *idx]\n", "3.11", "a starred index `x[*i]`"),
    ("except star", "    try:\n        pass\n    except* ValueError:\n        pass\n", "3.11", "`except*`"),
    ("generic function", "    def inner[T](a: T) -> T:\n        return a\n", "3.12", "type parameters `def inner[T]`"),
    ("generic class", "    class Box[T]:\n        pass\n", "3.12", "type parameters `class Box[T]`"),
    ("type alias", "    type Pair = tuple[int, int]\n", "3.12", "a `type` alias statement"),
    ("same quotes in an f-string", '    return f"{d["k"]}"\n', "3.12", "an f-string with quotes"),
    ("backslash in an f-string", "    return f\"{'\\n'.join(d)}\"\n", "3.12", "an f-string with quotes, backslashes"),
]


def _needs(version: str) -> bool:
    return sys.version_info < tuple(int(part) for part in version.split("."))


@pytest.mark.parametrize(("name", "line", "version", "words"), CONSTRUCTS, ids=[c[0] for c in CONSTRUCTS])
def test_newer_syntax_is_refused_naming_the_python_it_needs(name: str, line: str, version: str, words: str) -> None:
    source = HEADER + line
    if not _needs(version):  # this Python parses it: it is analysed like any other code
        assert fix_source(source).source == FIXED + line
        return
    # the line that holds the construct: `except*` comes after its `try:` block
    at = 6 + next(i for i, text in enumerate(line.splitlines()) if not text.strip().startswith(("try", "pass")))
    expected = f"uses syntax Python {RUNNING} cannot parse \\({re.escape(words)}.*, Python {version}\\+\\) at line {at}"
    with pytest.raises(SourceError, match=expected):
        fix_source(source)


@pytest.mark.skipif(not _needs("3.11"), reason="this Python parses `x[*i]`: the test above fixes it")
def test_the_cli_exits_2_naming_the_python_needed(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(HEADER + "    return x.at[*idx]\n")
    result = semfix("check", "k.py", cwd=tmp_path)
    assert result.returncode == 2
    assert (
        f"uses syntax Python {RUNNING} cannot parse (a starred index `x[*i]`, Python 3.11+) at line 6"
        in result.stderr + result.stdout
    )


def test_other_syntax_errors_keep_cpythons_words() -> None:
    with pytest.raises(SourceError, match=r"^syntax error at line 6, column \d+: "):
        fix_source(HEADER + "    return x +\n")


@pytest.mark.parametrize("case", fixture_cases(newer=True) or [None], ids=lambda c: c.name if c else "none here")
def test_fixtures_newer_than_this_python_are_refused(case: Case | None) -> None:
    """Fixtures whose case.json names a newer Python; on that Python test_fixtures runs them."""
    if case is None:
        assert all(not _needs(c.spec["python"]) for c in fixture_cases() if "python" in c.spec)
        return
    with pytest.raises(SourceError, match=f"Python {re.escape(case.spec['python'])}\\+\\)"):
        case.fix(case.before)
