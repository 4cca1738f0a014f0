"""Skimming: proving from a file's bytes that no rule can fire, so it is never parsed.

The byte prefilter passes every kernel file, correct or not, and parsing the correct ones is
most of a repository run. What the skim reads, and what it gives up on (the file is then
parsed): docs/design.md, tier 2. It must never clear a file the engine would flag;
tests/test_skim.py holds it to that.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator

from semfix.catalog import (
    FUNCTION_NAMES,
    GRID_SPECS,
    KINDS_NEEDED,
    MODULES,
    SEMAPHORE_KINDS,
    alternation,
)
from semfix.engine import scan
from semfix.engine.scan import GiveUp
from semfix.patterns import alone, compiled, whole
from semfix.rules.table import opens_a_gate

# The positions and keywords of semaphore and DMA buffer parameters per function name, over
# every module exporting it: a DMA buffer can be a finding only in shapes a semaphore can.
_SEM_PARAMS: dict[str, set[int | str | None]] = {}
_SEMAPHORES_ONLY: dict[str, set[int | str | None]] = {}  # a view can pick a row only as a semaphore
for _ops in MODULES.values():
    for _name, _op in _ops.items():
        _params = _op.sem_params + _op.buffer_params
        _SEM_PARAMS.setdefault(_name, set()).update(x for p in _params for x in (p.name, p.position))
        _SEMAPHORES_ONLY.setdefault(_name, set()).update(x for p in _op.sem_params for x in (p.name, p.position))

# Per function name, the semaphore kinds one of its semaphore parameters refuses (the wrong-kind rule's).
_REFUSED: dict[str, set[str]] = {}
for _function_param, _accepted in KINDS_NEEDED.items():
    _REFUSED.setdefault(_function_param[0], set()).update(set(SEMAPHORE_KINDS) - _accepted)

_ALLOCATORS = frozenset({"pallas_call", "run_scoped", "kernel"})
# The fewest positional arguments of a JAX grid spec that reach its scratch shapes.
_SCRATCH_POSITION = min(order.index("scratch_shapes") + 1 for order in GRID_SPECS.values())
_ALIASABLE = FUNCTION_NAMES | _ALLOCATORS | {"partial", "core_map"}
# A name of interest holding a shorter one (`make_async_copy`, `sync_copy`), and where: it is
# spelled only where that one is, so its spellings are found among that one's, not in the file.
_HOLDS: dict[str, tuple[str, int]] = {
    name: (inner, name.index(inner))
    for name in _ALIASABLE
    for inner in sorted(n for n in _ALIASABLE if n != name and n in name)[:1]
}
# A comment always runs to the end of its line: anything else backtracks exponentially on `###`.
_COMMENT = rb"#[^\r\n]*(?![^\r\n])"
_BLANK = rb"(?:[ \t\f\r\n\\]|" + _COMMENT + rb")"
# The keyword, not the end of a longer name (`has x`: checked after the `as`, which keeps the
# scan fast); the alias is read ahead, so a comment ending in `as` cannot hide the real one.
_AS = compiled(rb"as(?<![A-Za-z0-9_]as)(?=" + _BLANK + rb"+(" + scan.IDENT + rb"))")
# An encoding declaration on line 1 or 2 (lone carriage returns are refused before this is read).
_COOKIE = compiled(rb"\A(?:[^\n]*\n)?[ \t\f]*#[^\n]*?coding[:=][ \t]*([-\w.]+)")
# Between a callee's name and its `(`: blanks, comments, backslashes, or `)` closing `(pl.f)`.
_GAP = rb"(?:[ \t\f\r\n)\\]|" + _COMMENT + rb")*"
# Any `def name(`, even in a string or after other letters: more headers only over-report.
# A `[` after the name opens type parameters (`def f[T](...)`): not modelled, see `_signatures`.
_HEADER = compiled(rb"def(?:[ \t\f]|\\\r?\n)+(" + scan.IDENT + rb")(?:[ \t\f]|\\\r?\n)*[(\[]")
# `getattr(pl, "semaphore_wait")`: a catalog callee by its name as a string (`Resolution.qualified`).
_GETATTR = compiled(rb"getattr[ \t]*\([^()]*?[\"'](?:" + alternation(FUNCTION_NAMES) + rb")[\"'][ \t]*\)")
_READ_ARGUMENT = compiled(rb"\[[ \t]*(?:\.\.\.|\([ \t]*\))[ \t]*\][ \t]*[,)]")
_OPEN_CATALOG_CALL = compiled(rb"(?:" + alternation(FUNCTION_NAMES) + rb")[ \t]*\((?:[^()\r\n]|\([^()\r\n]*\))*\Z")
# `=` then, backwards, the name assigned: a comment may sit between (`(v  # note` NL `) = x`).
_ASSIGNED_REVERSED = compiled(rb"=(?<!==)(?:[ \t\f\r\n\\)]|(?<=[\r\n])[^\r\n]*#)*([A-Za-z0-9_]+)(?!\.)")
# Backwards from a name: the dotted chain it ends (`pl.`), then parentheses, blanks and
# comments, then `=`. A `#` ends the line before it (read backwards): its code may be skipped too.
_ASSIGNED_VALUE_REVERSED = compiled(rb"(?:[\s\\]*\.[\s\\]*[A-Za-z0-9_]+)*(?:[\s\\(]|(?<=[\r\n])[^\r\n]*#)*=")
# At that `=` backwards: the name assigned, then perhaps another `=` (`a = b = f`).
_TARGET_REVERSED = compiled(rb"=[\s\\]*([A-Za-z0-9_]+)")
_CHAINED_REVERSED = compiled(rb"[\s\\]*=")
_WORD = compiled(rb"[A-Za-z0-9_]")
_DOTTED = compiled(scan.IDENT + rb"(?:\." + scan.IDENT + rb")*\Z")  # `kernel`, `self.kernel`
_LAMBDA = compiled(rb"lambda(?!\w)")
_CALLEE = compiled(rb"(?:" + scan.IDENT + rb"\.)*(" + scan.IDENT + rb")\(")  # a call's callee, its last name
_CALLED_AT = compiled(rb"[ \t\f]*\(")  # a name plainly called
_OPEN_AFTER = compiled(_GAP + rb"\(")  # after a callee's name, up to its `(`
_AT_BEFORE = compiled(rb"\.\s*at\s*\Z")
_VIEW_BASE = compiled(scan.IDENT + rb"(?=\s*\.\s*at\s*\[)")
_IF = compiled(alone(b"if") + rb"(?!\w)")  # `a if c else b`, and more (a comprehension's `if`, a string)
_PALLAS_SLICE = compiled(rb"(?:ds|dslice|Slice)\s*\(")  # `pl.ds(0, 2)`, and longer names ending so
# A parenthesized list of two items or more (a shape of two dimensions, and more): `(2, n)`.
_SHAPE_OF_TWO = compiled(rb"\([^(),]*[^(),\s][^(),]*,\s*[^()\s,]")


# Around a name in a target list: its other names, blanks, commas, brackets and stars. Each is
# matched from one occurrence of a name, within _NEAR bytes, so that no text costs more than that.
_TARGET = rb"[\w \t\f\r\n\\,()\[\]*]"
_LOOP_BEFORE_REVERSED = compiled(_TARGET + rb"*?rof(?![\w.])")  # back to `for`
_LOOP_AFTER = compiled(_TARGET + rb"*?(?<![\w.])in(?!\w)")  # on to `in`
_LINE_BEFORE_REVERSED = compiled(rb"[\w \t\f\\,()\[\]*]*(?:\n|\Z)")  # back to the line's start
_LINE_AFTER = compiled(_TARGET + rb"*=(?!=)")  # on to `=`
_NEAR = 400
_SUBSCRIPT = compiled(rb"(?:\w+\s*=\s*)?[\w.\s]+\[")  # an argument that may be a subscript, by keyword too
_CALL_REVERSED = compiled(rb"\([ \t\f]*\w")  # `f(`, read backwards: a call's arguments are no targets
_ANNOTATION = compiled(rb"\s*:[^=]*=(?!=)")  # after a name: `: T =`, an annotated assignment
_HELD_READ = compiled(rb"[ \t]*=[ \t]*[\w.]+(?<!\.at)[ \t]*\[")  # after a name: `= sems[`, no `.at[`
_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")  # `\w` of bytes
_NAME_OR_DOT = _WORD_BYTES | {ord(".")}


def _targeted(data: bytes, names: set[bytes]) -> bool:
    """Is one of `names` in a loop's target list (`for` ... `in`) or a line's first target list
    (`a, (v, b) =`)? And more, but not where a call's parenthesis stands between: `f(v, k=1)`."""
    for start, end in _spellings(data, names):
        before = data[max(0, start - _NEAR) : start][::-1]
        after = data[end : end + _NEAR]
        for back, on in ((_LOOP_BEFORE_REVERSED, _LOOP_AFTER), (_LINE_BEFORE_REVERSED, _LINE_AFTER)):
            targets = back.match(before)
            if targets and not _CALL_REVERSED.search(targets.group()) and on.match(after):
                return True
    return False


def _annotated(data: bytes, names: set[bytes]) -> bool:
    """Is one of `names` followed by `:` and anything but `=` up to an `=` that is no `==`: every
    annotated assignment to it, and more (a dict key, a lambda's parameter)?"""
    return any(_ANNOTATION.match(data, end) for _, end in _spellings(data, names))


def _spellings(data: bytes, names: Iterable[bytes], after_a_dot: bool = False) -> Iterator[tuple[int, int]]:
    r"""(start, end) of each spelling of one of `names` that is not inside a longer name, nor
    (unless `after_a_dot`) an attribute: `(?<![\w.])name(?!\w)`. Found by `bytes.find`: a
    pattern of them all starts with its look-behind, and Python's `re` tries that at every
    offset (and compiles each file's anew)."""
    before = _WORD_BYTES if after_a_dot else _NAME_OR_DOT
    for name in names:
        start = data.find(name)
        while start >= 0:
            end = start + len(name)
            if (not start or data[start - 1] not in before) and (end == len(data) or data[end] not in _WORD_BYTES):
                yield start, end
            start = data.find(name, start + 1)


def clears(data: bytes) -> bool:
    """True only if no rule on semaphore or DMA arguments can fire anywhere in this source."""
    try:
        return _Skim(data).clears()
    except GiveUp:
        return False


def clears_for(data: bytes, enabled: frozenset[str]) -> bool:
    """True only if no enabled rule can fire: the skim for the rules on semaphore and DMA
    arguments, and for each rule with a text gate (the migrations) the spelling it needs
    (`Gate.text_gate`)."""
    return not opens_a_gate(data, enabled) and clears(data)


class _Skim:
    def __init__(self, data: bytes) -> None:
        if b"\0" in data or b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):  # `in`: one memchr
            raise GiveUp("NUL bytes or lone carriage returns: the engines report these")
        cookie = _COOKIE.match(data)
        if cookie is not None and cookie.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            raise GiveUp("an encoding other than UTF-8")
        self.data = data
        # A spelled name -> the names of interest it may mean: itself, and what it imports `as`.
        self.meanings: dict[str, set[str]] = {name: {name} for name in _ALIASABLE}
        for match in _AS.finditer(data):
            if data[match.end(1) : match.end(1) + 1] >= b"\x80":
                raise GiveUp("a non-ASCII name after `as`")
            for before in scan.names_before(data, match.start()) & _ALIASABLE:
                self.meanings.setdefault(match.group(1).decode(), set()).add(before)
        self.headers: dict[bytes, list[int]] | None = None  # def name -> where its `(` is
        self.bases: set[bytes] = set()  # the names views of them are taken in catalog calls (`row` in `row.at[1]`)
        self.assigned: set[bytes] | None = None  # `_assigned`
        self.offsets: dict[str, list[int]] = {}  # `_offsets`
        self.parameters: dict[int, tuple[list[bytes], list[bytes]]] = {}  # `_parameters`

    def clears(self) -> bool:
        data = self.data
        if b"getattr" in data and _GETATTR.search(data):  # the pattern compiled where it may match
            raise GiveUp("a catalog function called through getattr")
        # The commonest bug, `f(..., sem[...])`, found fast: a file that has one is parsed anyway.
        for match in _READ_ARGUMENT.finditer(data):
            if _OPEN_CATALOG_CALL.search(data, max(0, match.start() - 400), match.start()):
                raise GiveUp("a value read out of a Ref in a catalog call")
        self._aliases()
        self.calls: list[tuple[set[str], list[bytes]]] = []
        names: set[bytes] = set()  # the semaphore arguments that are bare names
        views: set[bytes] = set()  # and the names of `.at[...]` views, which may pick a row
        # the wrong-kind rule: a bare name or an `.at[...]` view's name -> the kinds a call it is given to refuses
        refused: dict[bytes, set[str]] = {}
        checked: set[bytes] = set()  # the bare names found no target of a value
        for meanings, arguments in self._read_calls():  # each catalog call read as soon as it is cut out:
            self.calls.append((meanings, arguments))  # a kernel with a bug gives up early
            if meanings & FUNCTION_NAMES:
                self._note(meanings & FUNCTION_NAMES, arguments, names, views, refused)
                if names - checked and self._may_be_given_a_value(names - checked):
                    return False  # most files that fail, fail on a name of their first calls
                checked |= names
        for functions, arguments in self._partials():
            self._note(functions, arguments, names, views, refused)
        if names - checked and self._may_be_given_a_value(names - checked):
            return False
        if self.bases and _holds_a_read(frozenset(self.bases), data):
            raise GiveUp("a view of a local that may hold a value read (`row = sems[0]`, then `row.at[1]`)")
        if views and self._helper_given_a_read(views):
            raise GiveUp(
                "a helper's view of its parameter, given a subscript (`helper(sems[0])`, `sem.at[slot]` there)"
            )
        if not names and not views and not refused:
            return True
        if b"SemaphoreType" not in data:
            return True  # every semaphore-array allocation is a call through SemaphoreType
        # Could a bare name be a parameter that a semaphore-array allocation (a call) is bound to,
        # a view's name one that a shape of two or more dimensions is (a view may pick a row),
        # or a name given to a call an allocation of a kind that call refuses (the wrong-kind rule)?
        return not any(
            name in names
            and (entry is None or b"(" in entry)
            or name in views
            and entry is not None
            and _SHAPE_OF_TWO.search(entry)
            or name in refused
            and _spells(entry, refused[name])
            for name, entry in self._pairs()
        )

    def _may_be_given_a_value(self, names: set[bytes]) -> bool:
        """May a value reach one of these bare names: through a helper's parameter (the call of
        a helper passes what its parameter gets), or as an assignment target? Asked of each
        call's new names as soon as it is read, since a value can only be added, never taken away."""
        data = self.data
        # Could a bare name be an assignment target (keyword arguments count too: cheaper)? Read
        # backwards, every assignment starts with its `=`, which regular expressions find fast.
        if names & self._assigned():
            return True
        if b":" in data and _annotated(data, names):  # `v: T = x`, the annotation before `=`
            return True
        # `for a, v in ...`, `a, v = ...`: a value may reach `v`. Then the dearest: every def's parameters.
        return _targeted(data, names) or self._helper_called(names)

    def _note(
        self,
        functions: set[str],
        arguments: list[bytes],
        names: set[bytes],
        views: set[bytes],
        refused: dict[bytes, set[str]],
    ) -> None:
        """A catalog call's semaphore arguments: the bare names among them, the views' names,
        and what the wrong-kind rule asks of names and views; GiveUp on a shape that may be a finding."""
        kinds = set().union(*(_REFUSED.get(f, ()) for f in functions))
        semaphores = set(_semaphore_arguments(functions, arguments, _SEMAPHORES_ONLY))
        for argument in _semaphore_arguments(functions, arguments):
            name = _shape(argument)
            if name is not None:
                names.add(name)
            base = name or (view.group() if (view := _VIEW_BASE.match(argument)) else None)
            if name is None and base is not None:
                self.bases.add(base)
            if name is None and argument in semaphores:
                if _PALLAS_SLICE.search(argument):
                    raise GiveUp("a semaphore view that may take a slice (`pl.ds(...)`)")
                if base is not None:
                    views.add(base)
            if base is not None and kinds:
                refused.setdefault(base, set()).update(kinds)

    def _aliases(self) -> None:
        """Names a catalog function is assigned to (`wait = pl.semaphore_wait`, `a = b = f`) mean
        it too: the engine takes their calls for the function's. Over-reports: any spelling of one
        that is not plainly called and has an `=` before it (keywords too); gives up where no
        name is just before that `=` (`(wait) = f`, `x == f`)."""
        data = self.data
        for start, name in self._spelled(name for name, found in self.meanings.items() if found & FUNCTION_NAMES):
            end = start + len(name)
            if start and _WORD.match(data, start - 1) or _WORD.match(data, end) or _CALLED_AT.match(data, end):
                continue  # inside a longer name, or plainly called
            meaning = self.meanings[name] & FUNCTION_NAMES
            before = data[max(0, start - 400) : start][::-1]
            value = _ASSIGNED_VALUE_REVERSED.match(before)
            while value is not None:
                target = _TARGET_REVERSED.match(before, value.end() - 1)
                if target is None or before[target.end() : target.end() + 1] >= b"\x80":
                    raise GiveUp("a catalog function assigned to something other than an ASCII name")
                self.meanings.setdefault(target.group(1)[::-1].decode(), set()).update(meaning)
                value = _CHAINED_REVERSED.match(before, target.end())

    def _partials(self) -> list[tuple[set[str], list[bytes]]]:
        """`functools.partial(f, ...)` of a catalog function `f`, as a call of `f` with the rest."""
        found = []
        for _, arguments in self._calls(frozenset({"partial"})):
            function = scan.NAME.search(arguments[0].rstrip(b") \t\f\r\n\\")) if arguments else None
            meanings = self.meanings.get(function.group().decode(), set()) & FUNCTION_NAMES if function else set()
            if meanings:
                found.append((meanings, arguments[1:]))
        return found

    def _calls(self, wanted: frozenset[str]) -> list[tuple[set[str], list[bytes]]]:
        """(what the callee may be, argument texts) for everything that may call a wanted name."""
        return [(meanings & wanted, arguments) for meanings, arguments in self.calls if meanings & wanted]

    def _read_calls(self) -> Iterator[tuple[set[str], list[bytes]]]:
        """Every distinct call to a name of interest, in file order, each as soon as it is read.

        Over-reports on purpose: a longer name ending in a wanted one counts too. Argument
        lists without strings or comments, nested three deep at most, are cut out in C, by a
        pattern of their own: compiled with the callees, it cost more per file than the scan.
        """
        data, plain = self.data, _plain_arguments()
        seen: set[tuple[str, bytes]] = set()
        for start, callee in self._spelled(self.meanings):
            end = start + len(callee)
            gap = None if _WORD.match(data, end) else _OPEN_AFTER.match(data, end)
            if gap is None:
                continue
            inner = plain.match(data, gap.end())
            if inner is None:  # not a plain argument list: the scanner reads it
                yield self.meanings[callee], scan.split_bracket(data, gap.end() - 1)[0]
            elif (callee, inner.group()) not in seen:  # `inner` holds the closing `)`
                seen.add((callee, inner.group()))
                yield self.meanings[callee], scan.items(inner.group()[:-1])

    def _spelled(self, names: Iterable[str]) -> list[tuple[int, str]]:
        """(offset, name) of every spelling of each name, in longer names too, in file order."""
        return sorted((start, name) for name in names for start in self._offsets(name))

    def _offsets(self, name: str) -> list[int]:
        """Where `name` is spelled, in longer names too: found once per skim (`_aliases` and
        `_read_calls` both ask), by `bytes.find` (a regular expression of the names costs several
        times more); a name holding another of interest only from that one's first spelling on."""
        found = self.offsets.get(name)
        if found is None:
            data, spelling, found, start = self.data, name.encode(), [], 0
            if name in _HOLDS:
                inner, at = _HOLDS[name]
                start = (self._offsets(inner) or [len(data) + at])[0] - at
            start = data.find(spelling, max(start, 0))
            while start >= 0:
                found.append(start)
                start = data.find(spelling, start + 1)
            self.offsets[name] = found
        return found

    def _pairs(self) -> Iterator[tuple[bytes, bytes | None]]:
        """(parameter, allocation entry) for every entry that may be bound to a parameter; the
        entry is None where it could be anything.

        Mirrors how the engine pairs `scratch_shapes` entries with a kernel's last parameters
        and `run_scoped` allocations with its body's parameters, but by name, without scopes:
        it can only over-report.
        """
        for _, arguments in self._calls(frozenset({"partial"})):
            wrapped = scan.NAME.search(arguments[0]) if arguments else None  # arguments are stripped
            if wrapped is not None and _ALLOCATORS & self.meanings.get(wrapped.group().decode(), set()):
                raise GiveUp("an allocator through functools.partial")
        for _, arguments in self._calls(frozenset({"core_map"})):
            if any(a.startswith((b"*", b"scratch_shapes")) for a in arguments):
                raise GiveUp("core_map scratch shapes")
        for meanings, arguments in self._calls(_ALLOCATORS):
            keywords = scan.keywords(arguments)
            positional = [a for a in arguments if not a.startswith(b"*") and not scan.KEYWORD_ARG.match(a)]
            if "pallas_call" in meanings:
                yield from self._scratch_pairs(positional, keywords)
            if "kernel" in meanings:  # `pl.kernel(body, ..., scratch_types=...)`, as pallas_call's
                scratch = keywords.get(b"scratch_types", keywords.get(b"scratch_shapes"))
                body = keywords.get(b"body", positional[0] if positional else None)
                if scratch is not None and body is None:
                    raise GiveUp("pl.kernel as a decorator")
                if scratch is not None and body is not None:
                    yield from self._scratch_pairs([], {b"kernel": body, b"scratch_shapes": scratch})
            if "run_scoped" in meanings:
                yield from keywords.items()
                starred = any(a.startswith(b"*") for a in arguments)
                # The body is the first positional argument; any keyword's value counts too.
                for body in [*positional[:1], *keywords.values()]:
                    for params, keyword_only in self._signatures(body):
                        if starred:
                            yield from ((name, None) for name in (*params, *keyword_only))
                        yield from zip(params, positional[1:])

    def _scratch_pairs(
        self, positional: list[bytes], keywords: dict[bytes, bytes]
    ) -> Iterator[tuple[bytes, bytes | None]]:
        kernel = keywords.get(b"kernel", positional[0] if positional else None)
        scratch = keywords.get(b"scratch_shapes")
        grid_spec = keywords.get(b"grid_spec")
        if scratch is None and grid_spec is not None and grid_spec.endswith(b")"):
            # Any call's, though the engine reads only JAX's grid specs: it can only over-report.
            spec = scan.call_arguments(grid_spec)
            scratch = scan.keywords(spec).get(b"scratch_shapes")
            if scratch is None and sum(not scan.KEYWORD_ARG.match(a) for a in spec) >= _SCRATCH_POSITION:
                scratch = b""  # by position, in `pl.GridSpec` or `pltpu.PrefetchScalarGridSpec`: any entries
        if kernel is None or scratch is None:
            return
        entries: list[bytes] | None = None  # of a list or tuple display; None: anything else
        if scratch.startswith((b"[", b"(")):
            entries, end = scan.split_bracket(scratch, 0)
            if end != len(scratch) - 1 or any(e.startswith(b"*") for e in entries):
                entries = None
        for params, _ in self._signatures(kernel):
            if entries is None:
                yield from ((name, None) for name in params)
            else:
                yield from zip(params[max(len(params) - len(entries), 0) :], entries)

    def _assigned(self) -> set[bytes]:
        """Every name an `=` may assign (see `_ASSIGNED_REVERSED`)."""
        if self.assigned is None:
            self.assigned = {name[::-1] for name in _ASSIGNED_REVERSED.findall(self.data[::-1])}
        return self.assigned

    def _headers(self) -> dict[bytes, list[int]]:
        """Every `def name(`: where its `(` is, by name."""
        if self.headers is None:
            self.headers = {}
            for match in _HEADER.finditer(self.data):
                self.headers.setdefault(match.group(1), []).append(match.end() - 1)
        return self.headers

    def _helper_called(self, names: set[bytes]) -> bool:
        """Is a def with one of `names` among its parameters called by its name in the file (a
        helper the engine reads as the catalog call it passes the parameter on to)? By
        spelling, in strings too: it can only over-report."""
        for name, openings in self._headers().items():
            for open_at in openings:
                params, keyword_only = self._parameters(open_at)
                if names & {*params, *keyword_only}:
                    called = re.findall(alone(name) + rb"\s*\(", self.data)
                    if len(called) > len(openings):  # each header spells `name(` once
                        return True
        return False

    def _helper_given_a_read(self, names: set[bytes]) -> bool:
        """Is a def with one of `names` among its parameters (a view's base: `sem.at[slot]`)
        called by its name with an argument that is a subscript (`helper(sems[0], 1)`)? By
        spelling: it can only over-report."""
        for name, openings in self._headers().items():
            for open_at in openings:
                params, keyword_only = self._parameters(open_at)
                if not names & {*params, *keyword_only}:
                    continue
                for called in re.finditer(alone(name) + rb"\s*\(", self.data):
                    if called.end() - 1 not in openings:
                        arguments = scan.split_bracket(self.data, called.end() - 1)[0]
                        if any(_SUBSCRIPT.match(a) for a in arguments):
                            return True
        return False

    def _signatures(self, node: bytes) -> Iterator[tuple[list[bytes], list[bytes]]]:
        """(positional, keyword-only parameter names) of every def `node` may name: a name, a
        method (`self.kernel`: every def of its last name), or `functools.partial` of one. The
        engine links more (a factory's call, a local bound to a partial, a lambda): given up."""
        if not node.isascii():
            raise GiveUp("a non-ASCII function name")
        while not _DOTTED.match(node):  # functools.partial(kernel, ...): the first argument
            callee = _CALLEE.match(node)
            if _LAMBDA.match(node) or callee and "partial" not in self.meanings.get(callee.group(1).decode(), ()):
                raise GiveUp("a kernel made by a factory's call or wrapped in a lambda")
            inner = scan.call_arguments(node) if callee and node.endswith(b")") else []
            if not inner:
                return
            node = inner[0]
        node = node.rpartition(b".")[2]
        if node not in self._headers() and node in self._assigned():
            raise GiveUp("a kernel held in a name the file assigns")
        for open_at in self._headers().get(node, ()):
            yield self._parameters(open_at)

    def _parameters(self, open_at: int) -> tuple[list[bytes], list[bytes]]:
        """(positional, keyword-only parameter names) of the def whose `(` is at `open_at`: read
        once per skim, though each new name of a call asks (`_may_be_given_a_value`)."""
        found = self.parameters.get(open_at)
        if found is None:
            if self.data[open_at : open_at + 1] == b"[":
                raise GiveUp("a generic function")
            found = self.parameters[open_at] = scan.parameters(scan.split_bracket(self.data, open_at)[0])
        return found


@functools.cache
def _plain_arguments() -> re.Pattern[bytes]:
    """A plain argument list after its `(`, with its closing `)` (see scan.SIMPLE_INNER)."""
    return re.compile(scan.SIMPLE_INNER + rb"\)")


def _semaphore_arguments(
    functions: set[str], arguments: list[bytes], params: dict[str, set[int | str | None]] = _SEM_PARAMS
) -> Iterator[bytes]:
    """The arguments bound to semaphore (and DMA buffer) parameters, as the engines bind them."""
    wanted = set().union(*(params[f] for f in functions))
    position: int | None = 0  # None after a `*args`: positions are unknown
    for argument in arguments:
        if argument.startswith(b"*"):
            position = position if argument.startswith(b"**") else None
            continue
        keyword = scan.KEYWORD_ARG.match(argument)
        if keyword is not None:
            if keyword.group(1).decode() in wanted:
                yield argument[keyword.end() :].strip()
        elif position is not None:
            if position in wanted:
                yield argument
            position += 1


def _spells(entry: bytes | None, kinds: set[str]) -> bool:
    """May the allocation entry be of one of `kinds`: it spells one (None: it could be anything)?"""
    return entry is None or any(re.search(whole([k]).encode(), entry) for k in kinds)


def _outside_brackets(argument: bytes) -> bytes:
    """The argument's text at bracket depth 0: an `if` inside `sems.at[a if c else b]` is an index's."""
    depth, kept = 0, bytearray()
    for byte in argument:
        depth -= byte in b")]}"
        if depth == 0:
            kept.append(byte)
        depth += byte in b"([{"
    return bytes(kept)


def _holds_a_read(names: frozenset[bytes], data: bytes) -> bool:
    """Is one of `names` assigned a subscript that is no `.at` view (`row = sems[0]`), and more:
    it may hold a value read, whose view is jnp's."""
    return any(_HELD_READ.match(data, end) for _, end in _spellings(data, names, after_a_dot=True))


def _shape(argument: bytes) -> bytes | None:
    """The name a semaphore argument is, None if it cannot be a finding; gives up otherwise."""
    if not argument.isascii():
        raise GiveUp("a non-ASCII argument")
    if scan.NAME.match(argument):
        return argument
    if b":=" in argument:
        raise GiveUp("an assignment expression: the rules apply to its value")
    if _IF.search(argument) and _IF.search(_outside_brackets(argument)):
        raise GiveUp("a conditional expression: each branch is an argument")
    if argument.startswith(b"("):
        raise GiveUp("a parenthesized argument")
    if argument.endswith(b"]"):
        if b"'" in argument or b'"' in argument:
            raise GiveUp("a subscript with a string")
        depth = 0  # find the `[` that the last `]` closes
        for index in range(len(argument) - 1, -1, -1):
            depth += (argument[index] in b")]}") - (argument[index] in b"([{")
            if depth == 0:
                break
        at = _AT_BEFORE.search(argument, 0, index)
        if depth or b":" in argument[index:] or not at:
            raise GiveUp("a subscript other than a plain `.at[i]` view")
        if (viewed := argument[: at.start()].rstrip()).endswith(b"]"):  # `sems[0].at[1]`: a view of what?
            _shape(viewed)
    return None  # an attribute, a call, a constant, an expression: never a finding
