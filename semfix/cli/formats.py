"""Findings for other tools: JSON, GitHub annotations, SARIF 2.1.0, reviewdog rdjson, and
the `--report` file. Loaded only when one of them is asked for.

Every machine format carries each finding's suggested replacement where there is one, so a
reviewer (or reviewdog posting GitHub suggested changes) can apply exactly what `semfix fix`
would. Lines are 1-based; columns are characters, except rdjson's, which are UTF-8 bytes.

A file that could not be processed (`errors`: path and reason) is in every machine format
too, in that format's own idiom, so a CI reading only stdout still sees what went unchecked.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from semfix import __version__
from semfix.cli.report import split_lines
from semfix.cli.runner import RunOutcome
from semfix.findings import Finding
from semfix.rules import RULES


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


Errors = Iterable[tuple[Path, str]]  # a file that could not be processed, and why
Reader = Callable[[Path], str]  # a file's text


def _in_file(read_text: Reader | None) -> Callable[[Path, Finding], tuple[int, int]]:
    """A finding's first and last line in its file. A notebook's finding counts lines within its
    cell: its lines are those of the .ipynb text holding them (`Joined.file_line`), so that an
    annotation on the file lands on its code (line 1 where the notebook cannot be read)."""
    joined: dict[Path, Any] = {}

    def lines(path: Path, finding: Finding) -> tuple[int, int]:
        if finding.cell is None:
            return finding.line, finding.end_line
        if path not in joined:
            from semfix.api import SourceError, join_cells

            try:
                joined[path] = join_cells(read_text(path).encode("utf-8")) if read_text else None
            except SourceError:
                joined[path] = None
        if (notebook := joined[path]) is None:
            return 1, 1
        return notebook.file_line(finding.cell, finding.line), notebook.file_line(finding.cell, finding.end_line)

    return lines


def _in_cell(finding: Finding) -> str:
    """Where a notebook's finding is, in words (the formats' lines are the file's)."""
    return f"cell {finding.cell}, line {finding.line}, column {finding.column}"


def as_json(findings: Iterable[tuple[Path, Finding]], errors: Errors = ()) -> str:
    """A list of findings, then one entry per file error: the same keys (`rule` and the
    positions null, `message` the reason) and `"error": true`, so the list keeps its shape."""
    entries = [{"path": p.as_posix(), **finding_json(f)} for p, f in findings]
    for path, reason in errors:
        entries.append({"path": path.as_posix(), **dict.fromkeys(_FIELDS), "message": reason, "error": True})
    return json.dumps(entries, indent=2) + "\n"


def _escape(text: str, *, in_property: bool = False) -> str:
    """Escapes for a workflow command; a property value also escapes the separators."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if in_property else text


def github_error(message: str, title: str) -> str:
    """A workflow command for an error of the run itself (no file): the check shows it, where
    a line on stderr would only be in the log."""
    return f"::error title={_escape(title, in_property=True)}::{_escape(message)}\n"


def as_github(
    findings: Iterable[tuple[Path, Finding]], root: Path, errors: Errors = (), read_text: Reader | None = None
) -> str:
    """GitHub Actions workflow commands: one `::error ...::message` line per finding, and one
    without a line (an annotation on the whole file) per file error. A notebook's finding is
    on the lines of the .ipynb that hold it, its cell and place there in the title."""
    out = ""
    in_file = _in_file(read_text)
    for path, finding in findings:
        line, end_line = in_file(path, finding)
        properties: dict[str, object] = {"file": from_root(path, root), "line": line}
        if finding.cell is None:
            properties.update(col=finding.column, endLine=end_line, endColumn=finding.end_column)
            properties["title"] = f"semfix {finding.rule}"
        else:
            properties.update(endLine=end_line, title=f"semfix {finding.rule} ({_in_cell(finding)})")
        rendered = ",".join(f"{key}={_escape(str(value), in_property=True)}" for key, value in properties.items())
        out += f"::error {rendered}::{_escape(finding.message)}\n"
    title = _escape("semfix: file not processed", in_property=True)
    for path, reason in errors:
        out += f"::error file={_escape(from_root(path, root), in_property=True)},title={title}::{_escape(reason)}\n"
    return out


def as_sarif(
    findings: Iterable[tuple[Path, Finding]], root: Path, errors: Errors = (), read_text: Reader | None = None
) -> str:
    """SARIF 2.1.0, one run, with each suggested replacement as a `fix`; file errors are the
    invocation's `toolExecutionNotifications` (and make it unsuccessful), as SARIF means them.
    A notebook's finding is on the lines of the .ipynb that hold it; its message names its cell."""
    codes = list(RULES)
    results = []
    in_file = _in_file(read_text)
    for path, finding in findings:
        uri = _uri(path, root)
        line, end_line = in_file(path, finding)
        region: dict[str, int] = {"startLine": line, "endLine": end_line}
        if finding.cell is None:
            region.update(startColumn=finding.column, endColumn=finding.end_column)
        message = finding.message if finding.cell is None else f"{_in_cell(finding)}: {finding.message}"
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": codes.index(finding.rule),
            "level": "error",
            "message": {"text": message},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": region}}],
        }
        if finding.replacement is not None and finding.cell is None:
            new = finding.replacement
            described = f"Replace with `{new.strip()}`" if new.strip() else "Remove"
            change = {
                "artifactLocation": {"uri": uri},
                "replacements": [{"deletedRegion": region, "insertedContent": {"text": new}}],
            }
            result["fixes"] = [{"description": {"text": described}, "artifactChanges": [change]}]
        results.append(result)
    notices = [
        {
            "level": "error",
            "message": {"text": reason},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(path, root)}}}],
        }
        for path, reason in errors
    ]
    return _sarif(results, notices)


def _uri(path: Path, root: Path) -> str:
    """A SARIF `uri`: the path from the root, percent-encoded (a space, `#`, `%`, non-ASCII: the
    2.1.0 schema's `uri-reference`), as ruff encodes its own."""
    from urllib.parse import quote

    return quote(os.fsencode(from_root(path, root)), safe="/")


def _sarif(results: list[dict[str, Any]], notices: list[dict[str, Any]]) -> str:
    """The SARIF log of one run: `results`, and `notices` (errors that make it unsuccessful)."""
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "properties": {"fix": rule.fix, "enabledByDefault": rule.gate.default},
        }
        for rule in RULES.values()
    ]
    driver = {"name": "semfix", "version": __version__, "rules": rules}
    invocation = {"executionSuccessful": not notices, "toolExecutionNotifications": notices}
    run = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}
    return json.dumps(log, indent=2) + "\n"


def as_rdjson(findings: Iterable[tuple[Path, Finding]], read_text: Reader, errors: Errors = ()) -> str:
    """reviewdog's rdjson: diagnostics with `suggestions`, columns in UTF-8 bytes. A file
    error is a diagnostic with no range and no code: it is about the whole file. A notebook's
    finding is on the lines of the .ipynb that hold it, without columns; its message names its cell."""
    diagnostics = []
    in_file = _in_file(read_text)
    for path, finding in findings:
        lines = split_lines(read_text(path)) if finding.cell is None else []

        def position(line: int, column: int, lines: list[str] = lines) -> dict[str, int]:
            text = lines[line - 1] if 0 < line <= len(lines) else ""
            return {"line": line, "column": len(text[: column - 1].encode("utf-8")) + 1}

        if finding.cell is None:
            span = {
                "start": position(finding.line, finding.column),
                "end": position(finding.end_line, finding.end_column),
            }
        else:
            line, end_line = in_file(path, finding)
            span = {"start": {"line": line}, "end": {"line": end_line}}
        message = finding.message if finding.cell is None else f"{_in_cell(finding)}: {finding.message}"
        diagnostic: dict[str, Any] = {
            "message": message,
            "location": {"path": path.as_posix(), "range": span},
            "severity": "ERROR",
            "code": {"value": finding.rule},
        }
        if finding.replacement is not None and finding.cell is None:
            diagnostic["suggestions"] = [{"range": span, "text": finding.replacement}]
        diagnostics.append(diagnostic)
    for path, reason in errors:  # no range, no code: the whole file
        diagnostics.append({"message": reason, "location": {"path": path.as_posix()}, "severity": "ERROR"})
    return _rdjson(diagnostics)


def _rdjson(diagnostics: list[dict[str, Any]]) -> str:
    report = {"source": {"name": "semfix"}, "severity": "ERROR", "diagnostics": diagnostics}
    return json.dumps(report, indent=2) + "\n"


def run_error(message: str, output_format: str, *, title: str) -> str:
    """A run stopped before any file was checked (a usage or configuration error), in a machine
    format: stdout is still a document a reader parses, and it names the error, where an empty
    stdout fails to parse or, read as no findings, passes. Each format says it as it says a file
    error, without the file: a json entry with `"error": true` and `path` null, a `::error`
    with no file, a SARIF tool notification with no location (the invocation unsuccessful),
    an rdjson diagnostic with no location. `text` has nothing here: stderr says it."""
    if output_format == "json":
        entry = {"path": None, **dict.fromkeys(_FIELDS), "message": message, "error": True}
        return json.dumps([entry], indent=2) + "\n"
    if output_format == "github":
        return github_error(message, title)
    if output_format == "sarif":
        return _sarif([], [{"level": "error", "message": {"text": message}}])
    if output_format == "rdjson":
        return _rdjson([{"message": message, "severity": "ERROR"}])
    return ""


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
