"""The rules, one module each (`semNNN.py`): docs, examples and logic (see base.py).

`RULES` maps each code to its `Rule`, in the order `semfix rules` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping

from semfix.rules import sem001, sem002, sem003, sem004, sem005, sem006, sem101, sem102, sem103
from semfix.rules.base import Fixability, Invalid, Rule

__all__ = ["RULES", "Fixability", "Invalid", "Rule", "describe", "markdown", "table"]

_ALL = tuple(module.RULE for module in (sem001, sem002, sem003, sem004, sem005, sem006, sem101, sem102, sem103))
RULES: Mapping[str, Rule] = {rule.code: rule for rule in _ALL}


def _heading(rule: Rule) -> list[str]:
    state = "on" if rule.default else "off (enable with --select or --extend-select)"
    return [f"{rule.code}  {rule.name}", f"    fix: {rule.fix}; default: {state}", f"    {rule.summary}"]


def table() -> str:
    """`semfix rules`: every rule's code, name, fix safety, default and summary."""
    return "\n\n".join("\n".join(_heading(rule)) for rule in _ALL) + "\n"


def markdown() -> str:
    """`semfix rules --markdown`: the README's rule table, made from each `RULE` so neither drifts."""
    lines = ["| code | name | what | fix | default |", "|---|---|---|---|---|"]
    for rule in _ALL:
        fix, default = f"{rule.fix}: {rule.fix_note}", "on" if rule.default else "off"
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
