"""What one run found in a file, kept for the next run, as ruff keeps `.ruff_cache`.

A file's findings and fixed bytes follow from nothing but its bytes, whether it is a notebook
or a package's `__init__.py`, the settings that apply to it (the rules, the floor, what the
run's other modules import from it and read through it: all in `Settings`), whether fixes are
made, semfix's own code and the Python it runs on. The key hashes all of these, so an entry is
never stale: an edit to any of them is a miss. semfix's code is fingerprinted by each module's
size and mtime (an install's by its RECORD's, which pip writes with the code), not its version
alone, so a checkout being edited never reads what older code found; and so no entry committed
to a repository (a pull request adding `.semfix_cache/`) can be made to match and hide a
finding: nobody outside this install can know the key.

What the run's other modules give a file is asked of the whole run (every file's bytes and
dotted name) before that file's key can be made, and asking costs more than looking up every
file (issue 47: a warm run took 2.2x its time without them). So a run is kept too
(`run_key`), keyed by everything those questions read, holding the key of each file it
analysed: an unchanged tree asks them of nothing. An edit to any file misses the run, and the
questions are asked again; the other files' own entries still hit. The byte scan that picks the
files to analyse is kept as well (`scan_key`: every file's bytes and its project's settings).

The folder is `.semfix_cache` in the working directory (or `SEMFIX_CACHE_DIR`), and ignores
itself for git. Entries are marshalled tuples of strings and numbers, never pickles: reading
one runs no code. Any failure to read or write the cache is a miss, never an error: the cache
only ever saves time.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import re
import sys
from collections.abc import Iterable, Mapping
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from semfix.findings import Finding, Fix
from semfix.settings import Settings

try:  # hashlib's BLAKE2, without hashlib loading OpenSSL: 7 ms of a one-file check
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

FOLDER = ".semfix_cache"
_IGNORE_ALL = "# written by semfix: this folder is a cache\n*\n"


class Entry(NamedTuple):
    """What the analysis of one file gave: its findings, its fixed bytes, whether it was parsed."""

    findings: tuple[Finding, ...]
    new: bytes
    parsed: bool


class Cache:
    """One folder of entries, keyed by everything an entry follows from (the module docstring)."""

    def __init__(self, root: Path | None = None) -> None:
        base = root or Path(os.environ.get("SEMFIX_CACHE_DIR") or FOLDER)
        self.base, self.folder = base, base / _code_fingerprint()
        self._digests: dict[int, tuple[bytes, bytes]] = {}  # id(data): (data, its digest)

    def key(self, path: Path, data: bytes, settings: Settings, apply_fixes: bool) -> str:
        digest = blake2b(data, digest_size=20)
        kind = "notebook" if path.suffix == ".ipynb" else "init" if path.name == "__init__.py" else "module"
        digest.update(repr((kind, apply_fixes, _canonical(settings))).encode())
        return digest.hexdigest()

    def scan_key(self, files: Iterable[tuple[Path, bytes, Settings]]) -> str:
        """The key of a run's byte scan: each file read, with its bytes and its project's
        settings (all the scan reads: `may_fire`)."""
        digest = blake2b(b"scan", digest_size=20)
        canonical: dict[int, bytes] = {}  # a project's settings, shared by its files: made once
        for path, data, settings in files:
            if id(settings) not in canonical:
                canonical[id(settings)] = repr(_canonical(settings)).encode()
            digest.update(repr(str(path)).encode())
            digest.update(self._digest(data))
            digest.update(canonical[id(settings)])
        return f"scan-{digest.hexdigest()}"

    def get_scan(self, key: str, files: int) -> list[bool] | None:
        """What the byte scan of `scan_key`'s run kept, file by file."""
        kept = self._load(key)
        return [mark == "1" for mark in kept] if isinstance(kept, str) and len(kept) == files else None

    def put_scan(self, key: str, scans: list[bool]) -> None:
        self._store(key, "".join("1" if kept else "0" for kept in scans))

    def _digest(self, data: bytes) -> bytes:
        """The bytes' digest, made once per run for both keys that hash them: found by the bytes
        object itself (kept beside it, so its id names no other), as keying by the bytes hashed
        each file's content a second time (a tenth of a warm run)."""
        found = self._digests.get(id(data))
        if found is None or found[0] is not data:
            found = self._digests[id(data)] = data, blake2b(data, digest_size=20).digest()
        return found[1]

    def run_key(
        self,
        sources: Mapping[Path, bytes],
        named: Mapping[Path, tuple[str, bool]],
        tasks: Iterable[tuple[Path, bytes, Settings]],
        apply_fixes: bool,
    ) -> str:
        """A run's key: every file's path, dotted name and bytes (`sources`, `named`: all that the
        run's questions of its modules read), and each file analysed (`tasks`) with its bytes and
        its settings, before the run's answers are added to them."""
        digest = blake2b(b"run", digest_size=20)
        for path, data in sources.items():
            digest.update(repr((str(path), named.get(path))).encode())
            digest.update(self._digest(data))
        digest.update(repr(apply_fixes).encode())
        for path, data, settings in tasks:
            digest.update(repr((str(path), _canonical(settings))).encode())
            digest.update(self._digest(data) if path not in sources else b"")
        return f"run-{digest.hexdigest()}"

    def get_run(self, key: str) -> list[str] | None:
        """The keys a run of this `run_key` gave its analysed files ("": cleared unanalysed)."""
        kept = self._load(key)
        return kept if isinstance(kept, list) and all(isinstance(k, str) for k in kept) else None

    def put_run(self, key: str, keys: list[str]) -> None:
        self._store(key, keys)

    def _load(self, key: str) -> Any:
        try:
            return marshal.loads((self.folder / key).read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def get(self, key: str, data: bytes) -> Entry | None:
        try:
            findings, new, parsed = self._load(key)
            if not (new is None or isinstance(new, bytes)) or not isinstance(parsed, bool):
                return None
            return Entry(tuple(_finding(f) for f in findings), data if new is None else new, parsed)
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def put(self, key: str, data: bytes, entry: Entry) -> None:
        stored = (
            [dataclasses.astuple(f) for f in entry.findings],
            None if entry.new == data else entry.new,
            entry.parsed,
        )
        self._store(key, stored)

    def _store(self, key: str, stored: Any) -> None:
        partial = self.folder / f"{key}.{os.getpid()}"  # then renamed: a reader sees all of it or nothing
        try:
            if not self.folder.is_dir():
                self.folder.mkdir(parents=True, exist_ok=True)
                (self.base / ".gitignore").write_text(_IGNORE_ALL)
            partial.write_bytes(marshal.dumps(stored))
            os.replace(partial, self.folder / key)
        except OSError:
            return


@cache
def _code_fingerprint() -> str:
    """semfix's version (its `__init__.py`, read whole), the Python running it, and what says
    the code is this install's: a regular install's RECORD, which pip writes at each install
    (its size and mtime), else each module's size and mtime (a checkout being edited). Where
    each system call is slow, the walk of a checkout's modules was 195 of a one-file check's (10
    ms on the device); an install pays one stat. (The walk: `os.walk` and strings, not
    `Path.rglob` and `relative_to`, 3.9M instructions, not 11.8M.)"""
    package = os.path.dirname(__file__)
    with open(os.path.join(package, "__init__.py"), "rb") as init:
        source = init.read()
    digest = blake2b(source, digest_size=12)
    digest.update(sys.version.encode())  # the parser's Python: what parses, and its trees
    version = re.search(rb'^__version__ = "([^"]+)"', source, re.MULTILINE)  # not imported: a layer above
    stat = None
    if version is not None:
        with suppress(OSError):  # not a regular install: every module
            stat = os.stat(os.path.join(os.path.dirname(package), f"semfix-{version[1].decode()}.dist-info", "RECORD"))
    if stat is not None:
        digest.update(f"RECORD:{stat.st_size}:{stat.st_mtime_ns}".encode())
        return digest.hexdigest()
    found = []
    for folder, _, names in os.walk(package):
        inside = folder[len(package) + 1 :] + os.sep if folder != package else ""
        found += [inside + name for name in names if name.endswith(".py")]
    for module in sorted(found, key=lambda m: m.split(os.sep)):
        stat = os.stat(os.path.join(package, module))
        digest.update(f"{module}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def _canonical(value: Any) -> Any:
    """`value` with its sets sorted, so that equal settings give one key in every process
    (a frozenset's order follows string hashing, which differs from one process to the next)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple(_canonical(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, (set, frozenset)):
        return tuple(sorted((_canonical(item) for item in value), key=repr))
    if isinstance(value, dict):
        return tuple(sorted(((repr(k), _canonical(v)) for k, v in value.items()), key=repr))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_canonical(item) for item in value))
    return repr(value)


def _finding(stored: tuple[Any, ...]) -> Finding:
    """A finding back from `dataclasses.astuple`'s tuples."""
    rule, line, column, end_line, end_column, message, original, fix, applied, cell, related = stored
    if fix is not None:
        replacement, applicability, edits, doubt = fix
        fix = Fix(replacement, applicability, tuple(tuple(edit) for edit in edits), doubt)
    return Finding(rule, line, column, end_line, end_column, message, original, fix, applied, cell, tuple(related))
