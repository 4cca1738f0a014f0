"""Which names the modules of one run import from each other, so a fix keeps what a sibling reads.

A migration drops an import its renames leave unused; but a sibling module may import that very
name from the fixed one (`from .sync import DeviceIdType`), and would then fail on import. The
CLI names each file of a run as Python would (its dotted module name, and whether it is a
package's `__init__`); this reads their from-imports, resolves relative ones against the
importer's package, and answers, for each module of the run, the names the others import from
it by name (`*` for a star import: then every module-level name), or read as attributes of it where
they import the module itself (`from ringlib import compat` then `compat.pltpu`, `import
ringlib.compat as compat`: issue 36). Above its regular packages a
name runs through the folders that may be namespace packages up to the project root
(`semfix.files.module_names`), and which of them is on `sys.path` is not known: an import names
a module by any trailing part of its name (`ringlib.sync` names `src.ringlib.sync`). Naming
too many only keeps an import.

Parsing every file of a run to answer for the few a migration changes made `--select SEM` ten
times the default rules' time (issue 38): only the files whose bytes may name a wanted module
are parsed (`_Spellings`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import lru_cache

from semfix.analysis.nodes import Text, parsed_bytes, walk
from semfix.analysis.resolution import NeedsAccesses, Resolution
from semfix.analysis.scopes import ScopeBuilder
from semfix.catalog import FUNCTION_NAMES, MODULES, NAME_PARTS, alternation, lookup, may_contain_calls
from semfix.errors import SourceError
from semfix.patterns import alone, compiled
from semfix.rewrite.text import decode
from semfix.settings import Passed, ReadThrough

STAR = "*"
#: A call's arguments, after its `(`, up to the first `)`, holding a subscript that is no view
#: (`fetch(x, y, sems[1])`): a helper another module defines may be given a value.
_SUBSCRIPT_ARGUMENT = compiled(rb"[^)]{0,400}?\w(?<!\.at)\s*\[")
#: A name called, an attribute's last name too: `(\w+)\s*\(`, searched for in the reversed bytes,
#: where it starts with a literal that `re` finds in C (forwards, each name's every byte tried it
#: and backtracked: 30x the time).
_CALLED_BACKWARDS = compiled(rb"\(\s*(\w+)")
_DEFINED = compiled(rb"def(?<!\wdef)\s+(\w+)\s*\(")  # a def's name (`helped` needs the def of a name called)
#: What may stand between two tokens: blanks, line continuations, comments (each to its line's
#: end: a comment that could end anywhere would make a banner of `#` exponential to match).
_GAP = rb"(?:[\s\\)]|#[^\r\n]*[\r\n])*"
_LINE = rb"(?:[ \t\f]|\\(?:\r\n?|\n))"  # a blank within a logical line
#: An import statement, perhaps in a string or a comment: `module` (dots and names as spelled;
#: None for `import ...`) and `names`, what follows `import` to the statement's end or its
#: closing bracket. The names are read in a look-ahead, so that an unclosed bracket in a string
#: hides no import after it.
_IMPORTS = compiled(
    rb"(?:\bfrom" + _LINE + rb"*(?P<module>(?:[^\s#;()\\]|" + _LINE + rb")*?)" + _LINE + rb"*|\b)import\b"
    rb"(?=" + _LINE + rb"*(?P<names>\((?:[^)#]|#[^\r\n]*[\r\n])*|(?:[^\r\n;#\\]|\\(?:\r\n?|\n))*))"
)
#: `_IMPORTS` where the module is one run of dots and names (or none: `import ...`), each
#: repetition of a single class: a match of `_IMPORTS` tries the rest at every byte of its module
#: (5x the time). It means what `_IMPORTS` does where its module spells no `import`, whose
#: shortest module (the lazy one) then is the longest.
_PLAIN_IMPORT = compiled(
    rb"(?:\bfrom[ \t\f]*(?P<module>[\w.]*)[ \t\f]*|\b)import\b(?=[ \t\f]*(?:\\(?:\r\n?|\n)[ \t\f]*)*"
    rb"(?P<names>\([^)#]*(?:#[^\r\n]*[\r\n][^)#]*)*|[^\r\n;#\\]*(?:\\(?:\r\n?|\n)[^\r\n;#\\]*)*))"
)
_NAME = compiled(rb"[^\s,()#;\\]+")
_COMMENT = compiled(rb"#[^\r\n]*")
_WORD = compiled(rb"\w+")


Statement = tuple[bytes | None, bytes]  # an import statement's module (None: `import ...`) and names


def import_statements(data: bytes) -> tuple[Statement, ...]:
    """The groups of `_IMPORTS.finditer(data)`, (module, names): read once for every question
    the run asks of a file (what it imports, launches, reads through: each read them again) and
    kept by its bytes. No match is kept: its callers read only those two, a call each."""
    found = _STATEMENTS.get(data)
    if found is None:
        if len(_STATEMENTS) >= _KEPT:
            del _STATEMENTS[next(iter(_STATEMENTS))]
        found = _STATEMENTS[data] = _import_statements(data)
    return found


_STATEMENTS: dict[bytes, tuple[Statement, ...]] = {}  # `import_statements`, the latest last
_KEPT = 1024  # files' statements kept at most (each holds its bytes): a run of more reads the rest again


def _import_statements(data: bytes) -> tuple[Statement, ...]:
    """`_IMPORTS.finditer(data)`, tried only where a match can start: at a `from` before the
    next `import` spelled, or at that `import` (each found with `bytes.find`). The pattern
    starts with a word boundary, so a search tries it at every byte: 6x the time, and most
    of the run's questions of its modules (issue 47). A `from` is looked for only on the line
    of that `import`, or the lines it continues: no match holds a line break but a continuation.
    Each try is `_PLAIN_IMPORT`'s where that pattern says the same as `_IMPORTS`: at an
    `import`, and at a `from` whose module (`[\\w.]*`) spells no `import` (it reaches no further
    than `at`, the first spelled). One function, no helper called per statement: their calls
    were a fourth of a statement's instructions."""
    found: list[Statement] = []
    position, breaks, find, rfind, plain = 0, b"\r" in data, data.find, data.rfind, _PLAIN_IMPORT.match
    while (at := find(b"import", position)) >= 0:
        # where the line of `at` starts, or `position` where it continues the one before; a
        # carriage return is looked for only where the data holds one: its search reads back to `position`
        end = max(rfind(b"\n", position, at), rfind(b"\r", position, at)) if breaks else rfind(b"\n", position, at)
        if end > 0 and (data[end - 1] == 92 or (data[end] == 10 and data[end - 2 : end] == b"\\\r")):
            end = -1
        start, match = find(b"from", end + 1 if end >= 0 else position, at), None
        while start >= 0:  # a match's `import` is the first at or after its start
            match = plain(data, start)
            if match is None or match.end(1) >= at + 6:
                match = _IMPORTS.match(data, start)
            if match is not None:
                break
            start = find(b"from", start + 1, at)
        if match is None and (match := plain(data, at)) is None:
            position = at + 1
            continue
        found.append(match.groups())  # type: ignore[arg-type]  # (module, names): two groups, names always set
        position = match.end()
    return tuple(found)


_THROUGH_NAMES = frozenset({*FUNCTION_NAMES, "SemaphoreType", "pallas_call"})
#: A name, its dot and perhaps one more attribute, then a catalog function, or a name a launch
#: or an allocation is read through (`compat.pltpu.SemaphoreType`, `pl.pallas_call`): the head.
_READ_THROUGH = compiled(rb"(?<![\w.])(\w+)\s*\.\s*(?:\w+\s*\.\s*)?(?:" + alternation(_THROUGH_NAMES) + rb")\b")
#: What each of those names holds one of: the catalog's parts of its names, and the names that
#: hold none. Any spot of a stretch leads to its search: 9 searches of the bytes, not 26.
_SPELLED_THROUGH = (
    *NAME_PARTS,
    *sorted(n.encode() for n in _THROUGH_NAMES if not any(p in n.encode() for p in NAME_PARTS)),
)
_OUTSIDE = compiled(rb"[^\w\s.]")  # what no `_READ_THROUGH` match holds
_BACK = 256  # bytes before a name searched for where its stretch of names, blanks and dots starts


def heads_read_through(data: bytes) -> Iterator[bytes]:
    """`_READ_THROUGH.findall(data)`, searched only in the stretches of names, blanks and dots
    (all a match holds) that spell one of its names, each found with `bytes.find`: the pattern
    opens with a look-behind, so a search tried it at every byte (4.5x the time on the real
    trees' Pallas files). A search starts where the stretch does (or at the last match's end),
    and ends a byte after it, so that the closing word boundary sees what follows."""
    spots = sorted({spot for name in _SPELLED_THROUGH for spot in _spelled_at(data, name)})
    position, index = 0, 0
    while True:
        while index < len(spots) and spots[index] < position:
            index += 1
        if index == len(spots):
            return
        spot = spots[index]
        end = found.start() if (found := _OUTSIDE.search(data, spot)) else len(data)
        start = max(position, spot - _BACK)
        if (before := _OUTSIDE.search(data[start:spot][::-1])) is not None:
            start = spot - before.start()
        elif start > position:  # a longer stretch: from the last match's end, as findall would
            start = position
        if (match := _READ_THROUGH.search(data, start, end + 1)) is None:
            position = end
            continue
        yield match.group(1)
        position = match.end()


def _spelled_at(data: bytes, name: bytes) -> Iterator[int]:
    at = data.find(name)
    while at >= 0:
        yield at
        at = data.find(name, at + 1)


@lru_cache(maxsize=4)
def trailing(modules: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    """Each trailing part of each module's name, with the indices of the modules it names: an
    import may name a module by any (`ringlib.sync` names `src.ringlib.sync`). One map per run,
    which every question the run asks of its modules shares."""
    named: dict[str, list[int]] = {}
    for index, module in enumerate(modules):
        parts = module.split(".")
        for start in range(len(parts)):
            named.setdefault(".".join(parts[start:]), []).append(index)
    return {name: tuple(found) for name, found in named.items()}


def names_imported(
    modules: Iterable[tuple[str, bool, bytes]], wanted: Collection[str] | None = None
) -> dict[str, frozenset[str]]:
    """`modules`: each file of the run as (its dotted name, whether it is a package's
    `__init__`, its source); two files of one name answer for both. A source that does not
    parse imports nothing here (it is the run's to report). `wanted`: the modules to answer
    for (None: every one); only their importers are parsed."""
    modules = list(modules)
    named: dict[str, set[str]] = {}  # each trailing part of a wanted module's name: the modules it names
    for module in (module for module, _, _ in modules) if wanted is None else wanted:
        parts = module.split(".")
        for start in range(len(parts)):
            named.setdefault(".".join(parts[start:]), set()).add(module)
    prefixes = {".".join(key.split(".")[:end]) for key in named for end in range(1, key.count(".") + 2)}
    spellings = _Spellings(named, prefixes)
    found: dict[str, set[str]] = {}
    for importer, is_package, data in modules:
        if b"import" not in data or not spellings.may_name(importer, is_package, data):
            continue
        package = importer if is_package else importer.rpartition(".")[0]
        for source, names in _imported_names(data, package, prefixes):
            for target in named.get(source, ()):
                if target != importer:
                    found.setdefault(target, set()).update(names)
    return {module: frozenset(names) for module, names in found.items()}


def _imported_names(data: bytes, package: str, prefixes: Collection[str]) -> Iterator[tuple[str, list[str]]]:
    """Each module a file's imports and reads name, with the names it takes from it, read from
    its text (a parse of each importer was most of a run with every rule on): `from .sync import
    X` takes `X` from `pkg.sync`; `compat.pltpu`, after `from . import compat`, takes `pltpu` from
    `pkg.compat` (`prefixes`: the modules whose reads count, and the packages above them).
    Strings and comments may spell more: a name kept that need not be costs nothing. Text
    outside ASCII is read as Python reads names (decoded, NFKC); an import that still spells a
    name outside ASCII has the file parsed instead."""
    if not data.isascii():
        import unicodedata  # here: most files are ASCII

        try:
            data = unicodedata.normalize("NFKC", decode(data)[0]).encode("utf-8")
        except SourceError:
            return  # it is the run's to report
        if not all((of or b"").isascii() and names.isascii() for of, names in import_statements(data)):
            yield from _imported_names_parsed(data, package, prefixes)
            return
    bound: dict[str, set[str]] = {}  # each name an import binds: every module (or name) it may be bound to
    for of, names in import_statements(data):  # (a comment's "import jtu first" binds nothing: it adds, never replaces)
        tokens = [t.decode() for t in _NAME.findall(_COMMENT.sub(b"", names))]
        pairs: list[tuple[str, str | None]] = []
        while tokens:  # `name`, or `name as alias`
            aliased = len(tokens) > 2 and tokens[1] == "as"
            pairs.append((tokens[0], tokens[2] if aliased else None))
            tokens = tokens[3 if aliased else 1 :]
        if of is None:  # `import a.b as d` binds `d` to `a.b`, `import a.b` binds `a`
            for name, alias in pairs:
                bound.setdefault(alias or name.partition(".")[0], set()).add(name if alias else name.partition(".")[0])
            continue
        dotted = re.sub(rb"[\s\\]", b"", of).decode()
        module = dotted.lstrip(".")
        if (source := _resolve(package, len(dotted) - len(module), module or None)) is None:
            continue
        yield source, [name for name, _ in pairs]
        for name, alias in pairs:
            bound.setdefault(alias or name, set()).add(f"{source}.{name}")
    # Only a name bound to a wanted module, or to a package above one, can head a read of it.
    heads = sorted(name for name, targets in bound.items() if name.isidentifier() and not targets.isdisjoint(prefixes))
    if not heads:
        return
    spelled = b"|".join(alone(head.encode()) for head in heads)
    chains = re.compile(rb"(" + spelled + rb")((?:" + _GAP + rb"\." + _GAP + rb"\w+)+)")
    for match in chains.finditer(data):  # `compat.pltpu`, `ringlib.compat.pltpu`: the module's name `pltpu`
        steps = [step.decode() for step in _WORD.findall(_COMMENT.sub(b"", match[2]))]
        for target in bound[match[1].decode()]:
            for end in range(len(steps)):
                yield ".".join([target, *steps[:end]]), [steps[end]]


def _imported_names_parsed(data: bytes, package: str, prefixes: Collection[str]) -> Iterator[tuple[str, list[str]]]:
    """`_imported_names`, from the parse (nothing where it does not parse: it is the run's to report)."""
    if (tree := parsed_bytes(data)) is None:
        return
    bound: dict[str, str] = {}
    for node, _ in _statements(tree.body):  # every import is a statement: the expressions wait
        if isinstance(node, ast.Import):
            bound.update((a.asname, a.name) if a.asname else (a.name.partition(".")[0],) * 2 for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (source := _resolve(package, node.level, node.module)):
            yield source, [alias.name for alias in node.names]
            bound.update((a.asname or a.name, f"{source}.{a.name}") for a in node.names)
    heads = {name for name, target in bound.items() if target in prefixes}
    for read in [n for n in walk(tree) if isinstance(n, ast.Attribute) and _head(n) in heads] if heads else []:
        if (path := _dotted(read.value, bound)) is not None:
            yield path, [read.attr]


def _head(node: ast.Attribute) -> str | None:
    """The name an attribute chain starts from (`ringlib` in `ringlib.compat.pltpu`), if a name."""
    value = node.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return value.id if isinstance(value, ast.Name) else None


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an attribute chain on an imported name reads (`ringlib.compat`), if it is one."""
    steps: list[str] = []
    while isinstance(node, ast.Attribute):
        steps.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return None
    return ".".join([bound[node.id], *reversed(steps)])


class _Spellings:
    """The byte scan before any parse. A file names a wanted module only where it spells
    - a from-import whose module, or module and one of its names, is a trailing part of a wanted
      module's name (`from .sync import X`, `from ringlib import sync`, `from . import sync`:
      resolved here against the importer's package, as the parse would);
    - an import of such a name, or of a package whose first name is one (`import sync`,
      `import ringlib.sync as s`);
    - a read through a package that ends in a wanted module's last name (`ringlib.sync.X`),
      after an import that may bind a name to a wanted module or a package above one
      (`prefixes`): a read goes through no other name (`_imported_names`), and the search for
      one is most of this scan.
    A read through the module itself (`s.X`, `sync.X`) needs one of those imports first. Text in
    strings and comments may look like any of these: it only costs a parse."""

    def __init__(self, named: Collection[str], prefixes: Collection[str]) -> None:
        self.named, self.prefixes = named, prefixes
        lasts = sorted({name.rpartition(".")[2].encode() for name in named})
        words = rb"\b(?:" + (b"|".join(map(re.escape, lasts)) or b"(?!)") + rb")\b"
        self.through = re.compile(rb"\." + _GAP + words + _GAP + rb"\.")

    def may_name(self, importer: str, is_package: bool, data: bytes) -> bool:
        package = importer if is_package else importer.rpartition(".")[0]
        binds = False  # whether an import may bind a name to a module of `prefixes`
        for spelled, imported in import_statements(data):
            if not (spelled or b"").isascii() or not imported.isascii():  # (the rest of a match is ASCII blanks)
                return True  # a non-ASCII name, perhaps in another encoding: the parse decides
            names = [name.decode() for name in _NAME.findall(imported)]
            if spelled is None:  # `import a.b.c as d` binds `d` to `a.b.c`, `import a.b` binds `a`
                if any(name in self.named or name.partition(".")[0] in self.named for name in names):
                    return True
                binds = binds or any(n in self.prefixes or n.partition(".")[0] in self.prefixes for n in names)
                continue
            dotted = re.sub(rb"[\s\\]", b"", spelled).decode()
            module = dotted.lstrip(".")
            source = _resolve(package, len(dotted) - len(module), module or None)
            if source and (source in self.named or any(f"{source}.{name}" in self.named for name in names)):
                return True
            binds = binds or bool(source) and any(f"{source}.{name}" in self.prefixes for name in names)
        return binds and self.through.search(data) is not None


def _resolve(package: str, level: int, module: str | None) -> str | None:
    """The absolute name `from <level dots><module>` means in `package` (None: above the top)."""
    if not level:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None


def readers(modules: Iterable[tuple[str, bool, bytes]], candidates: Collection[str]) -> set[str]:
    """Of `candidates`, the modules that may read a JAX name, or call a helper, through another
    module of the run (`names_read_through`), by their bytes and those of the modules they
    import from: a name imported from a run module that spells "pallas" (`from ._compat import
    pl, pltpu`, `from . import compat`) that is a catalog function, or heads a read of one
    (`pltpu.make_async_copy`), of `SemaphoreType` or of `pallas_call`; or a name called with a
    subscript (`fetch(x, y, sems[1])`, `dma.fetch(...)`) that a run module spelling a catalog
    function defines (`def fetch(`). Over-reports: it only costs a parse."""
    modules = list(modules)
    named = trailing(tuple(module for module, _, _ in modules))

    def source(name: str | None) -> bytes | None:
        found = named.get(name or "", ())
        return modules[found[0]][2] if len(found) == 1 else None

    chosen = set()
    for importer, is_package, data in modules:
        if importer not in candidates or b"import" not in data:
            continue
        package = importer if is_package else importer.rpartition(".")[0]
        given: dict[str, bytes] = {}  # each name an import of a run module binds: the bytes it names
        for of, names in import_statements(data):
            spelled = [n.decode("latin-1") for n in _NAME.findall(names) if n not in (b"as", b"import")]
            if of is None:  # `import ringlib.compat as compat`
                given.update((n.rpartition(".")[2], b) for n in spelled if (b := source(n)) is not None)
                continue
            dotted = re.sub(rb"[\s\\]", b"", of).decode("latin-1")
            resolved = _resolve(package, len(dotted) - len(dotted.lstrip(".")), dotted.lstrip(".") or None)
            whole = source(resolved)
            for name in spelled:  # `from .compat import pltpu`, `from . import compat`
                inner = source(f"{resolved}.{name}" if resolved else name)
                if (found := inner if inner is not None else whole) is not None:
                    given[name] = found
        if not given:
            continue
        if any(name in FUNCTION_NAMES for name in given):
            chosen.add(importer)
            continue
        compat = {name for name, exporter in given.items() if b"pallas" in exporter}
        if compat and any(head.decode("latin-1") in compat for head in heads_read_through(data)):
            chosen.add(importer)
            continue
        helpers = [name for name, exporter in given.items() if may_contain_calls(exporter, through_run=True)]
        for name in helpers:  # `fetch(x, y, sems[1])`, `dma.fetch(...)`: a call given a subscript that is no view
            for call in re.finditer(alone(name.encode()) + rb"(?:\s*\.\s*(\w+))?\s*\(", data):
                defined = b"def " + (call[1] or name.encode()) + b"(" in given[name]
                if defined and _SUBSCRIPT_ARGUMENT.match(data, call.end()):
                    chosen.add(importer)
                    break
    return chosen


def names_read_through(
    modules: Iterable[tuple[str, bool, bytes]], importers: Collection[str]
) -> dict[str, ReadThrough]:
    """For each of `importers`, the JAX names it reads through the run's other modules
    (`ReadThrough.aliases`): `compat.semaphore_wait` after `from . import compat`, where
    `compat.py` binds `semaphore_wait` once, by `from jax.experimental.pallas.tpu import
    semaphore_wait`, is that function (so the rules see its `dec=`). Each as (the name as the
    importer's own imports qualify it, the JAX name): `..compat.semaphore_wait`. A module a
    trailing name names twice, or that rebinds the name, gives nothing. And the names each of
    its star imports of a run module binds (`ReadThrough.stars`), where that module's literal
    `__all__` says them: `from .compat import *` then binds those alone."""
    modules = list(modules)
    indices = trailing(tuple(module for module, _, _ in modules))

    def named(module: str | None) -> list[tuple[str, bool, bytes]]:
        """The modules of the run a name names."""
        return [modules[i] for i in indices.get(module or "", ())]

    exports: dict[str, dict[str, str]] = {}

    def exported(module: str | None) -> dict[str, str]:
        """The JAX names `module` binds once, itself or through another module of the run."""
        found = named(module)
        if len(found) != 1:
            return {}
        name, is_package, data = found[0]
        if name not in exports:
            exports[name] = {}  # a cycle of imports gives nothing
            package = name if is_package else name.rpartition(".")[0]
            if b"pallas" in data or any(exported(_resolve(package, *of)) for of in _from_imports(data)):
                exports[name] = _jax_names(data, lambda level, of, n: exported(_resolve(package, level, of)).get(n))
        return exports[name]

    def starred(module: str | None) -> tuple[str, ...] | None:
        found = named(module)
        return _all(found[0][2]) if len(found) == 1 else None

    read: dict[str, ReadThrough] = {}

    def helped(module: str | None, called: Collection[str]) -> dict[str, tuple[Passed, ...]]:
        """The helpers among `called` (names the importer calls) that `module` defines at its
        top (`_passed`), read with what it reads through the run; a module is analysed once,
        where it defines one of them and spells a catalog function."""
        found = named(module)
        if len(found) != 1:
            return {}
        name, is_package, data = found[0]
        if name not in defs:  # every def's name, once per module (a find per name called was most of a run)
            defs[name] = {n.decode("latin-1") for n in _DEFINED.findall(data)} if b"def" in data else set()
        defined = [n for n in called if n in defs[name]]
        if not defined or not may_contain_calls(data, through_run=True):
            return {}
        if name not in analysed:
            analysed[name] = None  # a cycle of imports gives nothing
            analysed[name] = _analysed(data, dict(reading(name, is_package, data).aliases))
        resolution = analysed[name]
        passed = {n: _passed(resolution, n) for n in defined} if resolution is not None else {}
        return {n: p for n, p in passed.items() if p}

    analysed: dict[str, Resolution | None] = {}
    defs: dict[str, set[str]] = {}

    def reading(importer: str, is_package: bool, data: bytes) -> ReadThrough:
        if importer in read:
            return read[importer]
        read[importer] = ReadThrough()  # a cycle of imports gives nothing
        if (tree := parsed_bytes(data)) is None:
            return read[importer]
        package = importer if is_package else importer.rpartition(".")[0]
        aliases: dict[str, str] = {}
        stars: dict[str, tuple[str, ...]] = {}
        passed: dict[str, tuple[Passed, ...]] = {}
        called = {n[::-1].decode("latin-1") for n in _CALLED_BACKWARDS.findall(data[::-1])}  # what may be a helper
        for node, _ in _statements(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    aliases.update((f"{alias.name}.{n}", t) for n, t in exported(alias.name).items())
                    if called:
                        passed.update((f"{alias.name}.{n}", h) for n, h in helped(alias.name, called).items())
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(package, node.level, node.module)
                spelled = "." * node.level + (node.module or "")  # as `ScopeBuilder` qualifies it
                if node.names[0].name == "*" and (given := starred(source)) is not None:
                    stars[spelled] = given  # each bound as `from <module> import <name>` would bind it
                    aliases.update((f"{spelled}.{n}", t) for n, t in exported(source).items() if n in given)
                for alias in node.names:
                    if (target := exported(source).get(alias.name)) is not None:
                        aliases[f"{spelled}.{alias.name}"] = target  # `from .compat import semaphore_wait`
                    if (alias.asname or alias.name) in called and (
                        helper := helped(source, {alias.name}).get(alias.name)
                    ):
                        passed[f"{spelled}.{alias.name}"] = helper  # `from .dma import fetch`
                    inner = f"{source}.{alias.name}" if source else None  # `from . import compat`
                    aliases.update((f"{spelled}.{alias.name}.{n}", t) for n, t in exported(inner).items())
                    if called:  # `from . import dma`, then `dma.fetch(...)`
                        passed.update((f"{spelled}.{alias.name}.{n}", h) for n, h in helped(inner, called).items())
        read[importer] = ReadThrough(
            tuple(sorted(aliases.items())), tuple(sorted(stars.items())), tuple(sorted(passed.items()))
        )
        return read[importer]

    answer: dict[str, ReadThrough] = {}
    for importer, is_package, data in modules:
        if importer in importers and (through := reading(importer, is_package, data)) != ReadThrough():
            answer[importer] = through
    return answer


def _from_imports(data: bytes) -> list[tuple[int, str | None]]:
    """Each `from <level dots><module> import` of the bytes, as (level, module): read from the
    bytes (`import_statements`), so that a module that imports no JAX name is never parsed."""
    found = []
    for spelled, _ in import_statements(data) if b"from" in data else ():
        if spelled is not None:
            dotted = re.sub(rb"[\s\\]", b"", spelled).decode("latin-1")
            module = dotted.lstrip(".")
            found.append((len(dotted) - len(module), module or None))
    return found


def _analysed(data: bytes, aliases: dict[str, str]) -> Resolution | None:
    """The module's own analysis (`aliases`: the names it reads through the run), to read its
    helpers; None where it does not parse."""
    if (tree := parsed_bytes(data)) is None:
        return None
    scopes = ScopeBuilder()
    scopes.build(tree)
    resolution = Resolution(Text(""), scopes)
    resolution.aliases = aliases
    return resolution


def _passed(resolution: Resolution, name: str) -> tuple[Passed, ...]:
    """What the def `name` at the module's top passes on, unchanged, to catalog parameters
    (`Resolution.helper`): `fetch(src, dst, sem)` of `from .dma import fetch`, whose `sem`
    reaches `make_async_copy`'s. Nothing where telling needs more than the plain scopes."""
    try:
        operation = resolution.helper(name)
    except NeedsAccesses:
        return ()
    if operation is None:
        return ()
    return tuple(
        Passed(p.name, p.position, *(p.via or (operation.name, p.name)), buffer)
        for buffer, params in ((False, operation.sem_params), (True, operation.buffer_params))
        for p in params
    )


def _all(data: bytes) -> tuple[str, ...] | None:
    """The names `from <module> import *` binds, where the module says them: a literal `__all__`
    bound once at its top, and changed nowhere (`__all__ += [...]`, `__all__.append(...)`)."""
    if b"__all__" not in data or re.search(rb"__all__\s*(?:\.|\+=|\[)", data) or (tree := parsed_bytes(data)) is None:
        return None
    bound = [statement for statement, top in _statements(tree.body) if "__all__" in _binds(statement, top)]
    if len(bound) != 1 or bound[0] not in tree.body or not isinstance(bound[0], ast.Assign):
        return None
    value = bound[0].value
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return tuple(names) if len(names) == len(value.elts) else None


def _jax_names(data: bytes, through: Callable[[int, str | None, str], str | None]) -> dict[str, str]:
    """The names a module binds once, at its top, by importing them from JAX's Pallas, where
    every catalog function lives (`semaphore_wait`: `jax.experimental.pallas.tpu.semaphore_wait`;
    `pltpu`: `jax.experimental.pallas.tpu`), or from another module of the run that gives one
    (`through`: the JAX name `from <level dots><module> import <name>` gives, if any; a package's
    `__init__` re-exporting its `compat`'s). A module with a star import or a module
    `__getattr__` may give any name otherwise: none."""
    if b"import" not in data or (tree := parsed_bytes(data)) is None:
        return {}
    found: dict[str, str] = {}
    fallbacks: list[tuple[str, str | None]] = []  # what a compat `try`'s `except ImportError:` imports again
    nones: list[str] = []  # or binds to None (`pl = pltpu = None`: where it runs, no call of them does)
    for statement in tree.body:
        tried = statement if isinstance(statement, ast.Try) and all(map(_import_error, statement.handlers)) else None
        for each in tried.body if tried else [statement]:
            found.update((name, target) for name, target in _imported(each, through) if target is not None)
        for handler in tried.handlers if tried else []:
            fallbacks += [pair for each in handler.body for pair in _imported(each, through, every=True)]
            nones += [name for each in handler.body for name in _none_bound(each)]
    found = {name: target for name, target in found.items() if target in MODULES or lookup(target) is not None}
    if not found:  # only a catalog function, or a module of them, can make a call a catalog call
        return {}
    bound: dict[str, int] = {}
    for statement, top in _statements(tree.body):
        for name in _binds(statement, top):
            bound[name] = bound.get(name, 0) + 1
    if b":=" in data:  # a walrus at the top binds there too, inside any expression
        for node in ast.walk(tree):
            if isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
                bound[node.target.id] = bound.get(node.target.id, 0) + 1
    if "*" in bound or "__getattr__" in bound:  # a star import or a module `__getattr__` may give any name
        return {}
    for name, target in fallbacks:  # the same function by its other path (`pallas.tpu`'s): bound as one
        same = target is not None and name in found and _same_function(found[name], target)
        bound[name] = bound.get(name, 0) - same
    for name in nones:
        bound[name] = bound.get(name, 0) - (name in found)
    return {name: target for name, target in found.items() if bound.get(name) == 1}


def _imported(
    statement: ast.stmt, through: Callable[[int, str | None, str], str | None], every: bool = False
) -> list[tuple[str, str | None]]:
    """The names an import statement binds, each with the JAX name it gives (`every`: with None
    for one that gives none): from JAX's Pallas, or from a run module that gives one (`through`)."""
    given: list[tuple[str, str | None]]
    if isinstance(statement, ast.ImportFrom) and not statement.level and (statement.module or "").startswith("jax"):
        paths = [(a.asname or a.name, f"{statement.module}.{a.name}") for a in statement.names]
        given = [
            (name, path if _pallas(path) else None) for name, path in paths
        ]  # `from jax.experimental import pallas`
    elif isinstance(statement, ast.ImportFrom):
        given = [(a.asname or a.name, through(statement.level, statement.module, a.name)) for a in statement.names]
    elif isinstance(statement, ast.Import):
        given = [(a.asname, a.name if _pallas(a.name) else None) for a in statement.names if a.asname is not None]
    else:
        return []
    return [(name, target) for name, target in given if every or target is not None]


def _none_bound(statement: ast.stmt) -> list[str]:
    """The names `pl = pltpu = None` binds to None."""
    if not isinstance(statement, ast.Assign) or not (
        isinstance(statement.value, ast.Constant) and statement.value.value is None
    ):
        return []
    names = [target.id for target in statement.targets if isinstance(target, ast.Name)]
    return names if len(names) == len(statement.targets) else []


def _import_error(handler: ast.ExceptHandler) -> bool:
    """`except ImportError:` or `except ModuleNotFoundError:` (alone or in a tuple), no name bound."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.name is None and all(getattr(k, "id", None) in ("ImportError", "ModuleNotFoundError") for k in kinds)


def _same_function(first: str, second: str) -> bool:
    """Two of JAX's paths to one catalog function (`pallas.semaphore_wait`, `pallas.tpu.semaphore_wait`)."""
    one, other = lookup(first), lookup(second)
    return one is not None and other is not None and one.name == other.name


def _pallas(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "jax" and "pallas" in parts


def _statements(body: list[ast.stmt], top: bool = True) -> Iterable[tuple[ast.stmt, bool]]:
    """Every statement, in blocks and in defs, with whether it runs at the module's top (not in
    a def or a class body): walking statements alone skips the expressions, most of a tree."""
    for statement in body:
        yield statement, top
        inner = top and not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for block in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(statement, block, []), inner)
        for clause in (*getattr(statement, "handlers", ()), *getattr(statement, "cases", ())):
            yield from _statements(clause.body, inner)


def _binds(statement: ast.stmt, top: bool) -> list[str]:
    """The module names a statement binds (at the top), or may bind (`global`, from anywhere)."""
    if isinstance(statement, (ast.Global, ast.Nonlocal)):
        return [*statement.names, *statement.names]  # another scope's writes reach it
    if not top:
        return []
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return [a.asname or a.name.split(".")[0] for a in statement.names]
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    targets: list[ast.AST] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        targets = [statement.target]
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in statement.items if item.optional_vars is not None]
    elif isinstance(statement, ast.Delete):
        targets = list(statement.targets)
    elif handlers := getattr(statement, "handlers", None):  # `try`, `try` with `except*`
        return [handler.name for handler in handlers if handler.name]
    elif isinstance(statement, ast.Match):
        targets = [case.pattern for case in statement.cases]
    names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names + [
        n.name for t in targets for n in ast.walk(t) if isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name
    ]
