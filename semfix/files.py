"""Finding source files, reading them, and replacing them atomically."""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import suppress
from functools import cache
from pathlib import Path, PurePosixPath

from semfix.errors import SourceError
from semfix.git import toplevel, work_tree_files
from semfix.rewrite.text import decode

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")

#: Folder names never searched when walking a tree: ruff's default excludes (a `build/` folder,
#: and hidden folders other than these, are searched, as ruff searches them).
EXCLUDED_DIRS = frozenset(
    {
        ".bzr",
        ".direnv",
        ".eggs",
        ".git",
        ".git-rewrite",
        ".hg",
        ".ipynb_checkpoints",
        ".mypy_cache",
        ".nox",
        ".pants.d",
        ".pyenv",
        ".pytest_cache",
        ".pytype",
        ".ruff_cache",
        ".svn",
        ".tox",
        ".venv",
        ".vscode",
        "__pycache__",
        "__pypackages__",
        "_build",
        "buck-out",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
    }
)


class FileError(Exception):
    """A file could not be read or written; the message says why, without the path."""


class Discovery:
    __slots__ = ("files", "errors", "skipped", "links")

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.errors: list[tuple[Path, str]] = []
        #: Files found but not taken, and why: not regular files (a link to /dev/zero would be read
        #: until memory runs out), and links that leave the project (a fix would write outside it).
        self.skipped: list[tuple[Path, str]] = []
        #: The files taken that are not known to be no link (`module_names` asks no lstat of the rest).
        self.links: set[Path] = set()


class Excludes:
    """Exclude globs, read from `root`: the folder of the settings file that declares them (else
    the current folder), as ruff reads `extend-exclude`. A glob matches a file's path from
    `root`, or any one of its parts (a folder or file name); `*` crosses folders. So a member
    of a monorepo that excludes `gen/*` skips `pkg/gen/k.py` whether pre-commit names it from
    the repository's root or a run starts inside `gen`, and no glob matches a folder above the
    project. A file outside `root` is never excluded."""

    __slots__ = ("globs", "root")

    def __init__(self, globs: tuple[str, ...] = (), root: Path = Path()) -> None:
        self.globs, self.root = globs, root

    def __call__(self, path: Path) -> bool:
        return self.match(path) is not None

    def match(self, path: Path) -> str | None:
        """The first glob that excludes the file, or None."""
        if not self.globs:
            return None
        relative = PurePosixPath(Path(os.path.relpath(os.path.abspath(path), os.path.abspath(self.root))).as_posix())
        if relative.parts[:1] == (os.pardir,):
            return None
        return next(
            (
                glob
                for glob in self.globs
                if fnmatch.fnmatchcase(str(relative), glob)
                or any(fnmatch.fnmatchcase(part, glob) for part in relative.parts)
            ),
            None,
        )


NO_EXCLUDES = Excludes()


def _skipped_folder(name: str) -> bool:
    return name in EXCLUDED_DIRS


#: What discovery knows of a file from finding it: its mode, whether it is a link, and what makes
#: two names one file (its device and inode); None where discovery must stat it (a link).
Known = tuple[int, bool, object] | None


def _walk(folder: Path) -> Iterator[tuple[Path, Known]]:
    """The source files under `folder` (a link to a folder is not followed), each with what its
    folder's listing says of it: a file's kind and inode come with the listing (os.scandir), so
    a regular file costs no stat of its own, only its folder one (its device). On a machine
    where each system call is slow (a sandbox), the stat per file was a tenth of a run."""
    try:
        device = os.stat(folder).st_dev
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if not _skipped_folder(entry.name):
                yield from _walk(Path(entry.path))
        elif entry.name.endswith(SOURCE_SUFFIXES) and not (entry.is_symlink() and os.path.isdir(entry.path)):
            regular = entry.is_file(follow_symlinks=False)
            yield Path(entry.path), (stat.S_IFREG, False, (device, entry.inode())) if regular else None


def _tree(folder: Path, excludes: Callable[[Path], bool]) -> list[tuple[Path, Known]]:
    """Source files under a folder: git's view of it in a work tree (so .gitignore holds)."""
    listed = work_tree_files(folder)
    if listed is None:  # the walk skips the excluded folders itself
        kept = [(path, known) for path, known in _walk(folder) if not excludes(path)]
    else:
        kept = []
        for path, known in (found for p in listed for found in _listed(p, excludes)):
            relative = PurePosixPath(path.relative_to(folder).as_posix())
            if any(_skipped_folder(part) for part in relative.parts[:-1]) or excludes(path):
                continue
            kept.append((path, known))
    return sorted(kept, key=lambda found: found[0].as_posix())


def _listed(path: Path, excludes: Callable[[Path], bool]) -> list[tuple[Path, Known]]:
    """What one entry of git's listing holds: a source file (a link, broken or looping, too, so
    it is reported, not silently dropped), or a submodule's files: one entry, a folder, searched
    as its own work tree, as ruff does. One lstat for most entries, where a Path's tests take
    three, and the file's discovery takes it (`Known`)."""
    try:
        status = os.lstat(path)
    except OSError:
        return []
    if stat.S_ISDIR(status.st_mode):
        return _tree(path, excludes) if (path / ".git").exists() else []
    linked = stat.S_ISLNK(status.st_mode)
    if not path.name.endswith(SOURCE_SUFFIXES) or (linked and os.path.isdir(path)):
        return []
    return [(path, None if linked else (status.st_mode, False, (status.st_dev, status.st_ino)))]


def ignored_by_git(folder: Path) -> bool:
    """Whether git's view of `folder` leaves out source files that are there (.gitignore), so
    that "no Python files found" would mislead."""
    return work_tree_files(folder) is not None and next(_walk(folder), None) is not None


def discover(
    paths: Iterable[Path],
    excludes: Callable[[Path], bool] = NO_EXCLUDES,
    *,
    force_exclude: bool | Callable[[Path], bool] = False,
) -> Discovery:
    """Source files under `paths`, in a stable order, each once (under the first name met).
    `excludes` (and `force_exclude`) may answer for each file apart: its own project's.

    A file named explicitly is always taken, whatever its suffix, as black and ruff do, unless
    `force_exclude` applies the exclude globs to it too.
    """
    found = Discovery()
    seen: set[object] = set()
    _real_folder.cache_clear()  # a folder's link may be pointed elsewhere between two runs of a server
    cwd = os.getcwd()  # once, where each file's absolute path asked it twice
    for path in paths:
        if not path.exists():
            found.errors.append((path, "broken symbolic link" if path.is_symlink() else "no such file or folder"))
            continue
        forced = force_exclude(path) if callable(force_exclude) else force_exclude
        if forced and not path.is_dir() and excludes(path):
            continue
        for candidate, known in _tree(path, excludes) if path.is_dir() else [(path, None)]:
            mode, linked, key = known or _known(candidate)
            if mode and (reason := skip_reason(candidate, mode, path, linked, cwd)) is not None:
                found.skipped.append((candidate, reason))
                continue
            if key not in seen:
                seen.add(key)
                found.files.append(candidate)
                if linked:
                    found.links.add(candidate)
    return found


def _known(path: Path) -> tuple[int, bool, object]:
    """What discovery knows of a file it stats: one lstat for a file that is no link, else the
    stat of its target too (mode 0 where it cannot be read: a broken or looping link, reported)."""
    try:
        status = os.lstat(path)
        linked = stat.S_ISLNK(status.st_mode)
        if linked:
            status = os.stat(path)
    except OSError:
        return 0, True, os.path.normpath(path)
    return status.st_mode, linked, (status.st_dev, status.st_ino)


_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a named pipe"}


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode is not read, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else _KINDS.get(stat.S_IFMT(mode), "a socket")
    return f"not a regular file ({kind}): skipped"


@cache
def project_root(given: Path) -> Path:
    """The project a path named on the command line belongs to: its git work tree, else the
    folder named (a file's own folder)."""
    folder = given if given.is_dir() else given.parent
    return toplevel(folder) or folder


def skip_reason(path: Path, mode: int, given: Path, linked: bool = True, cwd: str | None = None) -> str | None:
    """Why a file found under `given`, of this mode, is not taken (None: it is): it is not a
    regular file, or it is reached through a symbolic link that leaves the project, which a fix
    would write through (black skips such links too). A broken link is taken, to be reported.
    What makes two names one file (a file and a link to it: one write) is its device and inode.
    `linked`: the path itself may be a link (False where its lstat said it is none). `cwd`: the
    current folder, where the caller has it."""
    if (reason := _not_regular(mode)) is not None:
        return reason
    absolute = os.path.normpath(os.path.join(cwd, path)) if cwd else os.path.abspath(path)
    real = _real(absolute, linked)
    if real == absolute:
        return None  # no link on the way: the path is where it is
    root = _real(str(project_root(given)))
    if os.path.commonpath([real, root]) == root:
        return None
    return f"a symbolic link to {real}, outside the project ({root}): skipped, never written through"


def _real(path: str, linked: bool = True) -> str:
    """`os.path.realpath`, its folders' part looked up once per folder (`_real_folder`):
    realpath reads each component of each file's path again (an lstat apiece, a fifth of a warm
    run's discovery). `linked`: the path itself may be a link."""
    if linked and os.path.islink(path):
        return os.path.realpath(path)
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(_real_folder(folder), name)


@cache
def _real_folder(folder: str) -> str:
    """Where an absolute folder really is: its parent's, then one lstat of its own name (a
    link is followed as realpath follows it), so that the folders of a tree share their parents'."""
    parent, name = os.path.split(folder)
    if not name or parent == folder:
        return os.path.realpath(folder)
    try:
        linked = stat.S_ISLNK(os.lstat(folder).st_mode)
    except OSError:
        return os.path.realpath(folder)
    if linked or name in (".", ".."):
        return os.path.realpath(folder)
    return os.path.join(_real_folder(parent), name)


def read_source(path: Path) -> bytes:
    """A regular file's bytes; anything else (a device, a pipe: what a link may turn into
    between discovery and reading) is refused, not read until memory runs out or forever."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:  # one fstat, where a file object takes three
            status = os.fstat(descriptor)
            if (reason := _not_regular(status.st_mode)) is not None:
                raise FileError(reason)
            chunks = [os.read(descriptor, status.st_size + 1)]
            while chunks[-1] and (len(chunks) > 1 or len(chunks[0]) > status.st_size):  # it grew since the fstat
                chunks.append(os.read(descriptor, 1 << 16))
            return b"".join(chunks)
        finally:
            os.close(descriptor)
    except OSError as error:
        raise FileError(f"cannot read: {error.strerror or error}") from None


def write_atomic(path: Path, data: bytes, *, expected: bytes) -> None:
    """Replace the file's content with `data`, keeping its permission bits, owner and group.

    `expected` is what was read: if the file changed since, the other writer wins and nothing
    is written. The temporary file sits in the same folder, under a short name (a name of 255
    bytes is fixable too), so the rename is atomic. A file with other hard links, or whose owner
    this process cannot give the new file, is written in place instead, as ruff and black write
    every file: a rename would split the links, or hand the user's file to root.
    """
    real = Path(os.path.realpath(path))
    try:
        try:
            status = real.stat()
        except FileNotFoundError:
            raise FileError("deleted while semfix ran; not recreated") from None
        mode = stat.S_IMODE(status.st_mode)
        if not mode & stat.S_IWUSR:
            raise FileError(f"read-only file (mode {mode:04o}); not rewritten: make it writable to fix it")
        if status.st_nlink > 1:
            return _write_in_place(real, data, expected)
        import tempfile  # loaded where a file is written: checking writes none

        descriptor, temporary = tempfile.mkstemp(dir=real.parent, prefix=".semfix-", suffix=".tmp")
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            made = os.fstat(handle.fileno())
            if (made.st_uid, made.st_gid) != (status.st_uid, status.st_gid):
                try:
                    os.fchown(handle.fileno(), status.st_uid, status.st_gid)
                except PermissionError:  # not root: the owner stays only if the file does
                    handle.close()
                    os.unlink(temporary)
                    return _write_in_place(real, data, expected)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        _unchanged(real.read_bytes, expected)
        os.replace(temporary, real)
    except BaseException as error:
        with suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise FileError(f"cannot write: {error.strerror or error}") from None
        raise


def _unchanged(read: Callable[[], bytes], expected: bytes) -> None:
    try:
        current = read()
    except FileNotFoundError:
        raise FileError("deleted while semfix ran; not recreated") from None
    if current != expected:
        raise FileError("changed on disk while semfix ran; left as the other writer left it")


def _write_in_place(real: Path, data: bytes, expected: bytes) -> None:
    """Overwrite the file itself (its inode, links, owner and group kept), once what it holds
    is still what was read."""
    try:
        with real.open("r+b") as handle:
            _unchanged(handle.read, expected)
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as error:
        raise FileError(f"cannot write: {error.strerror or error}") from None


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


def module_names(paths: Iterable[Path], links: Collection[Path] | None = None) -> dict[Path, tuple[str, bool]]:
    """Each file's dotted name, and whether it is a package's `__init__`: the packages (folders
    with an `__init__.py`) above it, and above those the folders that may be namespace packages,
    up to the project root (the nearest folder holding pyproject.toml, .git or .hg) or a folder
    not named as a Python name. An import may name the file by any trailing part of that name
    (which folder is on `sys.path` is not known): `semfix/analysis/run_imports.py`. `links`: the
    paths that may be links (`Discovery.links`; None: any may be, each is asked)."""
    namespaces: dict[str, tuple[str, ...]] = {}  # folders as strings: pathlib was most of the time
    packages: dict[str, tuple[str, ...]] = {}  # a folder: the dotted name of what it holds

    def above(folder: str) -> tuple[str, ...]:
        if folder not in namespaces:
            parent, name = os.path.split(folder)
            root = not name.isidentifier() or any(os.path.exists(os.path.join(folder, n)) for n in _PROJECT_ROOT)
            namespaces[folder] = () if root else (*above(parent), name)
        return namespaces[folder]

    def package(folder: str) -> tuple[str, ...]:  # asked once per folder, not once per file in it
        if folder not in packages:
            parent, name = os.path.split(folder)
            init = os.path.join(folder, "__init__.py")
            inside = name and (init in known or os.path.isfile(init))  # a file of the run: no stat
            packages[folder] = (*package(parent), name) if inside else above(folder)
        return packages[folder]

    cwd = os.getcwd()
    real: dict[str, str] = {}  # a folder of the run's files: where it really is, resolved once
    folder_of: dict[Path, str] = {}
    known: set[str] = set()  # the run's files that are no links, where they really are: no stat for them
    for path in paths:
        if (path in links) if links is not None else path.is_symlink():
            folder_of[path] = str(path.resolve().parent)
            continue
        given = os.path.dirname(path)
        if given not in real:
            real[given] = _real_folder(os.path.normpath(os.path.join(cwd, given)))
        folder_of[path] = real[given]
        known.add(os.path.join(real[given], path.name))
    return {
        path: (".".join([*package(folder), *([] if path.stem == "__init__" else [path.stem])]), path.stem == "__init__")
        for path, folder in folder_of.items()
    }
