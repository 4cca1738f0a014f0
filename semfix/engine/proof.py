"""The proof of every rewrite: the new text compiles, parses to exactly the declared tree,
and a second pass changes nothing (run.py runs that pass, when `prove` says it is needed).
"""

from __future__ import annotations

import ast
import bisect
import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING

from semfix.analysis.nodes import (
    LINE_BREAK,
    Text,
    alone_on_its_lines,
    element_read,
    enclosing,
    end_of,
    first_line,
    has_slice,
    parse,
    read_target,
)
from semfix.engine.skim import clears_for
from semfix.errors import SafetyError
from semfix.findings import Finding
from semfix.rewrite.compiles import prove_compiles
from semfix.rules import RULES
from semfix.settings import Settings

if TYPE_CHECKING:
    from semfix.analysis.nodes import Rewrite


def settles_by_construction(findings: list[Finding], rewrites: list[Rewrite]) -> bool:
    """Can a second pass apply nothing, whatever else it finds? Cheaper than running it.

    Rewrites add and remove no binding, call or allocation, so a second pass resolves the same
    calls to the same operations and gives each untouched argument the same verdict, except
    that new `.at` views may prove a Ref and turn an unsafe fix into a safe one (for the rules
    that do not `settle`, see Rule). Each rewritten argument is now a Ref expression; only a
    read, an element read or a slice left in it could draw a fix. A removed statement removes a
    binding and a read: not settled here (run.py asks).
    """
    if any(not RULES[f.rule].settles and not f.applied for f in findings):
        return False
    replacements = [
        r.replacement.value if isinstance(r.replacement, ast.NamedExpr) else r.replacement
        for r in rewrites
        if r.renamed is None
    ]
    return not any(read_target(r) is not None or element_read(r) or has_slice(r) for r in replacements)


def shifts_lines(text: str, edits: list[tuple[int, int, str]]) -> bool:
    """Does an edit remove or add a line break? Then the whole trees are compared, and the
    edits may have dropped a statement (an import, an assignment a carried read was taken from): a binding."""
    return any(LINE_BREAK.search(text, start, end) or LINE_BREAK.search(new) for start, end, new in edits)


def free_names(tree: ast.Module) -> set[str]:
    """The names the module reads and binds nowhere, builtins aside. A rewrite must add none:
    the tree it declares may be as wrong as the text (an import dropped whose name a rename
    writes), so this is checked apart from the comparison of trees."""
    bound, read = set(dir(builtins)), set[str]()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.alias):
            bound.add(node.asname or node.name.partition(".")[0])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            bound.add(node.rest)
    return read - bound


def prove(
    expected: ast.Module,
    old: Text,
    new_text: str,
    edits: list[tuple[int, int, str]],
    settings: Settings,
    *,
    settled: bool = False,
) -> ast.Module | None:
    """The new text must compile and parse to exactly the declared tree; the new tree, parsed,
    when it must also settle on a second pass (the caller runs it), else None.

    CPython compiles the whole new text: checks such as a repeated keyword, a `return` outside
    a function or a `nonlocal` without a binding need more than one statement, and parsing
    alone misses them. Where the whole text is parsed anyway, the compiler is handed that
    tree, the very one CPython would build from the text, instead of parsing it again.

    Edits change text only inside the statements that hold them; when none removes or adds a
    line break (cutting brackets that span lines does, and so do import edits; then
    the whole trees are compared),
    around each edit the innermost statement with its lines to itself is re-parsed
    alone (as the body of an `if 1:` when indented) and compared node for node with what it
    should be. It starts a logical line, where the tokenizer is clean, and parses whole, so it
    leaves the tokenizer clean for the text after it, which is unchanged: the whole new text
    parses to the declared tree. When the new text skims clean, no rule can fire on it, so a
    second pass cannot change it; nor when the first pass settles it by construction (see
    `settles_by_construction`); otherwise the whole file is parsed and analysed again.
    """
    changed_lines = {old.line_of(start) for start, _, _ in edits}
    shifted = shifts_lines(old.text, edits)
    proven = not shifted and _prove_statements(expected, old, new_text, edits, changed_lines)
    if proven and (settled or clears_for(new_text.encode("utf-8", "surrogatepass"), settings.enabled)):
        prove_compiles(old.text, new_text, SafetyError)
        return None
    actual = _prove_whole(expected, old.text, new_text, changed_lines, shifted=shifted)
    prove_compiles(old.text, actual, SafetyError)
    return actual


def _prove_statements(
    expected: ast.Module, old: Text, new_text: str, edits: list[tuple[int, int, str]], changed_lines: set[int]
) -> bool:
    """Re-parse, around each edit, the innermost statement that has its lines to itself; False
    if that cannot settle it."""
    edit_starts, shifts, shift = [0], [0], 0
    for start, end, replacement in edits:  # sorted; none crosses a line break
        shift += len(replacement) - (end - start)
        edit_starts.append(start + 1)
        shifts.append(shift)

    def new_start(line: int) -> int:
        """Where a line starts in the new text: where it started, moved by the edits before it."""
        if line > len(old.starts):
            return len(new_text)
        start = old.starts[line - 1]
        return start + shifts[bisect.bisect_right(edit_starts, start) - 1]

    proven: set[int] = set()
    bodies: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    for line in sorted(changed_lines):
        for statement in reversed(enclosing(expected, line, bodies)):
            if id(statement) in proven:
                break
            if alone_on_its_lines(statement, old) and _parses_back(statement, new_text, new_start):
                proven.add(id(statement))
                break
        else:
            return False
    return True


def _parses_back(statement: ast.stmt, new_text: str, new_start: Callable[[int], int]) -> bool:
    """Do the statement's lines of the new text parse, alone, to exactly the declared statement?
    An indented statement is parsed as the body of an `if 1:`."""
    first, last = first_line(statement), end_of(statement)[0]
    lines = new_text[new_start(first) : new_start(last + 1)]
    indented = lines[:1] in (" ", "\t")
    try:
        tree = parse("if 1:\n" + lines if indented else lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False  # e.g. a `__future__` import that changes the grammar: parse more
    body = tree.body
    if indented and len(body) == 1:
        wrapper = body[0]
        assert isinstance(wrapper, ast.If)  # the `if 1:` the text parsed starts with
        body = wrapper.body
    return len(body) == 1 and _same_tree(body[0], statement)


def _same_tree(first: object, second: object) -> bool:
    """`ast.dump(first) == ast.dump(second)` (positions ignored), without building the strings."""
    stack = [(first, second)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if isinstance(a, ast.AST):
            stack.extend((getattr(a, name, None), getattr(b, name, None)) for name in a._fields)
        elif type(a) is list:
            assert type(b) is list  # its type is a's (above)
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif a != b and a == a:  # noqa: PLR0124 - a NaN constant is the same NaN
            return False
    return True


def _prove_whole(
    expected: ast.Module, old_text: str, new_text: str, changed_lines: set[int], *, shifted: bool
) -> ast.Module:
    """The new text parses to the declared tree: compared at the edited statements, or whole
    when an edit removed line breaks and so moved every line after it."""
    try:
        actual = parse(new_text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        prove_compiles(old_text, new_text, SafetyError)  # a file that never compiled: SourceError
        raise SafetyError(f"the rewritten source does not parse: {error}") from None
    if shifted:
        if not _same_tree(expected, actual):
            raise SafetyError("the rewritten source differs from the declared rewrites")
        return actual
    if len(actual.body) != len(expected.body):
        raise SafetyError("the rewritten source differs from the declared rewrites")
    edited = sorted(changed_lines)
    for old, new in zip(expected.body, actual.body):
        span = (old.lineno, old.end_lineno, old.col_offset)
        if span != (new.lineno, new.end_lineno, new.col_offset):
            raise SafetyError("the rewritten source differs from the declared rewrites")
        first = bisect.bisect_left(edited, first_line(old))  # decorators come first
        edits_it = first < len(edited) and edited[first] <= end_of(old)[0]
        if edits_it and not _same_tree(old, new):
            raise SafetyError("the rewritten source differs from the declared rewrites")
    return actual
