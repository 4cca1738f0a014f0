"""The rules, one module each (`semNNN.py`): docs, examples and logic (see base.py).

`RULES` maps each code to its `Rule`, in the order `semfix rules` lists them, importing a
rule's module (and the analysis it builds on) only when the rule is first asked for; `GATES`,
the rule table (table.py), is what a run reads of every rule before that.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from importlib import import_module

from semfix.rules.base import Fixability, Invalid, Rule
from semfix.rules.table import GATES, Gate

__all__ = ["GATES", "RULES", "Fixability", "Gate", "Invalid", "Rule", "describe", "markdown", "table"]


class _Rules(Mapping[str, Rule]):
    """Each code's `Rule`, its module imported on first use: a run whose files the byte scan
    clears needs the table alone, and the rules' imports (the analysis) were a third of what a
    one-file check's start-up costs above click's."""

    def __getitem__(self, code: str) -> Rule:
        rule: Rule = import_module(f"{__name__}.{GATES[code].module}").RULE
        return rule

    def __contains__(self, code: object) -> bool:
        return code in GATES

    def __iter__(self) -> Iterator[str]:
        return iter(GATES)

    def __len__(self) -> int:
        return len(GATES)


RULES: Mapping[str, Rule] = _Rules()


def _heading(rule: Rule) -> list[str]:
    state = "on" if rule.gate.default else "off (enable with --select or --extend-select)"
    return [f"{rule.code}  {rule.name}", f"    fix: {rule.fix}; default: {state}", f"    {rule.summary}"]


def table() -> str:
    """`semfix rules`: every rule's code, name, fix safety, default and summary."""
    return "\n\n".join("\n".join(_heading(rule)) for rule in RULES.values()) + "\n"


def markdown() -> str:
    """`semfix rules --markdown`: the README's rule table, made from each `RULE` so neither drifts."""
    lines = ["| code | name | what | fix | default |", "|---|---|---|---|---|"]
    for rule in RULES.values():
        fix, default = f"{rule.fix}: {rule.fix_note}", "on" if rule.gate.default else "off"
        cells = (rule.code, f"`{rule.name}`", rule.summary, fix, default)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def describe(rule: Rule) -> str:
    """`semfix rules CODE`: the rule's docs, then the examples its tests run."""
    body = rule.docs.strip().partition("\n")[2].strip()  # the first line repeats the heading
    lines = [*_heading(rule), "", body, ""]
    for source in rule.valid:
        lines += ["## Valid (no finding)", "```python", source.rstrip("\n"), "```", ""]
    for example in rule.invalid:
        needs = [f"--select {','.join(example.select)}"] * bool(example.select)
        needs += ["--unsafe-fixes"] * example.unsafe_fixes
        needs += [f"--target-jax {example.target_jax}"] * bool(example.target_jax)
        lines += [f"## Invalid{' (with ' + ' '.join(needs) + ')' if needs else ''}", "```python"]
        lines += [example.source.rstrip("\n"), "```"]
        if example.fixed is None:
            lines += ["Reported, not fixed.", ""]
        else:
            lines += ["`semfix fix` gives:", "```python", example.fixed.rstrip("\n"), "```", ""]
    return "\n".join(lines).rstrip() + "\n"
