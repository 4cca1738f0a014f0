"""Which line of the file a traceback's frame means, when the file may have changed since the run.

A traceback prints each frame's source line. `explain` trusts the line number only where the
file still holds that text there; elsewhere it moves to the one line of the frame's function
(or, when that function cannot be told, of the file) that holds it, or refuses.
"""

from __future__ import annotations

import ast

from semfix.analysis.nodes import first_line, parse
from semfix.rewrite.text import decode, line_starts


def find_line(
    source: bytes, line: int, printed: str, function: str, name: str = "The file"
) -> tuple[int | None, str | None]:
    """(the line that holds `printed`, a note when it is not `line`); (None, why) when none can
    be told. The note begins with `name`, the file's (a log may point into several). Lines are
    compared stripped, as Python prints them. Raises SourceError for bytes that cannot be decoded."""
    text, _ = decode(source)
    starts = line_starts(text)
    lines = [text[start:end].strip() for start, end in zip(starts, [*starts[1:], len(text)])]
    want = printed.strip()
    if 1 <= line <= len(lines) and lines[line - 1] == want:
        return line, None
    now = f"`{lines[line - 1]}`" if 1 <= line <= len(lines) else "past the end of the file"
    low, high, where = _function_lines(text, function.rsplit(".", 1)[-1]) or (1, len(lines), "the file")
    found = [number for number in range(low, high + 1) if lines[number - 1] == want]
    changed = f"{name} changed since the run: line {line} is {now} now, not `{want}` as the traceback prints it"
    if len(found) == 1:
        return found[0], f"{changed}; that text is line {found[0]} now, the only one in {where}."
    count = "nowhere" if not found else f"on {len(found)} lines ({', '.join(map(str, found))})"
    return None, f"{changed}, and that text is {count} in {where}: cannot tell which call raised the error."


def _function_lines(text: str, function: str) -> tuple[int, int, str] | None:
    """The lines of the one function named `function` (Python names a frame after its function,
    without the class), and how to call them; None when there is no one such function."""
    try:
        tree = parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defs = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function
    ]
    if len(defs) != 1:
        return None
    return first_line(defs[0]), defs[0].end_lineno or defs[0].lineno, f"`{function}`"
