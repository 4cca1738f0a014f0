"""Findings as other tools read them: JSON, GitHub annotations, SARIF 2.1.0, reviewdog rdjson.

Every format carries each finding's suggested replacement where there is one, so a reviewer
(or reviewdog posting GitHub suggested changes) can apply exactly what `semfix fix` would.
Lines are 1-based; columns are characters, except rdjson's, which are UTF-8 bytes.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Iterable

import click

from semfix import __version__
from semfix.findings import Finding
from semfix.rules import RULES
from semfix.text import splice

FORMATS = ("text", "json", "github", "sarif", "rdjson")


def from_root(path: Path, root: Path) -> str:
    """`path` relative to `root` (the repository root), as GitHub and SARIF consumers resolve
    paths: not the current folder, which a workflow's `working-directory:` may move. A path
    outside `root` stays absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, root)
    outside = relative == os.pardir or relative.startswith(os.pardir + os.sep)
    return Path(absolute if outside else relative).as_posix()


_FIELDS = ("cell", "rule", "line", "column", "end_line", "end_column", "message", "original", "replacement", "safety")


def finding_json(finding: Finding) -> dict[str, Any]:
    """A finding as `--format json` and the `--report` file give it."""
    return {field: getattr(finding, field) for field in _FIELDS}


def as_json(findings: Iterable[tuple[Path, Finding]]) -> str:
    return json.dumps([{"path": p.as_posix(), **finding_json(f)} for p, f in findings], indent=2) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def as_github(findings: Iterable[tuple[Path, Finding]], root: Path) -> str:
    """GitHub Actions workflow commands: one `::error ...::message` line per finding."""
    lines = []
    for path, finding in findings:
        title = f"semfix {finding.rule}" if finding.cell is None else f"semfix {finding.rule} (cell {finding.cell})"
        properties = {
            "file": from_root(path, root),
            "line": finding.line,
            "col": finding.column,
            "endLine": finding.end_line,
            "endColumn": finding.end_column,
            "title": title,
        }
        rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
        lines.append(f"::error {rendered}::{_escape_data(finding.message)}")
    return "".join(line + "\n" for line in lines)


def as_sarif(findings: Iterable[tuple[Path, Finding]], root: Path) -> str:
    """SARIF 2.1.0, one run, with each suggested replacement as a `fix`."""
    codes = list(RULES)
    results = []
    for path, finding in findings:
        uri = from_root(path, root)
        region = {
            "startLine": finding.line,
            "startColumn": finding.column,
            "endLine": finding.end_line,
            "endColumn": finding.end_column,
        }
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": codes.index(finding.rule),
            "level": "error",
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
        }
        if finding.replacement is not None and finding.cell is None:
            new = finding.replacement
            described = f"Replace with `{new.strip()}`" if new.strip() else "Remove"
            change = {"artifactLocation": {"uri": uri}, "replacements": [{"deletedRegion": region, "insertedContent": {"text": new}}]}
            result["fixes"] = [{"description": {"text": described}, "artifactChanges": [change]}]
        results.append(result)
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "properties": {"fix": rule.fix, "enabledByDefault": rule.default},
        }
        for rule in RULES.values()
    ]
    driver = {"name": "semfix", "version": __version__, "rules": rules}
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split where Python's tokenizer splits them (not at \\f)."""
    return re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)


def as_rdjson(findings: Iterable[tuple[Path, Finding]], read_lines: Callable[[Path], list[str]]) -> str:
    """reviewdog's rdjson: diagnostics with `suggestions`, columns in UTF-8 bytes."""
    diagnostics = []
    for path, finding in findings:
        lines = read_lines(path) if finding.cell is None else []

        def position(line: int, column: int) -> dict[str, int]:
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            return {"line": line, "column": len(text[: column - 1].encode("utf-8")) + 1}

        span = {"start": position(finding.line, finding.column), "end": position(finding.end_line, finding.end_column)}
        diagnostic: dict[str, Any] = {
            "message": finding.message,
            "location": {"path": path.as_posix(), "range": span},
            "severity": "ERROR",
            "code": {"value": finding.rule},
        }
        if finding.replacement is not None and finding.cell is None:
            diagnostic["suggestions"] = [{"range": span, "text": finding.replacement}]
        diagnostics.append(diagnostic)
    report = {"source": {"name": "semfix"}, "severity": "ERROR", "diagnostics": diagnostics}
    return json.dumps(report, indent=2) + "\n"


def suggestion_diff(path: Path, text: str, finding: Finding, *, color: bool) -> str:
    """The finding's own replacement as a small unified diff under it (text format)."""
    if finding.replacement is None or finding.cell is not None:
        return ""
    diff = difflib.unified_diff(
        split_lines(text), split_lines(splice(text, [finding])), f"a/{path.as_posix()}", f"b/{path.as_posix()}", n=1
    )
    out = ""
    for line in diff:
        line = line if line.endswith("\n") else line + "\n"
        if color and line[:1] in ("+", "-") and line[:3] not in ("+++", "---"):
            line = click.style(line, fg="green" if line[0] == "+" else "red")
        out += line
    return out
