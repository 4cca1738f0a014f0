"""Every rule's own VALID and INVALID examples, run through `fix_source` as `semfix fix` would."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from semfix import fix_source
from semfix.cli.main import main
from semfix.rules import GATES, RULES, Invalid, Rule
from semfix.selection import build_settings

VALID = [(rule, source) for rule in RULES.values() for source in rule.valid]
INVALID = [(rule, example) for rule in RULES.values() for example in rule.invalid]


def _id(case: tuple[Rule, object]) -> str:
    return case[0].code


README = Path(__file__).parent.parent / "README.md"
_TABLE = re.compile(r"<!-- semfix rules --markdown: begin -->\n(.*?)<!-- semfix rules --markdown: end -->", re.DOTALL)


def test_the_readme_holds_the_rule_table_semfix_rules_prints() -> None:
    """The README's table is made from each rule's `RULE`: a rule's change shows up there."""
    from semfix.rules import markdown

    section = _TABLE.search(README.read_text(encoding="utf-8"))
    assert section is not None
    printed = CliRunner().invoke(main, ["rules", "--markdown"]).output
    assert section.group(1) == printed == markdown()
    assert all(f"| {code} |" in printed for code in RULES)


def test_each_row_of_the_rule_table_names_the_module_of_its_rule() -> None:
    """The table (semfix/rules/table.py) is what a run reads before loading a rule: a row whose
    module holds another code's rule would gate one rule by another's spelling."""
    assert [rule.code for rule in RULES.values()] == list(RULES)
    assert all(rule.gate is GATES[code] for code, rule in RULES.items())


def test_every_rule_has_docs_and_examples() -> None:
    for rule in RULES.values():
        assert rule.docs.startswith(f"{rule.code} {rule.name}\n"), rule.code
        for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety"):
            assert section in rule.docs, (rule.code, section)
        assert rule.valid and rule.invalid, rule.code


@pytest.mark.parametrize("case", VALID, ids=_id)
def test_valid_examples_have_no_finding(case: tuple[Rule, str]) -> None:
    rule, source = case
    result = fix_source(source, settings=build_settings(extend_select=[rule.code], unsafe_fixes=True))
    assert result.source == source
    assert [f for f in result.findings if f.rule == rule.code] == []


@pytest.mark.parametrize("case", INVALID, ids=_id)
def test_invalid_examples_are_flagged_and_fixed_exactly(case: tuple[Rule, Invalid]) -> None:
    rule, example = case
    settings = build_settings(
        extend_select=example.select, unsafe_fixes=example.unsafe_fixes, target_jax=example.target_jax
    )
    result = fix_source(example.source, settings=settings)
    assert any(f.rule == rule.code for f in result.findings)
    assert result.source == (example.source if example.fixed is None else example.fixed)
    if example.fixed is None:
        assert not any(f.applied for f in result.findings if f.rule == rule.code)


def test_a_read_before_the_assignment_in_a_loop_blocks_sem003() -> None:
    """`out_ref[0] = v` reads the previous iteration's `v`: dropping `v = sem[...]` would leave
    it unbound. Every read of `v` in its scope counts, so this is reported, not fixed."""
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef f(sem, out_ref, n):\n    for _ in range(n):\n"
        "        if n > 1:\n            out_ref[0] = v\n        v = sem[...]\n        pl.semaphore_wait(v)\n"
    )
    result = fix_source(source)
    assert result.source == source
    [finding] = result.findings
    assert finding.rule == "SEM003" and not finding.applied
    assert finding.message.endswith("(not fixed: `v` is also used for something else)")


def test_a_store_through_the_objects_own_dict_blocks_sem003_and_sem002() -> None:
    """`holder.__dict__["sem"] = other` rebinds `holder.sem` without naming it: a dunder
    attribute is the object's own state, so a write or hand-off through it voids evidence
    about every attribute of the object."""
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef f(holder, other):\n"
        "    v = holder.sem[...]\n    holder.__dict__['sem'] = other\n    pl.semaphore_wait(v)\n\n\n"
        "def g(holder, i):\n    pl.semaphore_signal(holder.sems.at[0])\n"
        "    holder.__dict__.update(sems=(i, i))\n    pl.semaphore_wait(holder.sems[1])\n"
    )
    result = fix_source(source)
    assert result.source == source
    assert [(f.rule, f.applied) for f in result.findings] == [("SEM003", False), ("SEM002", False)]
    assert "holder.__dict__" in result.findings[0].message


def test_a_text_gate_s_search_is_its_patterns() -> None:
    """Each gate is searched by `in` where its pattern is words alone, else one alternative at a
    time, each only where a word it starts or ends with is spelled: the answer is the pattern's,
    in bytes (the skim's) and in text (the engine's), on semfix, its tests and its fixtures."""
    from semfix.rules.table import _search

    checkout = Path(__file__).resolve().parents[1]
    texts = [p.read_bytes() for p in [*checkout.glob("semfix/**/*.py"), *checkout.glob("tests/**/*.py")]]
    texts += [b"x.device_id_type", b"DeviceIdType", b"tpu", b"tpu_x", b"from jax import tpu\n", b""]
    texts += [b"pltpu.\\\n  semaphore_wait(s)", b"getattr(tpu, 'HOST')", b"tpu.  # c\n ANY", b"pallas.tpu import x"]
    texts += [b"tpu.MANY", b"tpu.semaphore_waits", b"semaphore_wait(tpu)", b"tpu .\tDeviceIdType"]
    texts += ["tpu\u00e9.ANY".encode(), "x = \u00e9tpu.semaphore_wait".encode()]  # a non-ASCII letter beside a word
    for rule in RULES.values():
        for pattern in rule.gate.text_gate:
            compiled, text_compiled = re.compile(pattern.encode("ascii")), re.compile(pattern)
            for data in texts:
                assert _search(pattern, bytes)(data) == (compiled.search(data) is not None), (rule.code, pattern)
                text = data.decode("utf-8", "surrogateescape")
                assert _search(pattern, str)(text) == (text_compiled.search(text) is not None), (rule.code, pattern)
