"""What git knows about the files: which are listed (honouring .gitignore) and which are dirty."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path


def _git(folder: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "surrogateescape") if done.returncode == 0 else None


def work_tree_files(folder: Path) -> list[Path] | None:
    """Tracked and untracked-but-not-ignored files under `folder`, or None outside a work tree.

    `git ls-files --exclude-standard` applies every .gitignore (nested ones too), the
    repository's info/exclude and the user's global excludes file.
    """
    listed = _git(folder, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    if listed is None:
        return None
    return sorted({folder / name for name in listed.split("\0") if name})


def dirty(paths: Iterable[Path]) -> dict[Path, bool]:
    """Of `paths`, those whose working copy differs from the index, each with whether it is untracked.

    Staged changes are clean here: semfix's own edits can still be told apart from them.
    """
    by_repo: dict[Path, list[Path]] = {}
    tops: dict[Path, Path | None] = {}  # by folder: one git call per folder, not per file
    for path in paths:
        real = Path(os.path.realpath(path))
        if real.parent not in tops:
            tops[real.parent] = toplevel(real.parent)
        if (top := tops[real.parent]) is not None:
            by_repo.setdefault(top, []).append(real)
    found: dict[Path, bool] = {}
    for top, files in by_repo.items():
        relative = [os.path.relpath(f, top) for f in files]
        status = _git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *relative)
        if status is None:
            continue
        entries = iter(status.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            if "R" in entry[:2] or "C" in entry[:2]:
                next(entries, None)  # a rename's or copy's source path follows
            if entry[1] != " ":
                found[Path(os.path.realpath(top / entry[3:]))] = entry[:2] == "??"
    return {path: found[real] for path in paths if (real := Path(os.path.realpath(path))) in found}


def toplevel(folder: Path) -> Path | None:
    """The root of the git work tree holding `folder`, or None outside one."""
    top = _git(folder, "rev-parse", "--show-toplevel")
    return Path(top.strip()) if top else None


def default_base(folder: Path) -> str | None:
    """Where a branch started: the merge base with the trunk; None when no trunk is found.

    The trunk is the pull request's target where CI names it (`GITHUB_BASE_REF`,
    `CI_MERGE_REQUEST_TARGET_BRANCH_NAME`), else what origin/HEAD names, else the first of
    main, master and git's `init.defaultBranch` that exists (on origin first).
    """
    remote_head = _git(folder, "symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD")
    configured = _git(folder, "config", "init.defaultBranch")
    named = [os.environ.get("GITHUB_BASE_REF"), os.environ.get("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")]
    trunks = [
        *(n.strip() for n in (*named, remote_head) if n),
        "main",
        "master",
        *([configured.strip()] if configured else []),
    ]
    for trunk in trunks:
        for upstream in (trunk,) if trunk.startswith("origin/") else (f"origin/{trunk}", trunk):
            base = _git(folder, "merge-base", "HEAD", upstream)
            if base:
                return base.strip()
    return None


def resolve_base(folder: Path, base: str) -> str | None:
    """A revision to diff against; `A...B` (git's merge-base syntax, B defaulting to HEAD) is
    the merge base of A and B. None when there is no such revision."""
    if "..." in base:
        left, _, right = base.partition("...")
        merged = _git(folder, "merge-base", left or "HEAD", right or "HEAD")
        return merged.strip() if merged else None
    return base if _git(folder, "rev-parse", "--verify", "--quiet", f"{base}^{{commit}}") is not None else None


def changed_lines(folder: Path, base: str) -> dict[Path, set[int]] | None:
    """Per changed file (absolute path), the working-tree lines added or changed since `base`.

    None when `folder` is not in a git work tree or `base` is not a revision there.
    """
    root = toplevel(folder)
    if root is None:
        return None
    diff = _git(
        root, "-c", "core.quotepath=off", "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", base, "--"
    )
    if diff is None:
        return None
    changed: dict[Path, set[int]] = {}
    current: set[int] | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = None if name == "/dev/null" else changed.setdefault(root / name[2:], set())
        elif line.startswith("@@") and current is not None:
            added = line.split(" ")[2]  # +start[,count]
            start, _, count = added[1:].partition(",")
            first, length = int(start), int(count) if count else 1
            current.update(range(first, first + length))
    return changed
