"""The cheap paths the engine takes before the costly ones give the costly ones' answers.

Access tracking (`Tracking`) makes a file's analysis run again; a file should pay for it only
when its answer could differ. These tests hold the shortcuts to that: the fixture outputs are
the same either way (tests/fixtures), and here the shortcut is shown to be taken."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from semfix.analysis.evidence import NeedsAccesses
from semfix.analysis.nodes import Text
from semfix.analysis.scopes import ScopeBuilder
from semfix.engine.run import _run
from semfix.rewrite.text import line_starts
from semfix.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
EVERY_RULE = Settings.build(select=["SEM"])


def _needs_tracking(source: str) -> bool:
    try:
        _run(Text(source), ast.parse(source), ScopeBuilder(), EVERY_RULE)
    except NeedsAccesses:
        return True
    return False


def test_a_list_name_spelled_in_other_functions_needs_no_tracking() -> None:
    """`shapes` bound in `run` is spelled in `other` too: the text alone cannot say it is used
    only once, but `run`'s own names can."""
    source = (FIXTURES / "sem002" / "scratch_list_common_name" / "before.py").read_text()
    head = source[: source.index("def grown_kernel")]  # without the nested function that changes it
    assert not _needs_tracking(head)


@pytest.mark.parametrize("case", ["scratch_list_common_name", "scratch_list_changed"])
def test_a_list_changed_by_other_code_is_still_asked_of_tracking(case: str) -> None:
    """A nested function or the module using the name: only tracking can say whether it is the
    same list, so the shortcut must not answer."""
    assert _needs_tracking((FIXTURES / "sem002" / case / "before.py").read_text())


@pytest.mark.parametrize("text", ["", "a", "a\n", "\n\n", "ab\ncd\n\nx", "a\r\nb\rc\n", "é\nü\n", "x\r", "\r\n\r\n"])
def test_line_starts_split_lines_where_the_tokenizer_does(text: str) -> None:
    """Without a carriage return the starts are summed from `split`, not found by a pattern:
    they must be where Python's tokenizer starts each line (after `\\n`, `\\r\\n` or `\\r`)."""
    expected = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" or c == "\r" and text[i + 1 : i + 2] != "\n"]
    assert line_starts(text) == expected
