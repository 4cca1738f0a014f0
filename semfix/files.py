"""Finding source files, reading them, and replacing them atomically."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from semfix.errors import SourceError
from semfix.git import work_tree_files
from semfix.rewrite.text import decode

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")

#: Folder names never searched when walking a tree (as ruff and black skip them).
EXCLUDED_DIRS = frozenset(
    {
        ".bzr",
        ".direnv",
        ".eggs",
        ".git",
        ".hg",
        ".mypy_cache",
        ".nox",
        ".pytest_cache",
        ".ruff_cache",
        ".svn",
        ".tox",
        ".venv",
        "__pycache__",
        "__pypackages__",
        "_build",
        "buck-out",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)


class FileError(Exception):
    """A file could not be read or written; the message says why, without the path."""


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Excludes:
    """Exclude globs, read from `root`: the folder of the settings file that declares them (else
    the current folder), as ruff reads `extend-exclude`. A glob matches a file's path from
    `root`, or any one of its parts (a folder or file name); `*` crosses folders. So a member
    of a monorepo that excludes `gen/*` skips `pkg/gen/k.py` whether pre-commit names it from
    the repository's root or a run starts inside `gen`, and no glob matches a folder above the
    project. A file outside `root` is never excluded."""

    globs: tuple[str, ...] = ()
    root: Path = Path()

    def __call__(self, path: Path) -> bool:
        if not self.globs:
            return False
        relative = PurePosixPath(Path(os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))).as_posix())
        if relative.parts[:1] == (os.pardir,):
            return False
        return any(
            fnmatch.fnmatchcase(str(relative), glob) or any(fnmatch.fnmatchcase(part, glob) for part in relative.parts)
            for glob in self.globs
        )


NO_EXCLUDES = Excludes()


def _skipped_folder(name: str) -> bool:
    return name in EXCLUDED_DIRS or (name.startswith(".") and name not in (".", ".."))


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _skipped_folder(d))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES):
                yield Path(root, name)


def _tree(folder: Path, excludes: Excludes) -> list[Path]:
    """Source files under a folder: git's view of it in a work tree (so .gitignore holds)."""
    listed = work_tree_files(folder)
    if listed is None:
        candidates: Iterable[Path] = _walk(folder)
    else:
        # Keep symlinks, broken or looping ones too, so they are reported, not silently dropped.
        candidates = (p for p in listed if p.name.endswith(SOURCE_SUFFIXES) and os.path.lexists(p) and not p.is_dir())
    kept = []
    for path in candidates:
        relative = PurePosixPath(path.relative_to(folder).as_posix())
        if any(_skipped_folder(part) for part in relative.parts[:-1]) or excludes(path):
            continue
        kept.append(path)
    return sorted(kept, key=lambda p: p.as_posix())


def ignored_by_git(folder: Path) -> bool:
    """Whether git's view of `folder` leaves out source files that are there (.gitignore), so
    that "no Python files found" would mislead."""
    return work_tree_files(folder) is not None and next(_walk(folder), None) is not None


def discover(paths: Iterable[Path], excludes: Excludes = NO_EXCLUDES, *, force_exclude: bool = False) -> Discovery:
    """Source files under `paths`, in a stable order, each once (under the first name met).

    A file named explicitly is always taken, whatever its suffix, as black and ruff do, unless
    `force_exclude` applies the exclude globs to it too.
    """
    found = Discovery()
    seen: set[object] = set()
    for path in paths:
        if not path.exists():
            found.errors.append((path, "broken symbolic link" if path.is_symlink() else "no such file or folder"))
            continue
        if force_exclude and not path.is_dir() and excludes(path):
            continue
        for candidate in _tree(path, excludes) if path.is_dir() else [path]:
            key = _identity(candidate)
            if key not in seen:
                seen.add(key)
                found.files.append(candidate)
    return found


def _identity(path: Path) -> object:
    """What makes two names one file (a file and a symlink to it: one write): its device and
    inode, or its normalised name when it cannot be read (reported later)."""
    try:
        status = os.stat(path)
    except OSError:
        return os.path.normpath(path)
    return status.st_dev, status.st_ino


def read_source(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise FileError(f"cannot read: {error.strerror or error}") from None


def write_atomic(path: Path, data: bytes, *, expected: bytes) -> None:
    """Replace the file's content with `data` in one rename, keeping its permission bits.

    `expected` is what was read: if the file changed since, the other writer wins and nothing
    is written. The temporary file sits in the same folder so the rename is atomic.
    """
    real = Path(os.path.realpath(path))
    try:
        try:
            mode = stat.S_IMODE(real.stat().st_mode)
        except FileNotFoundError:
            raise FileError("deleted while semfix ran; not recreated") from None
        if not mode & stat.S_IWUSR:
            raise FileError(f"read-only file (mode {mode:04o}); not rewritten: make it writable to fix it")
        import tempfile  # loaded where a file is written: checking writes none

        descriptor, temporary = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".semfix-tmp")
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        try:
            current = real.read_bytes()
        except FileNotFoundError:
            raise FileError("deleted while semfix ran; not recreated") from None
        if current != expected:
            raise FileError("changed on disk while semfix ran; left as the other writer left it")
        os.replace(temporary, real)
    except BaseException as error:
        with suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise FileError(f"cannot write: {error.strerror or error}") from None
        raise


def check_writable(path: Path) -> None:
    """Raise FileError unless `path` can be written, leaving it as it was: checked before a run
    rewrites anything, so a report that cannot be written stops the run, not follows it."""
    existed = os.path.lexists(path)
    try:
        with path.open("ab"):
            pass
        if not existed:
            path.unlink()
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None


def decode_source(data: bytes) -> str:
    """Source bytes as text, decoded the way Python would (coding cookie, BOM); '' if undecodable."""
    try:
        return decode(data)[0]
    except SourceError:
        return ""


_PROJECT_ROOT = ("pyproject.toml", ".git", ".hg")


def module_names(paths: Iterable[Path]) -> dict[Path, tuple[str, bool]]:
    """Each file's dotted name, and whether it is a package's `__init__`: the packages (folders
    with an `__init__.py`) above it, and above those the folders that may be namespace packages,
    up to the project root (the nearest folder holding pyproject.toml, .git or .hg) or a folder
    not named as a Python name. An import may name the file by any trailing part of that name
    (which folder is on `sys.path` is not known): `semfix/analysis/run_imports.py`."""
    namespaces: dict[Path, tuple[str, ...]] = {}

    def above(folder: Path) -> tuple[str, ...]:
        if folder not in namespaces:
            root = not folder.name.isidentifier() or any((folder / name).exists() for name in _PROJECT_ROOT)
            namespaces[folder] = () if root else (*above(folder.parent), folder.name)
        return namespaces[folder]

    named = {}
    for path in paths:
        is_package = path.stem == "__init__"
        parts = [] if is_package else [path.stem]
        folder = path.resolve().parent
        while (folder / "__init__.py").is_file() and folder.name:
            parts.insert(0, folder.name)
            folder = folder.parent
        named[path] = ".".join([*above(folder), *parts]), is_package
    return named
