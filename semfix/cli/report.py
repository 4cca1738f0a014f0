"""Findings and a run's outcome as text, for people: finding lines, diffs, statistics and
the summary. The formats for other tools are formats.py's, loaded when one is asked for."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

import click

from semfix.cli.runner import RunOutcome
from semfix.findings import Finding
from semfix.messages import plural
from semfix.rewrite.text import splice
from semfix.rules import RULES

#: The formats for people (concise is text, as ruff calls it; full adds the source and a caret,
#: as ruff's full), then those for other tools (formats.py).
TEXT_FORMATS = ("text", "concise", "full")
FORMATS = (*TEXT_FORMATS, "json", "github", "sarif", "rdjson")


def colour(stream: TextIO) -> bool:
    """Colours on a terminal, unless NO_COLOR is set to anything (no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer splits them (not at \\f)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def suggestion_diff(path: Path, text: str, finding: Finding, *, color: bool) -> str:
    """The finding's own replacement as a small unified diff under it (text format)."""
    if finding.replacement is None or finding.cell is not None:
        return ""
    import difflib  # only where a diff is printed

    diff = difflib.unified_diff(
        split_lines(text),
        split_lines(splice(text, [finding])),
        f"a/{for_ci(path.as_posix())}",
        f"b/{for_ci(path.as_posix())}",
        n=1,
    )
    out = ""
    for line in diff:
        line = line if line.endswith("\n") else line + "\n"
        if color and line[:1] in ("+", "-") and line[:3] not in ("+++", "---"):
            line = click.style(line, fg="green" if line[0] == "+" else "red")
        out += line
    return out


_NO_NEWLINE = b"\n\\ No newline at end of file\n"


def fix_mark(finding: Finding, *, fixed: bool, unsafe_fixes: bool) -> str:
    """`[fixed]` for a fix that was written; `[*]` (as in ruff) for one `fix` would apply."""
    if fixed:
        return "[fixed]"
    return "[*]" if finding.safety == "safe" or (finding.safety == "unsafe" and unsafe_fixes) else ""


def for_ci(text: str) -> str:
    """Text as printed under GitHub Actions, whose runner reads each line of a step's output as a
    possible workflow command: a newline or CR in a name (`x\n::stop-commands::t`) would start
    one, so they are escaped as workflow commands escape them (`%0A`, `%0D`, and `%25` first)."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return text
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def shown(path: Path) -> str:
    """A path as printed: as given, escaped under GitHub Actions (`for_ci`)."""
    return for_ci(str(path))


def location(path: Path, finding: Finding) -> str:
    """`path:line:col`, or `path:cell N:line:col` in a notebook."""
    where = f"{shown(path)}:cell {finding.cell}" if finding.cell is not None else shown(path)
    return f"{where}:{finding.line}:{finding.column}"


def finding_line(path: Path, finding: Finding, mark: str = "") -> str:
    """`path:line:col: CODE [mark] message`, the shape editors and CI log parsers understand."""
    return f"{location(path, finding)}: {finding.rule} {mark + ' ' if mark else ''}{finding.message}"


def full_finding(path: Path, text: str, finding: Finding, mark: str, *, color: bool) -> str:
    """`--output-format full`, laid out as ruff's: the rule and message, where it is, its lines
    with a caret under it, and the suggested fix as a diff. (A notebook's cells are not its
    file's lines: there, no source is shown.)"""
    out = f"{finding.rule} {mark + ' ' if mark else ''}{finding.message}\n --> {location(path, finding)}\n"
    lines = split_lines(text)
    if finding.cell is None and finding.end_line <= len(lines):
        width = len(str(finding.end_line))
        shown = [line.rstrip("\r\n") for line in lines[finding.line - 1 : finding.end_line]]
        end = finding.end_column if finding.end_line == finding.line else len(shown[0]) + 1
        caret = " " * (finding.column - 1) + "^" * max(1, end - finding.column)
        out += f"{'':{width}} |\n{finding.line:>{width}} | {shown[0]}\n{'':{width}} | {caret}\n"
        out += "".join(f"{n:>{width}} | {line}\n" for n, line in enumerate(shown[1:], finding.line + 1))
        out += f"{'':{width}} |\n"
    return out + suggestion_diff(path, text, finding, color=color) + "\n"


def statistics(findings: Iterable[Finding], *, unsafe_fixes: bool) -> str:
    """`--statistics`, as ruff prints it: `COUNT CODE [*] rule-name` per rule, most frequent first.
    As in ruff, `[*]` marks a rule whose findings can all be fixed, `[-]` one where some can, `[ ]`
    one where none can; with nothing fixable the column is left out."""
    rows = statistics_rows(findings, unsafe_fixes=unsafe_fixes)
    width = len(str(max((row["count"] for row in rows), default=0)))
    marked = any(row["fixable_count"] for row in rows)

    def mark(row: dict[str, Any]) -> str:
        return "[*] " if row["fixable"] else "[-] " if row["fixable_count"] else "[ ] "

    return "".join(
        f"{row['count']:>{width}}\t{row['code']}\t{mark(row) if marked else ''}{row['name']}\n" for row in rows
    )


def statistics_rows(findings: Iterable[Finding], *, unsafe_fixes: bool) -> list[dict[str, Any]]:
    """Per rule, most frequent first: what `--statistics` prints, and (as ruff's) its JSON."""
    counts, fixable = Counter[str](), Counter[str]()
    for finding in findings:
        counts[finding.rule] += 1
        fixable[finding.rule] += bool(fix_mark(finding, fixed=False, unsafe_fixes=unsafe_fixes))
    return [
        {
            "code": code,
            "name": RULES[code].name if code in RULES else "",
            "count": count,
            "fixable": fixable[code] == count,
            "fixable_count": fixable[code],
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def applied_fixes(fixed: Iterable[tuple[Path, Finding]]) -> str:
    """`--show-fixes`, as ruff lists them: the fixes written, counted by rule under each file."""
    by_file: dict[Path, Counter[str]] = {}
    for path, finding in fixed:
        by_file.setdefault(path, Counter())[finding.rule] += 1
    total = sum(sum(counts.values()) for counts in by_file.values())
    if not total:
        return ""
    lines = [f"Fixed {plural(total, 'problem')}:"]
    for path, counts in by_file.items():
        lines.append(f"- {shown(path)}:")
        lines += [f"    {n} × {code} ({RULES[code].name if code in RULES else code})" for code, n in counts.items()]
    return "\n".join(lines) + "\n"


def unified_diff(path: Path, old: bytes, new: bytes) -> bytes:
    """A diff `patch -p1` and `git apply` accept, in the file's own bytes and line endings.

    Lines are split at b"\n" alone, as both tools split them: a lone CR stays inside its line.
    A name with a space ends with a tab (as git writes it), where `patch` stops reading it.
    """
    import difflib  # only where a diff is printed

    posix = for_ci(path.as_posix())
    name = posix.encode("utf-8", "surrogateescape") + (b"\t" if " " in posix else b"")
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        re.findall(rb"[^\n]*\n|[^\n]+$", old),
        re.findall(rb"[^\n]*\n|[^\n]+$", new),
        fromfile=b"a/" + name,
        tofile=b"b/" + name,
    )
    out = bytearray()
    for line in lines:
        out += line
        if not line.endswith(b"\n"):  # a header, or a last line without a newline
            out += b"\n" if line.startswith((b"---", b"+++")) else _NO_NEWLINE
    return bytes(out)


def summary(outcome: RunOutcome, *, unsafe_fixes: bool, check: bool = False) -> str:
    """What was fixed (or would be) and what is left; then what the run scanned and how long.

    `check` fixes nothing: its findings are "found", counted by what `semfix fix` would fix.
    Findings in a file with an error are counted apart: running `semfix fix` again would not
    fix them.
    """
    fixed = [f for r in outcome.files if r.error is None for f in r.findings if f.applied]
    left = [f for r in outcome.files if r.error is None for f in r.findings if not f.applied]
    blocked = [f for r in outcome.errors for f in r.findings]
    fixed_files = sum(1 for f in outcome.files if f.changed)
    parts: list[str] = []
    if fixed:
        verb = "Fixed" if outcome.written else "Would fix"
        parts.append(f"{verb} {plural(len(fixed), 'problem')} in {plural(fixed_files, 'file')}")
    if left or blocked:
        fixable = [f for f in left if fix_mark(f, fixed=False, unsafe_fixes=unsafe_fixes)] if check else []
        command = "semfix fix --unsafe-fixes" if any(f.safety == "unsafe" for f in fixable) else "semfix fix"
        hidden = 0 if unsafe_fixes else sum(1 for f in left if f.safety == "unsafe")
        # Each count says what it is, with the whole command: "1 more with `--unsafe-fixes`" was
        # read as one more problem, and parentheses as part of the count before them.
        hints = [f"{len(fixable)} fixable with `{command}`"] if fixable else []
        hints += [f"{hidden} fixable with `semfix fix --unsafe-fixes`"] if hidden else []
        hints += [f"{len(blocked)} in files with errors, not fixed"] if blocked else []
        found = f"{plural(len(left) + len(blocked), 'problem')} {'found' if check else 'left'}"
        parts.append("; ".join([found, *hints]))
    unprocessed = sum(1 for f in outcome.errors if not f.given)
    if unprocessed:
        parts.append(f"{plural(unprocessed, 'file')} could not be processed")
    given = sum(1 for f in outcome.files if f.given and f.error is not None)
    if given:
        parts.append(f"{plural(given, 'path')} not found or empty")
    if not parts:  # never claimed when a file or path was not checked
        parts.append("no problems found")
    text = "; ".join(parts)
    stats = [f"{plural(outcome.scanned, 'file')} scanned", f"{outcome.parsed} parsed"]
    if not check:
        stats.append(f"{fixed_files} {'changed' if outcome.written else 'to change'}")
    stats += [plural(len(outcome.errors), "error"), f"{outcome.seconds:.2f} s"]
    return f"{text[0].upper()}{text[1:]}. {', '.join(stats)}."


def review_summary(outcome: RunOutcome, base: str) -> str:
    files = sum(1 for f in outcome.files if f.findings)
    findings = plural(len(outcome.findings), "finding")
    return f"{findings} on changed lines in {plural(files, 'file')} (compared with {base[:12]})."
