"""Which kernels of a run's modules another module of the run launches, and with what (issue 43).

Real code puts a kernel in one module (`kern/ops.py`) and its `pallas_call` in another
(`kern/api.py`, after `from .ops import kernel`): the kernel's file alone cannot see its
allocations, so it proves nothing of them. The launching module's own analysis
(`Allocations`) reads the launch as it reads one of its own kernels' and, where the kernel is a
name a from-import binds once at its top, hands it over as data (`Launch`); this resolves that
import against the run's modules as `run_imports` does, and tells the kernel's module. Linked
only where plain: an import of the name from exactly one module of the run, by a relative
import or an absolute one of two names or more (`from ops import kernel` may be an installed
`ops`); the kernel's module then binds it only to a def bound once at its top
(`Allocations._launched`). A launch whose allocations cannot be read unproves the kernel.

Analysing a module costs a parse and a scope walk: only the modules whose bytes may launch a
name they import from the run are analysed (`_may_launch`).
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Collection, Iterable, Mapping

from semfix.analysis.allocations import Allocations
from semfix.analysis.nodes import Text, parse, parsed_bytes
from semfix.analysis.resolution import NeedsAccesses
from semfix.analysis.run_imports import (
    _NAME,
    _resolve,
    import_statements,
    names_read_through,
    readers,
    trailing,
)
from semfix.analysis.scopes import ScopeBuilder, Tracking
from semfix.catalog import may_contain_calls
from semfix.errors import SourceError
from semfix.patterns import alone, compiled
from semfix.rewrite.text import decode
from semfix.settings import Launch, ReadThrough

#: A launcher spelled: `pallas_call(`, `pl.kernel(`.
_LAUNCHER = compiled(rb"pallas_call\s*\(|\.kernel\s*\(")
_IDENT = compiled(rb"[A-Za-z_][A-Za-z0-9_]*")
_DEF = compiled(rb"(?:(?:async[ \t]+)?def|class)[ \t]+([A-Za-z_][A-Za-z0-9_]*)")  # at a line's start: a module's top
_GIVEN = compiled(rb"(?:" + alone(b"kernel") + b"|" + alone(b"body") + rb")\s*=(?!=)\s*")  # a kernel given by keyword
_WINDOW = 400  # bytes after a launcher (or a local's `=`) whose names may be the kernel's
_BODIES = 4000  # bytes of a kernel given by keyword (`body=[partial(scs_kernel, ...), ...]`, comments between)


def launched_by_run(
    modules: Iterable[tuple[str, bool, bytes, str]],
    wanted: Collection[str] | None = None,
    through: Mapping[str, ReadThrough] | None = None,
) -> dict[str, tuple[Launch, ...]]:
    """`modules`: each file of the run as (its dotted name, whether it is a package's
    `__init__`, its source, its name as the run prints it). For each module of `wanted` (None:
    every one), the launches of its kernels in the others, each allocation placed at `file:line`.
    `through`: what a module reads through the run's others (`ReadThrough`: `pltpu` from a
    compat module), by its name: its launches are read through it too (read here for a
    launching module it does not hold)."""
    modules = list(modules)
    names = tuple(module for module, _, _, _ in modules)
    named = trailing(names)  # each trailing part of a module's name: the modules it names
    whole = set(names)

    def target(importer: str, package: str, level: int, module: str | None) -> str | None:
        """The one module of the run `from <level dots><module> import ...` in `importer` names."""
        source = _resolve(package, level, module)
        if source is None or not level and "." not in source and source not in whole:
            return None  # `from ops import kernel` names a run module only where it is all its name
        targets = named.get(source, ())
        return names[targets[0]] if len(targets) == 1 and names[targets[0]] != importer else None

    windows = {id(data): _launched(data) for _, _, data, _ in modules}  # (strict, all): each module's
    launched = set().union(*(strict for strict, _ in windows.values()))
    kernels = {  # each module's defs at its top that may hold a catalog call and are launched somewhere
        module: defs
        for module, _, data, _ in modules
        if (wanted is None or module in wanted)
        if (defs := launched.intersection(_defs(data))) and may_contain_calls(data, through_run=True)
    }
    spelled = {name.decode("latin-1") for defs in kernels.values() for name in defs}
    tails = {module.rpartition(".")[2].encode("latin-1") for module in kernels}  # what an import of one spells
    chosen = []  # the modules that may launch a kernel of `kernels`, each with how it names the run's
    for importer, is_package, data, label in modules:
        within = functools.partial(target, importer, importer if is_package else importer.rpartition(".")[0])
        if _may_launch(data, within, kernels, windows[id(data)][1], tails):
            chosen.append((importer, is_package, data, label, within))
    through = dict(through or {})
    if unread := {importer for importer, *_ in chosen if importer not in through}:  # `pl` from a compat module
        plain = [module[:3] for module in modules]
        through.update(names_read_through(plain, readers(plain, unread)))
    found: dict[str, list[Launch]] = {}
    for importer, is_package, data, label, within in chosen:
        read = through.get(importer, ReadThrough())
        for (level, module), launch in _launches(data, spelled, is_package, read):
            kernel_module = within(level, module)
            if kernel_module is None and module and "." in module:  # `Kernels.kernel` of `from .ops import Kernels`
                module, _, owner = module.rpartition(".")
                kernel_module, launch = within(level, module), launch._replace(kernel=f"{owner}.{launch.kernel}")
            if kernel_module is None or (wanted is not None and kernel_module not in wanted):
                continue
            scratch = launch.scratch
            if scratch is not None:
                scratch = tuple(a._replace(where=f"{label}:{a.where}" if a.where else label) for a in scratch)
            found.setdefault(kernel_module, []).append(launch._replace(scratch=scratch))
    return {module: tuple(launches) for module, launches in found.items()}


def _may_launch(
    data: bytes,
    within: Callable[[int, str | None], str | None],
    kernels: Mapping[str, set[bytes]],
    launched: set[bytes],
    tails: set[bytes],
) -> bool:
    """Do the bytes import a kernel of `kernels` (by module) from its module of the run (`from
    .ops import kernel`, or `ops` then `ops.kernel`: read anywhere, it may be launched where the
    run cannot see), or spell a launcher whose arguments (or a local's value they name) spell a
    name a from-import of a run module binds (`launched`: what `_launched` reads)? Over-reports:
    it only costs an analysis. An import that spells none of `tails` (each kernel module's last
    name) names none of them, unless it is `from . import kernel` of a package's `__init__`."""
    if b"import" not in data:
        return False
    imported: set[bytes] = set()
    for of, listed in import_statements(data):
        if not launched and tails.isdisjoint(_words(listed + b" " + (of or b""))):
            if of is None or of.strip(b". \t\\\r\n"):  # `from . import kernel`
                continue  # names no kernel module
        names = _NAME.findall(listed)
        spelled = [name.decode("latin-1") for name in names]
        if of is None:  # `import pkg.ops as ops`, then `ops.kernel`
            level, modules = 0, list[str | None](spelled)
            imports: list[tuple[str | None, Collection[bytes]]] = []
        else:  # `from .ops import kernel`; `from . import ops`, then `ops.kernel`
            dotted = re.sub(rb"[\s\\]", b"", of).decode("latin-1")
            module = dotted.lstrip(".")
            level, modules = len(dotted) - len(module), [module or None]
            imports = [(within(level, module or None), names)]
            modules += [f"{module}.{name}" if module else name for name in spelled]
        targets = [within(level, module) for module in modules]
        for kernel_module, given in [*imports, *((t, ()) for t in targets)]:
            defs = kernels.get(kernel_module or "", ())
            if defs and (defs.intersection(given) or any(_attribute(data, name) for name in defs)):
                return True
        modules_named = targets[-len(names) :] if names else []  # each name's module, where it names one
        if any(kernels.get(t or "") for t in modules_named) and any(_bare(data, n) for n in names if n != b"as"):
            return True  # a kernel module read by string: `getattr(ops, "kernel")`
        if any(targets):
            imported.update(names)
    return bool(imported.intersection(launched))


def _words(text: bytes) -> list[bytes]:
    r"""The words of `text` (`re.findall(rb"\w+", text)`), by a translation of every other byte
    to a blank and a split: half the instructions on an import's names, asked of every import
    of every file."""
    return text.translate(_BLANKS).split()


_BLANKS = bytes(
    byte if chr(byte).isascii() and (chr(byte).isalnum() or byte == ord("_")) else 32 for byte in range(256)
)


def _defs(data: bytes) -> list[bytes]:
    """The names of the defs and classes at the module's top (`_DEF`), the pattern tried only
    after a line break before `def`, `async` or `class`."""
    names = [] if (first := _DEF.match(data)) is None else [first[1]]
    breaks = (b"\n", b"\r") if b"\r" in data else (b"\n",)  # a carriage return, looked for only where there is one
    for literal in (brk + keyword for brk in breaks for keyword in (b"def", b"async", b"class")):
        at = data.find(literal)
        while at != -1:
            if (match := _DEF.match(data, at + 1)) is not None:
                names.append(match[1])
            at = data.find(literal, at + 1)
    return names


def _bare(data: bytes, name: bytes) -> bool:
    """Are the names of `name` (a module the bytes import) read by string: `getattr(ops, ...)`,
    `vars(ops)`, `ops.__dict__`?"""
    if not data.isascii():  # names as Python reads them: `ｇetattr` is `getattr`
        import unicodedata  # here: most files are ASCII

        data = unicodedata.normalize("NFKC", data.decode("utf-8", "replace")).encode("utf-8")
    if name not in data:
        return False
    spelled = re.escape(name)
    called = b"getattr" in data or b"vars" in data
    if called and re.search(rb"(?:getattr|vars)(?<!\wgetattr)(?<!\wvars)\s*\(\s*" + spelled + rb"\b", data):
        return True
    return b"__dict__" in data and re.search(alone(name) + rb"\s*\.\s*__dict__", data) is not None


def _attribute(data: bytes, name: bytes) -> bool:
    """Is `name` spelled as an attribute (`ops.kernel`, `ops . kernel`) anywhere in the bytes?"""
    at = data.find(name)
    while at != -1:
        before = data[max(0, at - 40) : at].rstrip(b" \t\\\r\n")
        after = data[at + len(name) : at + len(name) + 1]
        if before.endswith(b".") and not (after.isalnum() or after == b"_"):
            return True
        at = data.find(name, at + 1)
    return False


def _launchers(data: bytes) -> list[int]:
    """Where each launcher's arguments start (`_LAUNCHER`), in order: found by a find per
    spelling, the pattern tried only there (an alternation is searched for byte by byte)."""
    ends = []
    for literal in (b"pallas_call", b".kernel"):
        at = data.find(literal)
        while at != -1:
            if (match := _LAUNCHER.match(data, at)) is not None:
                ends.append(match.end())
            at = data.find(literal, at + 1)
    return sorted(ends)


def _launched(data: bytes) -> tuple[set[bytes], set[bytes]]:
    """The names a launcher's arguments spell (its kernel's window), or the value of a local
    they name spells (`kernel = partial(_kernel, n=n)`, then `kernel`): those it may launch.
    First of a window that starts with a keyword only what `kernel=` or `body=` gives, then all."""
    strict: set[bytes] = set()
    names: set[bytes] = set()
    for end in _launchers(data):
        window = data[end : end + _WINDOW]
        kernel = _first_argument(window)
        if kernel is not window or re.match(rb"\s*lambda\b", window):
            strict.update(_IDENT.findall(kernel))
        elif given := _GIVEN.search(window):  # read to its end: a list of bodies, commented, runs long
            start = end + given.end()
            value = _IDENT.findall(_first_argument(data[start : start + _BODIES]))
            strict.update(value)
            names.update(value)
        names.update(_IDENT.findall(kernel))
        if (local := _IDENT.fullmatch(kernel.strip())) is not None:
            for bound in re.finditer(alone(local.group()) + rb"\s*=(?!=)", data):
                value = _IDENT.findall(_first_argument(data[bound.end() : bound.end() + _WINDOW], b",)]}\r\n"))
                strict.update(value)
                names.update(value)
    return strict, names


def _first_argument(text: bytes, ends: bytes = b",)]}") -> bytes:
    """The text up to the first comma or closing bracket outside brackets: a launch's kernel
    (its first argument), or a local's value (to its line's end: `ends`). A keyword first (`out_shape=...`, a kernel
    given as `kernel=`) gives the whole text: it may be anywhere."""
    depth = 0
    for index, byte in enumerate(text):
        if byte in b"([{":
            depth += 1
        elif byte in b")]}" and depth:
            depth -= 1
        elif byte in ends and not depth:
            first = text[:index]
            return text if re.match(rb"\s*(?:\w+\s*=(?!=)|lambda\b)", first) else first
    return text


def _launches(
    data: bytes, kernels: Collection[str], exported: bool, read: ReadThrough
) -> list[tuple[tuple[int, str | None], Launch]]:
    """The module's launches of kernels it imports (`Allocations.launches`), an unread one for
    each import of a name `kernels` holds read anywhere else (or, `exported`, at all: a
    package's `__init__` re-exports it); none where it does not parse."""
    try:
        text, encoding = decode(data)
        tree = parsed_bytes(data) if encoding == "utf-8" else parse(text)  # the first, kept for its analysis
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the run reports it where it is checked
    if tree is None:
        return []
    try:
        return _gathered(Text(text), tree, ScopeBuilder(), kernels, exported, read)
    except NeedsAccesses:
        return _gathered(Text(text), tree, Tracking(), kernels, exported, read)


def _gathered(
    text: Text, tree: ast.Module, scopes: ScopeBuilder, kernels: Collection[str], exported: bool, read: ReadThrough
) -> list[tuple[tuple[int, str | None], Launch]]:
    scopes.stars = dict(read.stars)
    scopes.build(tree)
    allocations = Allocations(text, scopes)
    allocations.aliases = dict(read.aliases)
    allocations.gather(kernels, exported=exported)
    return allocations.launches
