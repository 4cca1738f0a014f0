"""Turning a run's outcome into text: finding lines, unified diffs and the summary."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from semfix import __version__
from semfix.findings import Finding
from semfix.formats import finding_json
from semfix.runner import FileOutcome, RunOutcome

_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def fix_mark(finding: Finding, *, fixed: bool, unsafe_fixes: bool) -> str:
    """`[fixed]` for a fix that was written; `[*]` (as in ruff) for one `fix` would apply."""
    if fixed:
        return "[fixed]"
    return "[*]" if finding.safety == "safe" or (finding.safety == "unsafe" and unsafe_fixes) else ""


def finding_line(path: Path, finding: Finding, mark: str = "") -> str:
    """`path:line:col: CODE [mark] message`, the shape editors and CI log parsers understand."""
    where = f"{path}:cell {finding.cell}" if finding.cell is not None else f"{path}"
    return f"{where}:{finding.line}:{finding.column}: {finding.rule} {mark + ' ' if mark else ''}{finding.message}"


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
        out += line
        if not line.endswith(b"\n"):  # a header, or a last line without a newline
            out += b"\n" if line.startswith((b"---", b"+++")) else _NO_NEWLINE
    return bytes(out)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(
    outcome: RunOutcome, *, applied_verb: str, left_label: str = "left", unsafe_fixes: bool = False, fix_hint: bool = False
) -> str:
    """What was fixed (or would be) and what is left; then what the run scanned and how long.

    `fix_hint` (for `check`) counts what `semfix fix` would fix. Findings in a file with an
    error are counted apart: running `semfix fix` again would not fix them.
    """
    fixed = [f for r in outcome.files if r.error is None for f in r.findings if f.applied]
    left = [f for r in outcome.files if r.error is None for f in r.findings if not f.applied]
    blocked = [f for r in outcome.errors for f in r.findings]
    fixed_files = sum(1 for f in outcome.files if f.changed)
    parts: list[str] = []
    if fixed:
        parts.append(f"{applied_verb} {_plural(len(fixed), 'problem')} in {_plural(fixed_files, 'file')}")
    if left or blocked:
        fixable = [f for f in left if fix_mark(f, fixed=False, unsafe_fixes=unsafe_fixes)] if fix_hint else []
        command = "semfix fix --unsafe-fixes" if any(f.safety == "unsafe" for f in fixable) else "semfix fix"
        hidden = 0 if unsafe_fixes else sum(1 for f in left if f.safety == "unsafe")
        hints = [f"{len(fixable)} fixable with `{command}`"] if fixable else []
        hints += [f"{hidden} more with `--unsafe-fixes`"] if hidden else []
        hints += [f"{len(blocked)} in files with errors, not fixed"] if blocked else []
        hint = f" ({', '.join(hints)})" if hints else ""
        parts.append(f"{_plural(len(left) + len(blocked), 'problem')} {left_label}{hint}")
    unprocessed = sum(1 for f in outcome.errors if not f.given)
    if unprocessed:
        parts.append(f"{_plural(unprocessed, 'file')} could not be processed")
    if len(outcome.errors) > unprocessed:
        parts.append(f"{_plural(len(outcome.errors) - unprocessed, 'path')} not found or empty")
    if not parts:  # never claimed when a file or path was not checked
        parts.append("no problems found")
    text = "; ".join(parts)
    stats = [f"{_plural(outcome.scanned, 'file')} scanned", f"{outcome.parsed} parsed"]
    if applied_verb != "Fixed" or outcome.written:
        stats.append(f"{fixed_files} {'changed' if outcome.written else 'to change'}")
    stats += [_plural(len(outcome.errors), "error"), f"{outcome.seconds:.2f} s"]
    return f"{text[0].upper()}{text[1:]}. {', '.join(stats)}."


def review_summary(outcome: RunOutcome, base: str) -> str:
    files = sum(1 for f in outcome.files if f.findings)
    return f"{_plural(len(outcome.findings), 'finding')} on changed lines in {_plural(files, 'file')} (compared with {base[:12]})."


def json_report(outcome: RunOutcome, *, command: str) -> str:
    """`--report FILE`: every change and finding per file, and the totals, for machines.

    In a dry run (`fix --diff`, `fix --check`), `dry_run` is true and `changed`, `applied`
    and the totals say what a plain `fix` would do, as the summary line does.
    """
    files = [
        {
            "path": result.path.as_posix(),
            "changed": result.changed,
            "error": result.error,
            "findings": [{**finding_json(f), "applied": f.applied and result.error is None} for f in result.findings],
        }
        for result in outcome.files
        if result.findings or result.error or result.changed
    ]
    applied = sum(1 for r in outcome.files if r.error is None for f in r.findings if f.applied)
    totals = {
        "files_scanned": outcome.scanned,
        "files_parsed": outcome.parsed,
        "files_changed": sum(1 for r in outcome.files if r.changed),
        "fixes_applied": applied,
        "findings_left": len(outcome.findings) - applied,
        "errors": len(outcome.errors),
        "seconds": round(outcome.seconds, 3),
    }
    report = {"tool": "semfix", "version": __version__, "command": command, "dry_run": not outcome.written}
    return json.dumps({**report, "files": files, "totals": totals}, indent=2) + "\n"
