"""Turning a run's outcome into text: finding lines, unified diffs and the summary."""

from __future__ import annotations

import difflib
from pathlib import Path

from semfix.findings import Finding
from semfix.rules import RULES
from semfix.runner import FileOutcome, RunOutcome

_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def finding_line(path: Path, finding: Finding, *, mark_fixable: bool = False) -> str:
    """`path:line:col: CODE message`, the shape editors and CI log parsers understand."""
    mark = "[*] " if mark_fixable and finding.safety == "safe" else ""
    return f"{path}:{finding.line}:{finding.column}: {finding.rule} {mark}{finding.message}"


def error_line(outcome: FileOutcome) -> str:
    return f"error: {outcome.path}: {outcome.error}"


def unified_diff(path: Path, old: bytes, new: bytes) -> bytes:
    """A diff `patch -p1` and `git apply` accept, in the file's own bytes and line endings."""
    name = path.as_posix().encode("utf-8", "surrogateescape")
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=b"a/" + name,
        tofile=b"b/" + name,
    )
    out = bytearray()
    for line in lines:
        if line.startswith((b"---", b"+++")) or line.endswith(b"\n"):
            out += line if line.endswith(b"\n") else line + b"\n"
        else:  # a last line without a newline
            out += line + _NO_NEWLINE
    return bytes(out)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(outcome: RunOutcome, *, applied_verb: str, left_label: str = "left") -> str:
    """One line: what was fixed (or would be), what is left, what failed."""
    fixed = [f for _, f in outcome.findings if f.applied]
    left = [f for _, f in outcome.findings if not f.applied]
    fixed_files = sum(1 for f in outcome.files if f.changed)
    parts: list[str] = []
    if fixed:
        parts.append(
            f"{applied_verb} {_plural(len(fixed), 'problem')} in {_plural(fixed_files, 'file')}"
        )
    if left:
        safe = sum(1 for f in left if f.safety == "safe")
        unsafe = sum(1 for f in left if f.safety == "unsafe")
        hints = [f"{safe} fixable with `semfix fix`"] if safe else []
        hints += [f"{unsafe} more with `--unsafe-fixes`"] if unsafe else []
        hint = f" ({', '.join(hints)})" if hints else ""
        parts.append(f"{_plural(len(left), 'problem')} {left_label}{hint}")
    if not parts:
        parts.append("no problems found")
    if outcome.errors:
        parts.append(f"{_plural(len(outcome.errors), 'file')} could not be processed")
    text = "; ".join(parts)
    return f"{text[0].upper()}{text[1:]} ({_plural(outcome.checked, 'file')} checked)."


def rules_table() -> str:
    """`semfix rules`: every rule, whether it fixes and how safely, and one example."""
    lines = []
    for rule in RULES.values():
        state = "on" if rule.default else "off (enable with --select or --extend-select)"
        lines.append(f"{rule.code}  {rule.name}")
        lines.append(f"    fix: {rule.fix}; default: {state}")
        lines.append(f"    {rule.summary}")
        for label, example in (("before", rule.before), ("after ", rule.after)):
            for index, line in enumerate(example.splitlines()):
                lines.append(f"    {label if index == 0 else '      '}  {line}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
