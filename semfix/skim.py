"""Skimming: proving from a file's bytes that no rule can fire, so it is never parsed.

The byte prefilter passes every file that names Pallas and a catalog function: every kernel
file, correct or not, and parsing the correct ones is most of a repository run. Every
finding sits on a semaphore argument of a catalog call, and that argument is a subscript
other than a plain `.at[i]` view, a name assigned somewhere in the file (SEM003), or a name
bound to a semaphore-array allocation (SEM004). This module finds every catalog call in the
raw bytes, cuts out its arguments with a small string- and bracket-aware scanner, and clears
the file only when no semaphore argument can have one of those shapes.

It gives up (the file is parsed) on anything it does not model: an f-string or a backslash
in a call it reads, an encoding other than UTF-8, a non-ASCII name where it reads names, a
generic kernel, an allocator through `functools.partial`, `core_map` scratch shapes. It must never clear a file an engine would flag; the tests hold it to that.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from semfix.catalog import FUNCTION_NAMES, MODULES

# Semaphore positions and keywords per function name, over every module exporting the name.
_POSITIONS: dict[str, frozenset[int]] = {}
_KEYWORDS: dict[str, frozenset[str]] = {}
for _ops in MODULES.values():
    for _name, _op in _ops.items():
        _positions = {p.position for p in _op.sem_params if p.position is not None}
        _POSITIONS[_name] = _POSITIONS.get(_name, frozenset()) | _positions
        _KEYWORDS[_name] = _KEYWORDS.get(_name, frozenset()) | {p.name for p in _op.sem_params}

_ALLOCATORS = frozenset({"pallas_call", "run_scoped"})
_ALIASABLE = FUNCTION_NAMES | _ALLOCATORS | {"partial", "core_map"}
_ENCODED = {name: name.encode() for name in _ALIASABLE}


def _alternation(names: object) -> bytes:
    return b"|".join(re.escape(n.encode()) for n in sorted(names, key=len, reverse=True))  # type: ignore[attr-defined]


_IDENT = rb"[A-Za-z_][A-Za-z0-9_]*"
# A comment always runs to the end of its line: anything else backtracks exponentially on `###`.
_COMMENT = rb"#[^\r\n]*(?![^\r\n])"
_BLANK = rb"(?:[ \t\f\r\n\\]|" + _COMMENT + rb")"
_AS = re.compile(rb"as" + _BLANK + rb"+(" + _IDENT + rb")")
_BEFORE_AS = re.compile(rb"(" + _IDENT + rb")(?=" + _BLANK + rb"+\Z)")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
# Between a callee's name and its `(`: blanks, comments, backslashes, or `)` closing `(pl.f)`.
_GAP = rb"(?:[ \t\f\r\n)\\]|" + _COMMENT + rb")*"
_SPECIAL = re.compile(rb"[()\[\]{},#'\"\\]")
_LINE_END = re.compile(rb"[\r\n]|\Z")
_STRING_END = {
    b"'": re.compile(rb"(?:[^'\\\r\n]|\\.)*'", re.DOTALL),
    b'"': re.compile(rb'(?:[^"\\\r\n]|\\.)*"', re.DOTALL),
    b"'''": re.compile(rb"(?:[^\\]|\\.)*?'''", re.DOTALL),
    b'"""': re.compile(rb'(?:[^\\]|\\.)*?"""', re.DOTALL),
}
_PLAIN_PREFIXES = frozenset({b"", b"r", b"u", b"b", b"br", b"rb"})
_KEYWORD_ARG = re.compile(rb"(" + _IDENT + rb")\s*=(?!=)")
# Any `def name(`, even in a string or after other letters: more headers only over-report.
# A `[` after the name opens type parameters (`def f[T](...)`): not modelled, see `_signatures`.
_HEADER = re.compile(rb"def(?:[ \t\f]|\\\r?\n)+(" + _IDENT + rb")(?:[ \t\f]|\\\r?\n)*[(\[]")
_NAME = re.compile(_IDENT + rb"\Z")
_LEADING_NAME = re.compile(_IDENT)
_CALLEE = re.compile(rb"[A-Za-z_][A-Za-z0-9_.\s]*\(")
# An argument list with no comments, backslashes or braces, strings only on one line, and
# brackets nested three deep at most: what nearly every call looks like.
# A one-line string, not part of a triple quote: `"""a", "b"""` must not split at its comma.
_SHORT_STRING = rb"(?<!\")\"[^\"\\\r\n{}]*\"(?!\")|(?<!')'[^'\\\r\n{}]*'(?!')"
_PLAIN = rb"(?:[^()\[\]{}'\"#\\]|" + _SHORT_STRING + rb")"
_NESTED = _PLAIN + rb"*"
for _ in range(2):
    _NESTED = rb"(?:" + _PLAIN + rb"|\[" + _NESTED + rb"\]|\(" + _NESTED + rb"\))*"
_SIMPLE_INNER = rb"(?:" + _PLAIN + rb"|\[" + _NESTED + rb"\]|\(" + _NESTED + rb"\))*"
_SIMPLE_ITEM = re.compile(
    rb"(?:[^,()\[\]{}'\"#\\]|" + _SHORT_STRING + rb"|\[" + _NESTED + rb"\]|\(" + _NESTED + rb"\))+"
)
_SIMPLE_CALL = re.compile(rb"[(\[](" + _SIMPLE_INNER + rb")[)\]]")
_READ_ARGUMENT = re.compile(rb"\[[ \t]*(?:\.\.\.|\([ \t]*\))[ \t]*\][ \t]*[,)]")
_OPEN_CATALOG_CALL = re.compile(
    rb"(?:" + _alternation(FUNCTION_NAMES) + rb")[ \t]*\((?:[^()\r\n]|\([^()\r\n]*\))*\Z"
)
# `=` then, backwards, the name assigned: a comment may sit between (`(v  # note` NL `) = x`).
_ASSIGNED_REVERSED = re.compile(rb"(?<!=)=(?:[ \t\f\r\n\\)]|(?<=[\r\n])[^\r\n]*#)*([A-Za-z0-9_]+)(?!\.)")
_AT_BEFORE = re.compile(rb"\.\s*at\s*\Z")


class _GiveUp(Exception):
    """Something the skim does not model: the file must be parsed."""


def clears(data: bytes) -> bool:
    """True only if no rule (SEM001-SEM004) can fire anywhere in this source."""
    try:
        return _Skim(data).clears()
    except _GiveUp:
        return False


_MIGRATED_NAME = re.compile(rb"semaphore_(?:signal|wait|read)")


def may_migrate(data: bytes, enabled: frozenset[str]) -> bool:
    """Could an enabled migration fire, by the bytes alone?

    SEM101 rewrites a reference that resolves to `jax.experimental.pallas.tpu.semaphore_*`,
    so the source spells `tpu` (in the import) and the function's name (in the import or the
    attribute). SEM102 renames a `dec` keyword of a call that resolves to `semaphore_wait`,
    whose name the source spells the same way.
    """
    if "SEM101" in enabled and b"tpu" in data and _MIGRATED_NAME.search(data) is not None:
        return True
    return "SEM102" in enabled and b"dec" in data and b"semaphore_wait" in data


def clears_for(data: bytes, enabled: frozenset[str]) -> bool:
    """True only if no enabled rule can fire: the skim for SEM001-SEM004, and the spelling
    every migration needs."""
    return not may_migrate(data, enabled) and clears(data)


class _Skim:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.meanings: dict[str, set[str]] = {}  # a spelled name -> the catalog names it may mean
        for match in _AS.finditer(data):
            if data[match.end() : match.end() + 1] >= b"\x80":
                raise _GiveUp("a non-ASCII name after `as`")
            window = data[max(0, match.start() - 300) : match.start()]
            for before in {*_BEFORE_AS.findall(window), _name_before(data, match.start())}:
                if before is not None and before.decode() in _ALIASABLE:
                    self.meanings.setdefault(match.group(1).decode(), set()).add(before.decode())
        self.names: set[bytes] = set()  # the semaphore arguments that are bare names
        self.headers: dict[bytes, list[int]] | None = None  # def name -> where its `(` is
        self.all_calls: list[tuple[set[str], list[bytes]]] | None = None
        self.reading: frozenset[str] = _ALIASABLE  # the names whose calls are read
        self.signatures: dict[int, tuple[list[bytes], list[bytes], bool]] = {}  # by where `(` is

    def check_file(self) -> None:
        data = self.data
        if b"\0" in data or data.count(b"\r") != data.count(b"\r\n"):
            raise _GiveUp("NUL bytes or lone carriage returns: the engines report these")
        cookie = _COOKIE.search(data[: _nth_line_end(data, 2)])
        if cookie is not None and cookie.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            raise _GiveUp("an encoding other than UTF-8")

    def clears(self) -> bool:
        self.check_file()
        self._give_up_on_an_obvious_read()
        for functions, arguments in self._calls(FUNCTION_NAMES):
            for argument in _semaphore_arguments(functions, arguments):
                name = _shape(argument)
                if name is not None:
                    self.names.add(name)
        if not self.names:
            return True
        if self._assigned():
            return False
        return not self._array_parameter()

    def _give_up_on_an_obvious_read(self) -> None:
        """The commonest bug, `f(..., sem[...])`, found fast: a file that has one is parsed anyway."""
        data = self.data
        for match in _READ_ARGUMENT.finditer(data):
            window = data[max(0, match.start() - 400) : match.start()]
            if _OPEN_CATALOG_CALL.search(window):
                raise _GiveUp("a value read out of a Ref in a catalog call")

    def _calls(self, wanted: frozenset[str]) -> Iterator[tuple[set[str], list[bytes]]]:
        """(what the callee may be, argument texts) for everything that may call a wanted name."""
        if self.all_calls is None:
            self.all_calls = self._read_calls()
        for meanings, arguments in self.all_calls:
            if meanings & wanted:
                yield meanings & wanted, arguments

    def _read_calls(self) -> list[tuple[set[str], list[bytes]]]:
        """Every distinct call to a name of interest, read in one pass over the file.

        Over-reports on purpose: a longer name ending in a wanted one counts too. Argument
        lists without strings or comments, nested three deep at most, are cut out in C.
        """
        spelled = {name: {name} for name in _ALIASABLE}
        for alias, meanings in self.meanings.items():
            spelled[alias] = spelled.get(alias, set()) | meanings
        data = self.data
        present = frozenset(
            name for name, meanings in spelled.items() if (_ENCODED.get(name) or name.encode()) in data and meanings & self.reading
        )
        if not present:
            return []
        pattern = _call_pattern(present)
        calls: dict[tuple[bytes, bytes], list[bytes]] = {}
        plain_only = True
        for callee, inner in set(pattern.findall(data)):
            if inner:  # `inner` holds the closing `)`: a plain argument list, read in C
                items = _SIMPLE_ITEM.findall(inner[:-1])
                calls[callee, inner] = [item.strip() for item in items if not item.isspace()]
            else:
                plain_only = False
        if not plain_only:
            for match in pattern.finditer(data):
                if not match.group(2):
                    arguments = _arguments(data, match.end() - 1)[0]
                    calls[match.group(1), b", ".join(arguments)] = arguments
        return [(spelled[callee.decode()], arguments) for (callee, _), arguments in calls.items()]

    def _assigned(self) -> bool:
        """Could a bare name be an assignment target? (keyword arguments count too: cheaper)

        Read backwards, every assignment starts with its `=`, which regular expressions
        find fast; the name is then the identifier that follows.
        """
        found = {name[::-1] for name in _ASSIGNED_REVERSED.findall(self.data[::-1])}
        return bool(found & self.names)

    # -- allocations ------------------------------------------------------------------------
    def _array_parameter(self) -> bool:
        """Could a bare name be a parameter that a semaphore-array allocation is bound to?"""
        if b"SemaphoreType" not in self.data:
            return False  # every array allocation is a call through SemaphoreType
        return any(name in self.names and (entry is None or _arrayish(entry)) for name, entry in self.pairs())

    def _allocations(self) -> Iterator[tuple[set[str], list[bytes], dict[bytes, bytes]]]:
        """(what the callee may be, argument texts, keyword arguments) of each allocation."""
        for _, arguments in self._calls(frozenset({"partial"})):
            if arguments and any(self._means(_terminal(arguments[0]), name) for name in _ALLOCATORS):
                raise _GiveUp("an allocator through functools.partial")
        for _, arguments in self._calls(frozenset({"core_map"})):
            if any(a.startswith((b"*", b"scratch_shapes")) for a in arguments):
                raise _GiveUp("core_map scratch shapes")
        for meanings, arguments in self._calls(_ALLOCATORS):
            keywords = {m.group(1): a[m.end() :].strip() for a in arguments if (m := _KEYWORD_ARG.match(a))}
            yield meanings, arguments, keywords

    def pairs(self) -> list[tuple[bytes, bytes | None]]:
        """(parameter, allocation entry) for every entry that may be bound to a parameter; the
        entry is None where it could be anything.

        Mirrors how the engines pair `scratch_shapes` entries with a kernel's last parameters
        and `run_scoped` allocations with its body's parameters, but by name, without scopes:
        it can only over-report.
        """
        pairs: list[tuple[bytes, bytes | None]] = []
        for meanings, arguments, keywords in self._allocations():
            positional = [a for a in arguments if not a.startswith(b"*") and not _KEYWORD_ARG.match(a)]
            if "pallas_call" in meanings:
                pairs += self._scratch_pairs(positional, keywords)
            if "run_scoped" in meanings:
                pairs += self._scoped_pairs(positional, keywords, arguments)
        return pairs

    def _means(self, name: bytes | None, target: str) -> bool:
        if name is None:
            return False
        text = name.decode()
        return text == target or target in self.meanings.get(text, ())

    def _scratch_pairs(self, positional: list[bytes], keywords: dict[bytes, bytes]) -> list[tuple[bytes, bytes | None]]:
        kernel = keywords.get(b"kernel", positional[0] if positional else None)
        scratch = keywords.get(b"scratch_shapes")
        grid_spec = keywords.get(b"grid_spec")
        if scratch is None and grid_spec is not None and grid_spec.endswith(b")"):
            inner = {m.group(1): a[m.end() :].strip() for a in _call_arguments(grid_spec) if (m := _KEYWORD_ARG.match(a))}
            scratch = inner.get(b"scratch_shapes")
        if kernel is None or scratch is None:
            return []
        entries = _literal_entries(scratch)
        pairs: list[tuple[bytes, bytes | None]] = []
        for params, _, _ in self._signatures(kernel):
            if entries is None:
                pairs += [(name, None) for name in params]
            else:
                pairs += zip(params[max(len(params) - len(entries), 0) :], entries)
        return pairs

    def _scoped_pairs(
        self, positional: list[bytes], keywords: dict[bytes, bytes], arguments: list[bytes]
    ) -> list[tuple[bytes, bytes | None]]:
        pairs: list[tuple[bytes, bytes | None]] = list(keywords.items())
        bodies = [*positional[:1], *keywords.values()]  # libcst takes the first argument, keyword or not
        starred = any(a.startswith(b"*") for a in arguments)
        for body in bodies:
            for params, keyword_only, _ in self._signatures(body):
                if starred:
                    pairs += [(name, None) for name in (*params, *keyword_only)]
                pairs += zip(params, positional[1:])
        return pairs

    def _signatures(self, node: bytes) -> Iterator[tuple[list[bytes], list[bytes], bool]]:
        """(positional, keyword-only parameter names, has *args) of every def `node` may name."""
        if not node.isascii():
            raise _GiveUp("a non-ASCII function name")
        while not _NAME.match(node):  # functools.partial(kernel, ...): the first argument
            if not node.endswith(b")"):
                return
            inner = _call_arguments(node)
            if not inner:
                return
            node = inner[0]
        if self.headers is None:
            self.headers = {}
            for match in _HEADER.finditer(self.data):
                self.headers.setdefault(match.group(1), []).append(match.end() - 1)
        for open_at in self.headers.get(node, ()):
            if self.data[open_at : open_at + 1] == b"[":
                raise _GiveUp("a generic function")
            if open_at not in self.signatures:
                self.signatures[open_at] = _parameters(_arguments(self.data, open_at)[0])
            yield self.signatures[open_at]


@functools.lru_cache(maxsize=64)
def _call_pattern(spelled: frozenset[str]) -> re.Pattern[bytes]:
    """A call's callee, and its argument list when that is plain (else the match ends at `(`)."""
    callee = rb"(" + _alternation(spelled) + rb")(?![A-Za-z0-9_])" + _GAP
    # The argument list is read in a lookahead, so the next match can start inside it: a call
    # nested in another's arguments is found too.
    return re.compile(callee + rb"\((?=(" + _SIMPLE_INNER + rb"\)))?")


def _terminal(expression: bytes) -> bytes | None:
    found = re.search(rb"(" + _IDENT + rb")\s*\Z", expression)
    return found.group(1) if found else None


def _semaphore_arguments(functions: set[str], arguments: list[bytes]) -> Iterator[bytes]:
    """The arguments bound to semaphore parameters, as the engines bind them."""
    positions = frozenset().union(*(_POSITIONS.get(f, ()) for f in functions))
    keywords = frozenset().union(*(_KEYWORDS.get(f, ()) for f in functions))
    position: int | None = 0
    for argument in arguments:
        if argument.startswith(b"*"):
            if not argument.startswith(b"**"):
                position = None
            continue
        keyword = _KEYWORD_ARG.match(argument)
        if keyword is not None:
            if keyword.group(1).decode() in keywords:
                yield argument[keyword.end() :].strip()
        elif position is not None:
            if position in positions:
                yield argument
            position += 1


def _parameters(items: list[bytes]) -> tuple[list[bytes], list[bytes], bool]:
    positional: list[bytes] = []
    keyword_only: list[bytes] = []
    star = after_star = False
    for item in items:
        if item == b"/" or item.startswith(b"**"):
            continue
        if item.startswith(b"*"):
            after_star = True
            star = star or bool(item[1:].strip())  # `*args`, not a bare `*`
            continue
        name = _LEADING_NAME.match(item)
        if name is None or not item.isascii():
            raise _GiveUp("a parameter list it cannot read")
        (keyword_only if after_star else positional).append(name.group())
    return positional, keyword_only, star


def _opening(expression: bytes) -> int:
    """Where the argument list of a plain call `a.b(...)` opens; gives up on anything else."""
    callee = _CALLEE.match(expression)
    if callee is None:
        raise _GiveUp("a call it cannot read")
    return callee.end() - 1


def _call_arguments(expression: bytes) -> list[bytes]:
    """The argument texts of `expression`, which must be one plain call and nothing more."""
    arguments, end = _arguments(expression, _opening(expression))
    if end != len(expression) - 1:
        raise _GiveUp("a call it cannot read")
    return arguments


def _literal_entries(expression: bytes) -> list[bytes] | None:
    """The entries of a list or tuple display; None for anything else (a name, a sum)."""
    if not expression.startswith((b"[", b"(")):
        return None
    entries, end = _arguments(expression, 0)
    if end != len(expression) - 1 or any(e.startswith(b"*") for e in entries):
        return None
    return entries


def _arrayish(entry: bytes) -> bool:
    """Could this allocation entry be a call with arguments (an array allocation)?"""
    return b"(" in entry


def _name_before(data: bytes, end: int) -> bytes | None:
    """The identifier before `end`, across blank lines and comments of any length.

    Line by line backwards, each cut at its first `#`; the 300-byte window in `_Skim` covers
    a `#` inside a string, which this would misread.
    """
    position = end
    while True:
        start = max(data.rfind(b"\n", 0, position), data.rfind(b"\r", 0, position)) + 1
        line = data[start:position].split(b"#", 1)[0].rstrip(b" \t\f\\\r\n")
        if line:
            found = _NAME.search(line)
            return found.group() if found else None
        if start == 0:
            return None
        position = start - 1


def _nth_line_end(data: bytes, count: int) -> int:
    position = 0
    for _ in range(count):
        found = _LINE_END.search(data, position)
        position = found.end() if found is not None else len(data)
    return position


def _arguments(data: bytes, open_at: int) -> tuple[list[bytes], int]:
    """The top-level item texts of the bracket opened at `open_at` (comments cut out), and
    where it closes. Strings are skipped whole, so brackets and commas in them do not count."""
    simple = _SIMPLE_CALL.match(data, open_at)
    if simple is not None:  # the common case, in C: no strings, comments or nesting beyond `x[i, j]`
        return [item.strip() for item in _SIMPLE_ITEM.findall(simple.group(1)) if not item.isspace()], simple.end() - 1
    depth = 0
    arguments: list[bytes] = []
    pieces: list[bytes] = []
    start, position = open_at + 1, open_at
    while True:
        found = _SPECIAL.search(data, position)
        if found is None:
            raise _GiveUp("an unclosed bracket")
        index = found.start()
        char = data[index : index + 1]
        position = index + 1
        if char in b"([{":
            depth += 1
        elif char in b")]}":
            depth -= 1
            if depth == 0:
                pieces.append(data[start:index])
                arguments.append(b"".join(pieces).strip())
                return [a for a in arguments if a], index
        elif char == b",":
            if depth == 1:
                pieces.append(data[start:index])
                arguments.append(b"".join(pieces).strip())
                pieces, start = [], position
        elif char == b"#":
            end = _LINE_END.search(data, index).start()  # type: ignore[union-attr]
            pieces.append(data[start:index])
            start = position = end
        elif char == b"\\":
            raise _GiveUp("a backslash outside a string")
        else:
            position = _string_end(data, index)


def _string_end(data: bytes, quote_at: int) -> int:
    prefix_start = quote_at
    while prefix_start > 0 and data[prefix_start - 1 : prefix_start].isalpha():
        prefix_start -= 1
    if data[prefix_start:quote_at].lower() not in _PLAIN_PREFIXES:
        raise _GiveUp("an f-string, or a quote after a name")
    quote = data[quote_at : quote_at + 3]
    if quote not in _STRING_END:
        quote = quote[:1]
    end = _STRING_END[quote].match(data, quote_at + len(quote))
    if end is None:
        raise _GiveUp("an unterminated string")
    return end.end()


def _shape(argument: bytes) -> bytes | None:
    """The name a semaphore argument is, None if it cannot be a finding; gives up otherwise."""
    if not argument.isascii():
        raise _GiveUp("a non-ASCII argument")
    if _NAME.match(argument):
        return argument
    if b":=" in argument:
        raise _GiveUp("an assignment expression: the rules apply to its value")
    if argument.startswith(b"("):
        raise _GiveUp("a parenthesized argument")
    if argument.endswith(b"]"):
        if b"'" in argument or b'"' in argument:
            raise _GiveUp("a subscript with a string")
        depth, index = 0, len(argument) - 1
        while index >= 0:
            char = argument[index : index + 1]
            if char in b")]}":
                depth += 1
            elif char in b"([{":
                depth -= 1
                if depth == 0:
                    break
            index -= 1
        if index < 0 or b":" in argument[index:] or not _AT_BEFORE.search(argument, 0, index):
            raise _GiveUp("a subscript other than a plain `.at[i]` view")
    return None  # an attribute, a call, a constant, an expression: never a finding
