"""The server's run, for the rules that decide across files (a migration keeps an import that a
sibling module imports: `Settings.imported_by_run`): the project a document is in, its files as
`semfix fix` run over the project reads them, with the open documents' texts over them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from semfix.api import imported_by_run
from semfix.files import NO_EXCLUDES, Excludes, FileError, discover, read_source
from semfix.settings import SettingsError, find_pyproject, load_excludes


@dataclass
class Projects:
    """Each project's files on disk, read when first needed, and after a save (`saved`) only
    those whose size or mtime changed, read again (a workspace of 1,790 files took 3.3 s to
    read after every save); the settings changing forgets all (`forget`). Only a file that
    spells `import` can import from another: any other is kept as no bytes at all."""

    roots: list[Path] = field(default_factory=list)  # the client's workspace folders
    disk: dict[Path, dict[Path, tuple[tuple[int, int], bytes]]] = field(default_factory=dict)  # by root: stamped
    stale: set[Path] = field(default_factory=set)  # roots whose files may have changed since read
    answered: dict[Path, tuple[object, frozenset[str]]] = field(default_factory=dict)  # by file
    skipped: dict[Path, bool] = field(default_factory=dict)  # by file: `excluded`'s answers

    def forget(self) -> None:
        self.disk.clear()
        self.stale.clear()
        self.answered.clear()
        self.skipped.clear()

    def saved(self) -> None:
        """A document was saved (and any file may have changed meanwhile): each project's files
        are looked at again when next needed, and those changed read again."""
        self.stale.update(self.disk)

    def excluded(self, path: Path) -> bool:
        """Is the file under one of its project's `extend-exclude` globs (matched against its path
        from the project's root, or any part of it)? Such a file is not checked, as `semfix
        check --force-exclude` skips it: no diagnostics, no fix on save, as ruff's server."""
        if path not in self.skipped:
            self.skipped[path] = self._project(path.parent)[1](path)
        return self.skipped[path]

    def imported(self, path: Path, open_documents: Mapping[Path, str]) -> frozenset[str]:
        """The names the project's other modules import from the file at `path`; those of an
        open document are read from its text."""
        root, excludes = self._project(path.parent)
        if root not in self.disk or root in self.stale:
            read = self.disk.get(root, {})
            files = [file for file in discover([root], excludes).files if file.suffix != ".ipynb"]
            self.disk[root] = {file: _read(file, read.get(file)) for file in files}
            self.stale.discard(root)
        sources = {file: data for file, (_, data) in self.disk[root].items()}
        sources.update((file, text.encode()) for file, text in open_documents.items() if root in file.parents)
        sources[path] = b""  # what it imports itself names nothing for it
        key = tuple(sorted((str(file), hash(data)) for file, data in sources.items()))
        known = self.answered.get(path)
        if known is None or known[0] != key:
            self.answered[path] = key, imported_by_run(sources, (path,)).get(path, frozenset())
        return self.answered[path][1]

    def _project(self, folder: Path) -> tuple[Path, Excludes]:
        """The project's root (its pyproject.toml's folder, else the workspace folder, else the
        document's) and its `extend-exclude` globs."""
        try:
            pyproject = find_pyproject([folder])
            if pyproject is not None:
                return pyproject.parent, Excludes(load_excludes(pyproject), pyproject.parent)
        except SettingsError:
            pass  # the user is told (`SemfixServer.settings_for`)
        return next((root for root in self.roots if root == folder or root in folder.parents), folder), NO_EXCLUDES


def _read(path: Path, known: tuple[tuple[int, int], bytes] | None) -> tuple[tuple[int, int], bytes]:
    """The file's stamp (size, mtime) and its bytes where it may import (`known`'s if unchanged)."""
    try:
        stat = path.stat()
        stamp = (stat.st_size, stat.st_mtime_ns)
        if known is not None and known[0] == stamp:
            return known
        data = read_source(path)
    except (OSError, FileError):
        return (-1, -1), b""
    return stamp, data if b"import" in data else b""
