"""The table of JAX's errors (semfix/explain/errors.py) against explain, the catalog, the rules and the README."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from semfix.catalog import FUNCTION_NAMES, KINDS_NEEDED
from semfix.cli.main import main
from semfix.explain import search as explain_module
from semfix.explain.errors import ERRORS, markdown, recognise
from semfix.explain.logs import Failure
from semfix.rules import RULES

README = Path(__file__).parent.parent / "README.md"
_SECTION = re.compile(r"<!-- semfix rules --errors: begin -->\n(.*?)<!-- semfix rules --errors: end -->", re.DOTALL)


def test_the_readme_holds_the_table_semfix_rules_prints() -> None:
    section = _SECTION.search(README.read_text(encoding="utf-8"))
    assert section is not None
    printed = CliRunner().invoke(main, ["rules", "--errors"]).output
    assert section.group(1) == printed == markdown()


def test_explain_recognises_every_error_in_the_table_as_its_own_row(tmp_path: Path) -> None:
    for error in ERRORS:
        message = error.text.partition(": ")[2]
        explained = explain_module.explain(Failure([], message), tmp_path)
        assert explained.kind == error.key, error.key
        assert explained.lines and "{" not in explained.lines[0], error.key  # its words, filled in


def test_explains_recogniser_is_the_table() -> None:
    """No pattern of explain's own: every one it knows is a row, and every row one it knows."""
    assert explain_module.recognise is recognise
    assert not hasattr(explain_module, "_KNOWN") and not hasattr(explain_module, "_SUSPECTS")
    assert len({error.key for error in ERRORS}) == len({error.pattern for error in ERRORS}) == len(ERRORS)


def test_every_rule_and_operation_the_table_names_exists_and_every_check_rule_is_named() -> None:
    named = {rule for error in ERRORS for rule in error.rules}
    assert named <= set(RULES)
    assert {code for code in RULES if code.startswith("SEM0")} <= named  # a new rule must say which error it finds
    for error in ERRORS:
        assert set(error.operations) <= FUNCTION_NAMES, error.key
        assert error.wrong_kind == (error.rules == ("SEM006",)), error.key


def test_the_kind_errors_are_raised_by_the_operations_whose_kinds_the_catalog_lists() -> None:
    raising = {name for error in ERRORS if error.wrong_kind for name in error.operations}
    assert raising == {name for name, _ in KINDS_NEEDED}


def test_every_error_in_the_stored_jax_tracebacks_is_a_row() -> None:
    """The stored logs are real JAX output: each error they end in is one the table knows."""
    raised = re.compile(r"^(?:E\s+)?ValueError: (?P<message>.+)$", re.MULTILINE)
    ansi = re.compile(r"\x1b\[[0-9;]*m")
    messages = [
        match["message"]
        for log in sorted((Path(__file__).parent / "tracebacks").glob("*.log"))
        if log.name != "unrelated.log"  # an error of another kind, on purpose
        for match in raised.finditer(ansi.sub("", log.read_text(encoding="utf-8")))
    ]
    assert len(messages) >= 10
    for message in messages:
        assert recognise(message) is not None, message


def test_a_message_no_row_knows_is_not_recognised() -> None:
    assert recognise("ValueError: Must wait an int32 value.") is None
