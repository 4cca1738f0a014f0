"""Discovery and atomic writing, on a real temporary folder."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from semfix.files import FileError, discover, write_atomic


def test_write_refuses_when_the_file_changed_since_it_was_read(tmp_path: Path) -> None:
    target = tmp_path / "k.py"
    target.write_bytes(b"someone else's edit\n")
    with pytest.raises(FileError, match="changed on disk"):
        write_atomic(target, b"semfix's version\n", expected=b"what semfix read\n")
    assert target.read_bytes() == b"someone else's edit\n"
    assert os.listdir(tmp_path) == ["k.py"]


def test_a_write_that_fails_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new bytes go to a temporary file renamed over the old one: a write that fails before
    the rename (a full disk, met here at the fsync) leaves the file whole, and no temporary file."""
    target = tmp_path / "k.py"
    target.write_bytes(b"old\n")

    def full(descriptor: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(FileError, match="No space left on device"):
        write_atomic(target, b"new\n", expected=b"old\n")
    assert target.read_bytes() == b"old\n"
    assert os.listdir(tmp_path) == ["k.py"]


def test_write_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_bytes(b"old\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    write_atomic(link, b"new\n", expected=b"old\n")
    assert link.is_symlink() and real.read_bytes() == b"new\n"


def test_discovery_order_dedup_and_missing_paths(tmp_path: Path) -> None:
    for name in ("b.py", "a.py", "notes.txt", "stub.pyi", "sub/c.py", "node_modules/d.py", ".hidden/e.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    outside = tmp_path.parent / f"{tmp_path.name}-dangling.py"
    outside.symlink_to(tmp_path / "gone.py")
    found = discover([tmp_path, tmp_path / "a.py", tmp_path / "notes.txt", tmp_path / "nope", outside])
    assert [p.relative_to(tmp_path).as_posix() for p in found.files] == [
        ".hidden/e.py",  # searched, as ruff searches hidden folders
        "a.py",
        "b.py",
        "stub.pyi",
        "sub/c.py",
        "notes.txt",
    ]
    assert [(p.name, reason) for p, reason in found.errors] == [
        ("nope", "no such file or folder"),
        (outside.name, "broken symbolic link"),
    ]


def test_discovery_takes_a_file_and_a_symlink_to_it_once(tmp_path: Path) -> None:
    """Rewriting both names would find the second one changed on disk by the first write."""
    (tmp_path / "real.py").write_text("")
    (tmp_path / "link.py").symlink_to("real.py")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up.py").symlink_to("../real.py")
    found = discover([tmp_path, tmp_path / "real.py"])
    assert [p.relative_to(tmp_path).as_posix() for p in found.files] == ["link.py"]


def test_discovery_asks_the_system_once_per_folder_not_per_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where each system call is slow (a sandbox: the device's `stat` took 50 us), discovery,
    reading and the settings' search cost a stat or two per folder and an open per file read:
    a file's kind and inode come with its folder's listing, the current folder is asked once,
    and a folder's settings files are found in one listing of it, not five stats."""
    from semfix.cli.projects import Projects
    from semfix.files import module_names, read_source

    for folder in ("a", "a/b", "c"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
        for i in range(10):
            (tmp_path / folder / f"m{i}.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text("[tool.other]\n")
    calls: list[str] = []
    for name in ("stat", "lstat", "getcwd", "scandir", "listdir", "open"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    monkeypatch.chdir(tmp_path)
    projects = Projects()
    found = discover([Path(".")], projects.excludes)
    assert len(found.files) == 33
    data = [read_source(path) for path in found.files]
    assert data[0] == b""
    names = module_names(found.files, found.links)
    assert names[Path("a/b/m0.py")] == ("a.b.m0", False)
    folders = 4  # the root and the three
    assert calls.count("open") == 33  # each file read, and nothing else opened
    assert calls.count("getcwd") <= folders + 3  # a project per folder, discovery, the names, git's check
    above = 2 * len(tmp_path.parts)  # git's check, once a run: the real path, a `.git` at each level
    assert calls.count("stat") + calls.count("lstat") <= 3 * folders + 5 + above, sorted(calls)


def test_git_is_asked_only_where_it_could_find_a_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with no `.git` there or above, and no GIT_DIR or GIT_WORK_TREE, is no work tree:
    git is not started for it (a process costs more than the run it would list). Where a `.git`
    is above, or GIT_DIR names a repository elsewhere, git is asked and its listing holds."""
    import subprocess

    from semfix import git

    plain = tmp_path / "plain"
    (plain / "pkg").mkdir(parents=True)
    (plain / "pkg" / "k.py").write_text("x = 1\n")
    started: list[list[str]] = []
    run = subprocess.run

    def counted(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        started.append(args)
        return run(args, **kwargs)  # type: ignore[call-overload, no-any-return]

    monkeypatch.setattr(subprocess, "run", counted)
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.delenv("GIT_WORK_TREE", raising=False)
    assert git.work_tree_files(plain / "pkg") is None and git.toplevel(plain) is None
    assert started == []
    assert [p.name for p in discover([plain]).files] == ["k.py"]
    assert started == []

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    run(["git", "init", "-q", str(repo)], check=True)
    (repo / "sub" / "kept.py").write_text("x = 1\n")
    (repo / "sub" / "dropped.py").write_text("x = 1\n")
    (repo / ".gitignore").write_text("dropped.py\n")
    assert [p.name for p in git.work_tree_files(repo / "sub") or []] == ["kept.py"]
    assert len(started) == 1

    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(plain))
    git.work_tree_files(plain)
    assert len(started) == 2  # asked: the environment may name a work tree anywhere
