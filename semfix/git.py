"""What git knows about the files: which are listed (honouring .gitignore) and which are dirty."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def _git(folder: Path, *args: str) -> str | None:
    return _ask(folder, *args)[0]


def _ask(folder: Path, *args: str) -> tuple[str | None, str]:
    """git's output (None when it failed), and why it failed: the first line it printed."""
    import subprocess  # loaded by the first call: a run over named files calls none

    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, str(error)
    if done.returncode == 0:
        return done.stdout.decode("utf-8", "surrogateescape"), ""
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return None, said[0].removeprefix("fatal: ") if said else f"git exited {done.returncode}"


def work_tree_files(folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside a work tree.

    `git ls-files --exclude-standard` applies every .gitignore (nested ones too), the
    repository's info/exclude and the user's global excludes file.
    """
    if _outside_work_trees(folder):
        return None
    listed = _git(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if listed is None:
        return None
    return sorted({folder / name for name in listed.split("\0") if name})


def _outside_work_trees(folder: Path) -> bool:
    """Would git find no work tree from `folder`: no `.git` (a folder, a file, a link) there or
    above its real path, as git looks, and no GIT_DIR or GIT_WORK_TREE naming one elsewhere?
    Then it is not asked: starting it (the subprocess import, a fork, git's own start) was 9 ms
    of a warm run here, and a fork alone takes 10-25 ms on a sandbox."""
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return False
    here = os.path.realpath(folder)
    while not os.path.lexists(os.path.join(here, ".git")):
        if (parent := os.path.dirname(here)) == here:
            return True
        here = parent
    return False


#: What `dirty` says of a file: untracked, or with unstaged edits; else git could not answer.
UNTRACKED, UNSTAGED = "untracked", "unstaged"


def dirty(paths: Iterable[Path]) -> dict[Path, str]:
    """Of `paths`, those whose working copy differs from the index (UNSTAGED), those untracked
    (UNTRACKED), and those in a work tree git will not answer for (a `.git` above them, but git
    refuses it: "dubious ownership", a broken repository, no git), each with git's reason: the
    guard fails closed.

    Staged changes are clean here: semfix's own edits can still be told apart from them.
    """
    by_repo: dict[Path, list[Path]] = {}
    tops: dict[Path, Path | str | None] = {}  # by folder: one git call per folder, not per file
    found: dict[Path, str] = {}
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.parent not in tops:
            tops[real.parent] = _top_or_refusal(real.parent)
        if isinstance(top := tops[real.parent], Path):
            by_repo.setdefault(top, []).append(real)
        elif top is not None:
            found[real] = top
    for top, files in by_repo.items():
        relative = [os.path.relpath(f, top) for f in files]
        status, why = _ask(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *relative)
        if status is None:
            found.update((f, why) for f in files)
            continue
        entries = iter(status.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            if "R" in entry[:2] or "C" in entry[:2]:
                next(entries, None)  # a rename's or copy's source path follows
            if entry[1] != " ":
                found[Path(os.path.realpath(top / entry[3:]))] = UNTRACKED if entry[:2] == "??" else UNSTAGED
    return {path: found[real] for path in paths if (real := Path(os.path.realpath(path))) in found}


def _top_or_refusal(folder: Path) -> Path | str | None:
    """The work tree's root; else, where a `.git` above says there is one, why git refused it;
    else None (not in a work tree)."""
    top, why = _ask(folder, "rev-parse", "--show-toplevel")
    if top:
        return Path(top.strip())
    if "not a git repository" in why:  # an answer: a `.git` that holds no repository
        return None
    return why if any((above / ".git").exists() for above in (folder, *folder.parents)) else None


def toplevel(folder: Path) -> Path | None:
    """The root of the git work tree holding `folder`, or None outside one."""
    top = None if _outside_work_trees(folder) else _git(folder, "rev-parse", "--show-toplevel")
    return Path(top.strip()) if top else None


class BaseError(Exception):
    """The revision to compare with cannot be found. Review must then stop (exit 2) rather than
    compare with something else and pass: the message names what is missing and how to get it."""


_FULL_HISTORY = "check out the full history (actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`)"


def is_shallow(folder: Path) -> bool:
    """A shallow clone (actions/checkout's default): merge bases and old branches may be missing."""
    return (_git(folder, "rev-parse", "--is-shallow-repository") or "").strip() == "true"


def commit_of(folder: Path, revision: str) -> str | None:
    """The commit a revision names, or None where there is none."""
    found = _git(folder, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}")
    return found.strip() if found else None


def _exists(folder: Path, revision: str) -> bool:
    return commit_of(folder, revision) is not None


def _merge_base(folder: Path, left: str, right: str) -> str:
    for side in (left, right):
        if not _exists(folder, side):
            hint = _FULL_HISTORY if is_shallow(folder) else f"fetch it (`git fetch origin {side}`)"
            raise BaseError(f"cannot compare with {side!r}: no such revision in this checkout; {hint}, or pass --base")
    merged = _git(folder, "merge-base", left, right)
    if merged:
        return merged.strip()
    if is_shallow(folder):
        raise BaseError(
            f"no merge base of {left} and {right}: this checkout is shallow, so the history holding it is missing; "
            f"{_FULL_HISTORY}, or pass --base"
        )
    raise BaseError(f"{left} and {right} share no history: pass --base to name the revision to compare with")


def default_base(folder: Path) -> str | None:
    """Where a branch started: the merge base with the trunk; None when no trunk is found.

    The trunk is the pull request's target where CI names it (`GITHUB_BASE_REF`,
    `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`), else what origin/HEAD names, else the first of
    main, master and git's `init.defaultBranch` that exists (on origin first).
    Raises BaseError when CI names a branch that is not in the checkout, when the trunk found
    shares no history with HEAD, and when a shallow clone holds no trunk: each would otherwise
    review nothing, or the wrong lines, and pass.
    """
    for variable in ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"):
        if trunk := os.environ.get(variable, "").strip():
            candidates = (trunk,) if trunk.startswith("origin/") else (f"origin/{trunk}", trunk)
            found = next((c for c in candidates if _exists(folder, c)), None)
            if found is None:
                here = "shallow clone" if is_shallow(folder) else "checkout"
                raise BaseError(
                    f"{variable} names the branch {trunk!r}, but neither {' nor '.join(candidates)} is in this "
                    f"{here}: fetch it (actions/checkout with `fetch-depth: 0`, or `git fetch origin {trunk}`), "
                    "or pass --base"
                )
            return _merge_base(folder, "HEAD", found)
    remote_head = _git(folder, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    configured = _git(folder, "config", "init.defaultBranch")
    trunks = [n.strip() for n in (remote_head, "main", "master", configured) if n and n.strip()]
    for trunk in trunks:
        for upstream in (trunk,) if trunk.startswith("origin/") else (f"origin/{trunk}", trunk):
            if _exists(folder, upstream):
                return _merge_base(folder, "HEAD", upstream)
    if is_shallow(folder):
        raise BaseError(f"no trunk (origin/HEAD, main, master) in this shallow clone: {_FULL_HISTORY}, or pass --base")
    return None


def resolve_base(folder: Path, base: str) -> str:
    """A revision to diff against; `A...B` (git's merge-base syntax, B defaulting to HEAD) is
    the merge base of A and B. Raises BaseError when there is no such revision."""
    if toplevel(folder) is None:
        raise BaseError(f"cannot compare with {base!r}: not in a git work tree")
    if "..." in base:
        left, _, right = base.partition("...")
        return _merge_base(folder, left or "HEAD", right or "HEAD")
    if _exists(folder, base):
        return base
    hint = _FULL_HISTORY if is_shallow(folder) else f"fetch it (`git fetch origin {base}`)"
    raise BaseError(f"cannot compare with {base!r}: no such revision in this checkout; {hint}, or pass another --base")


#: How review runs `git diff`, whatever the user's configuration says: no colour, external
#: driver, text conversion, renames, relative paths or merged hunks (`diff.interHunkContext`
#: would count untouched lines as changed); every file as text (a `-diff` attribute would hide a
#: kernel's lines); submodules as one line; the standard prefixes, which the parse reads.
_DIFF = (
    "-c",
    "core.quotepath=off",
    "-c",
    "diff.relative=false",
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",
    "--text",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--submodule=short",
    "--ignore-submodules=none",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def changed_lines(folder: Path, base: str) -> dict[Path, set[int]] | None:
    """Per changed file (absolute path), the working-tree lines added or changed since `base`.

    None when `folder` is not in a git work tree or `base` is not a revision there. Every name
    `--name-only -z` gives (exact, whatever it holds) is a changed file; each hunk's lines go to
    the file its patch's `+++ b/` line names (git quotes a name holding a control character, a
    quote or a backslash, and ends one holding a space with a tab): a type change (a link
    become a file) is two patches under one name, and a submodule's patch may be none at all,
    so counting patches would put the names out of step.
    """
    root = toplevel(folder)
    if root is None:
        return None
    names = _git(root, *_DIFF, "--name-only", "-z", base, "--")
    diff = _git(root, *_DIFF, "-U0", base, "--")
    if names is None or diff is None:
        return None
    changed: dict[Path, set[int]] = {root / name: set() for name in names.split("\0") if name}
    current: set[int] = set()
    header = False  # in a patch's header, where `+++ ` names the file (below it, an added `++ x`)
    for line in diff.split("\n"):  # not splitlines(): a changed line may hold \r or \x0c
        if line.startswith("diff --git "):
            current, header = set(), True  # until its `+++` line: a deletion's lines go nowhere
        elif header and line.startswith("+++ "):
            name = _unquote(line[4:])
            current = changed.setdefault(root / name[2:], set()) if name.startswith("b/") else set()
        elif line.startswith("@@"):
            header = False
            added = line.split(" ")[2]  # +start[,count]
            start, _, count = added[1:].partition(",")
            first, length = int(start), int(count) if count else 1
            current.update(range(first, first + length))
    return changed


_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(name: str) -> str:
    """A name as a patch header writes it: C-quoted ("b/a\\tb.py", octal escapes for bytes
    when quotepath is on), or plain, with a tab after it where it holds a space."""
    if not name.startswith('"'):
        return name[:-1] if name.endswith("\t") and " " in name else name
    raw, index, body = bytearray(), 0, name[1 : name.rindex('"')]
    while index < len(body):
        char = body[index]
        if char != "\\":
            raw += char.encode("utf-8", "surrogateescape")
            index += 1
        elif body[index + 1] in _ESCAPES:
            raw.append(_ESCAPES[body[index + 1]])
            index += 2
        else:
            raw.append(int(body[index + 1 : index + 4], 8))
            index += 4
    return raw.decode("utf-8", "surrogateescape")
