"""Sparse parsing: which top-level statements of a kernel file must be parsed at all.

A kernel file that holds a bug must be parsed, but most of its functions hold no call that
could be a finding, and CPython's parser is most of the cost of fixing it. This module cuts
the text into its top-level statements from a lexical scan of strings, comments and brackets,
and blanks the function and class definitions that cannot matter, keeping every line break, so
the rest parses to exactly the nodes, lines and columns it has in the whole file. A blanked
definition still binds its name at module level: the engine is given it as a stub.

A definition is kept when its text could hold a finding or could inform one:
- an argument that ends in a subscript other than a plain `.at[i]` view (`]` before `,`/`)`,
  unless the bracket opens a list display);
- a read `[...]` or `[()]` anywhere (a value read into a name, SEM003);
- an allocation (`pallas_call`, `run_scoped`, or an alias of either) that names another
  definition (it gives kinds to that kernel's parameters), or that may give a semaphore
  array to a parameter passed whole as an argument within it;
- `global`, `nonlocal` or `:=`, which bind names outside the definition.
Every other statement (imports, assignments, `if` blocks) is always kept. Once that parses,
the engine keeps (`SparseModule.keeping`) the blanked definitions that mention a name assigned
a read, the kernels an allocation may give an array or tuple kind to, and, for such a kernel
bound at module level, the definitions that mention it (their allocations could override
that kind).
Anything the scan cannot account for (an unterminated string, a form feed, an f-string on a
Python that lets it nest quotes) gives None: the whole file is parsed.

Two checks make a wrong cut harmless: the kept statements must parse whole and apart
(`holds_exactly`), and, in a file with findings, the blanked ones must parse too
(`rest_parses`), so the whole file is known to parse before semfix reports on it or
rewrites it.
"""

from __future__ import annotations

import ast
import bisect
import re
import symtable
import sys
from dataclasses import dataclass
from typing import Callable, NamedTuple

from semfix.skim import aliases_of, allocations

# The rest of a comment or a string, from its first character (prefixes need no matching: a
# prefix is not part of the span that hides brackets and line starts), unrolled so that no
# character is tried twice.
_COMMENT = re.compile(r"#[^\r\n]*")
_STRING = {
    "'''": re.compile(r"'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''", re.DOTALL),
    '"""': re.compile(r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""', re.DOTALL),
    "'": re.compile(r"'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'", re.DOTALL),
    '"': re.compile(r'"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"', re.DOTALL),
}
# Since Python 3.12 an f-string may hold its own quotes (`f"{d["k"]}"`), which the scan above
# would misread; t-strings (3.14) likewise.
_NESTING_STRING = re.compile(r"(?<![A-Za-z0-9_])[rRbBuU]?[fFtT][rRbB]?['\"]")
_FORM_FEED = re.compile(r"^[ \t]*\f", re.MULTILINE)
# A line of code text that starts at column 0 with something other than a closing bracket.
_LINE_START = re.compile(r"\n(?=[^\s)\]}])")  # a literal first: searched for fast
_CONTINUES = re.compile(r"(?:else|elif|except|finally)(?![A-Za-z0-9_])")
_DEFINITION = re.compile(r"(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)|class[ \t]+([A-Za-z_][A-Za-z0-9_]*)")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DEF_NAME = re.compile(r"def[ \t]+([A-Za-z_][A-Za-z0-9_]*)")  # also in strings: only over-reports
_NEWLINE = re.compile("\n")
# A comment runs to the end of its line: a comment that could stop early would backtrack
# exponentially on a line of `#`s.
_GAP = r"(?:[ \t\f\r\n\\]|#[^\r\n]*(?![^\r\n]))*"
_VIEW_REACH = 200  # characters looked back for a `[`; a longer list only over-reports
_BEFORE_DISPLAY = frozenset("=(,[{:")  # a `[` after one of these opens a list, not a subscript
# Each starts with a literal, which the regex engine searches for fast.
_SUBSCRIPT_ARGUMENT = re.compile(r"\](?=" + _GAP + r"[,)])")  # an argument ending in a subscript
# An argument that is a plain `.at[i]` view: nothing nested, no slice, no line break.
_VIEW_ARGUMENT = re.compile(r"\.[ \t]*at[ \t]*\[[^\[\]:\r\n#'\"]*\](?=" + _GAP + r"[,)])")
_HOT = [
    re.compile(r"\[[\s(\\]*(?:\.\.\.|\)|#)(?!\][ \t]*=(?!=))"),  # a read, `[...]` or `[()]`, not stored to
    re.compile(r"global(?![A-Za-z0-9_])"),  # a longer name ending so only over-reports
    re.compile(r"nonlocal(?![A-Za-z0-9_])"),
    re.compile(r":="),
]
_ALLOCATORS = frozenset({"pallas_call", "run_scoped"})
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_PLAIN_SCRATCH = re.compile(
    r"scratch_shapes[ \t]*=[ \t]*[\[(][ \t\r\n]*(?:" + _DOTTED + r"[ \t\r\n]*,[ \t\r\n]*)*(?:" + _DOTTED + r"[ \t\r\n]*)?[\])]"
)
_PARAMETERS = re.compile(r"def[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*\([^)]*\)")
# A bare name as an argument (or any element of a tuple, or after `=`): only over-reports.
_BARE_ARGUMENT = re.compile(r"[(,=]" + _GAP + r"([A-Za-z_][A-Za-z0-9_]*)(?=" + _GAP + r"[,)])")
_SMALL = 8_000  # characters: below this, parsing the whole file costs less than cutting it


class _Statement(NamedTuple):
    first: int  # 1-based line numbers, inclusive
    last: int
    start: int  # offsets into the text
    end: int
    name: str | None  # the name a definition binds; None for any other statement
    kind: str  # "def", "class" or "other"


@dataclass(frozen=True)
class SparseModule:
    """The text to parse instead of the whole file, and what the blanked statements bind."""

    source: str
    statements: tuple[_Statement, ...]
    blanked: frozenset[int]  # indexes into `statements`
    text: str
    starts: list[int]  # where each line of `source` starts (line breaks are `\n` or `\r\n`)

    @property
    def stubs(self) -> list[tuple[str, str]]:
        """(name, "def" or "class") for each blanked definition."""
        return [(self.statements[i].name, self.statements[i].kind) for i in sorted(self.blanked)]  # type: ignore[misc]

    @classmethod
    def of(cls, source: str) -> SparseModule | None:
        """None when nothing would be blanked, or the scan cannot account for the file."""
        if len(source) < _SMALL or "barry_as_FLUFL" in source:  # that future import changes the grammar
            return None
        starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
        statements = _statements(source, starts)
        if statements is None:
            return None
        return cls._build(source, statements, _unneeded(source, statements, starts), starts)

    @classmethod
    def _build(
        cls, source: str, statements: tuple[_Statement, ...], blanked: frozenset[int], starts: list[int]
    ) -> SparseModule | None:
        if not blanked:
            return None
        return cls(source, statements, blanked, _only(source, statements, lambda index: index not in blanked), starts)

    def holds_exactly(self, tree: ast.Module) -> bool:
        """Does the parsed text hold each kept statement whole, and nothing across them? A cut
        in the wrong place (inside a string or brackets) would show as a node across a cut."""
        kept = [s for index, s in enumerate(self.statements) if index not in self.blanked]
        firsts = [s.first for s in kept]
        seen = set()
        for node in tree.body:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
            index = bisect.bisect_right(firsts, first) - 1
            if index < 0 or node.end_lineno > kept[index].last:  # type: ignore[operator]
                return False
            seen.add(index)
        return len(seen) == len(kept)

    def rest_parses(self) -> bool:
        """Do the blanked statements parse, in their places? Then, as the kept ones parse and
        every cut starts a statement, the whole file parses: a file semfix reports on or
        rewrites must. CPython's symbol table pass parses without building Python objects,
        faster than `ast.parse`, and rejects a little more (which only costs a full parse)."""
        rest = _only(self.source, self.statements, lambda index: index in self.blanked)
        try:
            symtable.symtable(rest, "<semfix>", "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
        return True

    def keeping(self, read_names: set[str], kernels: set[str]) -> SparseModule | None:
        """This module with more of its blanked definitions kept (None if that keeps them all;
        itself if it keeps none): those that mention a name assigned a read, and, for each
        kernel an allocation gives a kind to, its definition and any that mention it when it is
        bound at module level (where another allocation could override that kind)."""
        mentioning = read_names | (kernels & _module_functions(self.source, self.statements))
        kept = {
            index
            for index in self.blanked
            if self.statements[index].name in kernels
            or (mentioning and mentioning.intersection(_WORD.findall(self.source, self.statements[index].start, self.statements[index].end)))
        }
        if not kept:
            return self
        return SparseModule._build(self.source, self.statements, self.blanked - kept, self.starts)


def _list_display(source: str, end: int) -> bool:
    """Does the `]` at `end` close a list display, which cannot be a finding, rather than a
    subscript? Only brackets with nothing nested are read; a `[` after `=`, `(`, `,`, `[`,
    `{` or `:` opens a list."""
    opener = source.rfind("[", max(0, end - _VIEW_REACH), end)
    if opener < 0 or "]" in source[opener + 1 : end]:
        return False
    before = source[max(0, opener - 40) : opener].rstrip(" \t")
    return not before or before[-1] in _BEFORE_DISPLAY


def _allocation_matters(
    source: str, statement: _Statement, functions: set[str], aliases: dict[str, set[str]]
) -> bool:
    """Could this definition's allocations bear on a finding? They give kinds to the kernels
    they name: another definition of this file (whose parameters the engine pairs after
    parsing), or one defined inside this statement. Such a kind matters there only where a
    parameter that may be a semaphore array is passed whole as an argument (SEM004).

    Allocations that give no kind at all (plain `pallas_call`s whose scratch entries are all
    dotted names) still make their kernels' parameters "unknown", which overrides a kind
    another allocation gives the same kernel: the engine keeps such a blanked definition
    when it mentions a kernel that has a kind (see `SparseModule.keeping`)."""
    text = source[statement.start : statement.end]
    if _gives_no_kind(text, aliases):
        return False
    if set(_WORD.findall(text)) & (functions - {statement.name}):
        return True  # cheaper to parse it than to read its allocations from the text
    found = allocations(text.encode("utf-8", "surrogatepass"), aliases)
    if found is None:
        return True
    kinds, arrays = found
    if not kinds:
        return False
    calls = _PARAMETERS.sub("", text)  # a parameter list is no call's arguments
    return any(name in arrays for name in _BARE_ARGUMENT.findall(calls))


def _module_functions(source: str, statements: tuple[_Statement, ...]) -> set[str]:
    """The functions bound at module level: top-level definitions, and those in `if` or `try`."""
    functions = {s.name for s in statements if s.kind == "def"}
    for statement in statements:
        if statement.kind == "other":
            functions.update(_DEF_NAME.findall(source, statement.start, statement.end))
    return functions  # type: ignore[return-value]


def _gives_no_kind(text: str, aliases: dict[str, set[str]]) -> bool:
    """Is every allocation here a `pallas_call`, by that name, whose `scratch_shapes` (if any)
    is a list or tuple of plain dotted names? Anything else is read by the skim instead."""
    if "run_scoped" in text or "grid_spec" in text or any(alias in text for alias in aliases):
        return False
    return len(_PLAIN_SCRATCH.findall(text)) == text.count("scratch_shapes")


def _only(source: str, statements: tuple[_Statement, ...], keep: Callable[[int], bool]) -> str:
    """The source with every statement not kept cut to its line breaks."""
    parts, cursor = [], 0
    for index, statement in enumerate(statements):
        if not keep(index):
            parts.append(source[cursor : statement.start])
            parts.append(_line_breaks(source[statement.start : statement.end]))
            cursor = statement.end
    parts.append(source[cursor:])
    return "".join(parts)


def _line_breaks(text: str) -> str:
    """Only the line breaks of `text`, so every later line keeps its number."""
    return "\r\n" * text.count("\r\n") + "\n" * (text.count("\n") - text.count("\r\n"))


def _code(source: str) -> str | None:
    """The source with comments removed and each string cut to one letter plus its line breaks
    (and a space, so that what follows a string that spans lines is not a line start).

    Found with `str.find`, much faster than a regular expression trying every position: only
    the quotes and `#`s cost Python work."""
    if _FORM_FEED.search(source) or "\0" in source:
        return None
    if sys.version_info >= (3, 12) and _NESTING_STRING.search(source):
        return None
    find = source.find
    parts: list[str] = []
    cursor = 0
    upcoming = {mark: find(mark) for mark in "#'\""}
    while True:
        positions = [p for p in upcoming.values() if p >= 0]
        if not positions:
            break
        start = min(positions)
        parts.append(source[cursor:start])
        if source[start] == "#":
            end = _COMMENT.match(source, start).end()  # type: ignore[union-attr]
        else:
            quote = source[start : start + 3]
            found = _STRING[quote if quote in _STRING else source[start]].match(source, start)
            if found is None:
                return None  # a string that never closes
            end = found.end()
            breaks = source.count("\n", start, end)
            # What follows a string on its last line does not start that line: indent it.
            parts.append("S" + "\n" * breaks + " " if breaks else "S")
        cursor = end
        for mark, position in upcoming.items():
            if 0 <= position < end:
                upcoming[mark] = find(mark, end)
    parts.append(source[cursor:])
    return "".join(parts)


def _statements(source: str, starts: list[int]) -> tuple[_Statement, ...] | None:
    """The top-level statements, each from its first line (decorators included) to the line
    before the next one; None if the scan cannot account for the file."""
    if source.count("\r") != source.count("\r\n"):
        return None
    code = _code(source)
    if code is None:
        return None
    heads: list[tuple[int, str]] = []  # (line, the code at its start) of each statement head
    depth, line, scanned = 0, 1, 0
    first_line = [0] if code[:1] and not code[:1].isspace() and code[:1] not in ")]}" else []
    count = code.count
    for position in first_line + [match.end() for match in _LINE_START.finditer(code)]:
        depth += count("(", scanned, position) + count("[", scanned, position) + count("{", scanned, position)
        depth -= count(")", scanned, position) + count("]", scanned, position) + count("}", scanned, position)
        line += count("\n", scanned, position)
        scanned = position
        if depth != 0 or code.endswith(("\\\n", "\\\r\n"), 0, position) or _CONTINUES.match(code, position):
            continue
        line_end = code.find("\n", position)
        heads.append((line, code[position : line_end if line_end >= 0 else len(code)]))  # names can be long
    statements: list[_Statement] = []
    index = 0
    while index < len(heads):
        first = 1 if not statements else heads[index][0]  # what precedes the first head joins it
        while index < len(heads) and heads[index][1].startswith("@"):  # decorators join their def
            index += 1
        head = heads[index][1] if index < len(heads) else ""
        index += 1
        following = heads[index][0] if index < len(heads) else len(starts) + 1
        definition = _DEFINITION.match(head)
        name = (definition.group(1) or definition.group(2)) if definition else None
        kind = "other" if definition is None else ("class" if definition.group(2) else "def")
        end = starts[following - 1] if following - 1 < len(starts) else len(source)
        statements.append(_Statement(first, following - 1, starts[first - 1], end, name, kind))
    return tuple(statements) if statements else None


def _unneeded(source: str, statements: tuple[_Statement, ...], starts: list[int]) -> frozenset[int]:
    """The definitions that hold nothing a finding could come from (see the module docstring)."""
    aliases = aliases_of(source)
    if aliases is None:
        return frozenset()
    firsts = [s.first for s in statements]

    def statement_at(offset: int) -> int:
        return bisect.bisect_right(firsts, bisect.bisect_right(starts, offset)) - 1

    needed = {statement_at(m.start()) for pattern in _HOT for m in pattern.finditer(source)}
    views = {match.end() - 1 for match in _VIEW_ARGUMENT.finditer(source)}
    for match in _SUBSCRIPT_ARGUMENT.finditer(source):
        end = match.start()
        if end not in views and not _list_display(source, end):
            needed.add(statement_at(end))
    allocators = _ALLOCATORS | {alias for alias, meanings in aliases.items() if meanings & _ALLOCATORS}
    patterns = [re.compile(re.escape(name) + r"(?![A-Za-z0-9_])") for name in sorted(allocators)]  # each fast
    functions = _module_functions(source, statements)
    for index in {statement_at(m.start()) for pattern in patterns for m in pattern.finditer(source)} - needed:
        if _allocation_matters(source, statements[index], functions, aliases):
            needed.add(index)
    return frozenset(
        index for index, statement in enumerate(statements) if statement.name is not None and index not in needed
    )
