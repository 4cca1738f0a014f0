"""Finding Python files, reading them, and replacing them atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

PYTHON_SUFFIXES = (".py", ".pyi")

#: Folder names never searched when walking a tree (as ruff and black skip them).
EXCLUDED_DIRS = frozenset(
    {
        ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pytest_cache",
        ".ruff_cache", ".svn", ".tox", ".venv", "__pycache__", "__pypackages__", "_build",
        "buck-out", "build", "dist", "node_modules", "site-packages", "venv",
    }
)


class FileError(Exception):
    """A file could not be read or written; the message says why, without the path."""


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[tuple[Path, str]] = field(default_factory=list)


def _walk(folder: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in EXCLUDED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(PYTHON_SUFFIXES):
                yield Path(root, name)


def discover(paths: Iterable[Path]) -> Discovery:
    """Python files under `paths`, in a stable order, each once.

    A file named explicitly is always taken, whatever its suffix, as black and ruff do.
    """
    found = Discovery()
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            candidates: Iterable[Path] = _walk(path)
        elif path.exists():
            candidates = [path]
        elif path.is_symlink():
            found.errors.append((path, "broken symbolic link"))
            continue
        else:
            found.errors.append((path, "no such file or folder"))
            continue
        for candidate in candidates:
            key = Path(os.path.normpath(candidate))
            if key not in seen:
                seen.add(key)
                found.files.append(candidate)
    return found


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
        mode = stat.S_IMODE(real.stat().st_mode)
        descriptor, temporary = tempfile.mkstemp(
            dir=real.parent, prefix=f".{real.name}.", suffix=".semfix-tmp"
        )
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        if real.read_bytes() != expected:
            raise FileError("changed on disk while semfix ran; left as the other writer left it")
        os.replace(temporary, real)
    except OSError as error:
        with suppress(OSError):
            os.unlink(temporary)
        raise FileError(f"cannot write: {error.strerror or error}") from None
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
