"""What `fix` writes: only files named or found inside the project, regular files only, each
one kept the file it was (its links, owner and group), and nothing where git cannot vouch for
it. Where the answer depends on who runs it, each test runs as root and as an ordinary user."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"
FIXED = BUGGY.replace("sem[...]", "sem")
NOBODY = 65534
#: Who runs semfix: root (the tests' user here), or an ordinary user through setpriv.
USERS = ["root", "user"]


def as_root() -> bool:
    return os.geteuid() == 0


def semfix(*args: str, cwd: Path, user: str = "me", stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """semfix as `user`: "me" (whoever runs the tests), "root", or "user" (uid 65534, groups
    cleared but for gid 1000, so that a group-writable file of gid 1000 is the user's to write)."""
    if user == "root" and not as_root():
        pytest.skip("needs root: the tests run as an ordinary user")
    prefix: list[str] = []
    if user == "user":
        if not as_root() or shutil.which("setpriv") is None:
            pytest.skip("running as another user needs root and setpriv")
        prefix = ["setpriv", f"--reuid={NOBODY}", "--regid=1000", "--clear-groups"]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "GITHUB_"))}
    env["HOME"] = str(cwd)  # no global git config (no safe.directory) from the tests' user

    def limit() -> None:  # a file read without end fails here, not on the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.run(
        [*prefix, sys.executable, "-m", "semfix", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
        preexec_fn=limit,
    )


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every user may enter and write (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="semfix-writes-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def open_to_all(folder: Path) -> None:
    for root, dirs, files in os.walk(folder):
        for name in [*dirs, *files]:
            Path(root, name).chmod(0o777 if Path(root, name).is_dir() else 0o666)


@pytest.mark.parametrize("in_git", [False, True], ids=["plain-folder", "git-tree"])
def test_fix_never_writes_through_a_link_leaving_the_project(shared: Path, in_git: bool) -> None:
    installed = shared / "site" / "kernel.py"
    installed.parent.mkdir()
    installed.write_text(BUGGY)
    project = shared / "project"
    project.mkdir()
    (project / "own.py").write_text(BUGGY)
    (project / "vendored.py").symlink_to(installed)
    if in_git:
        git(project, "init", "-q")
        git(project, "add", ".")
        git(project, "commit", "-qm", "start")
    for named in (".", "vendored.py"):
        result = semfix("fix", named, cwd=project)
        assert installed.read_text() == BUGGY, result.stderr
        assert f"warning: vendored.py: a symbolic link to {installed}, outside the project" in result.stderr
    assert (project / "own.py").read_text() == FIXED


def test_a_link_inside_the_project_is_still_fixed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "k.py").write_text(BUGGY)
    (tmp_path / "k.py").symlink_to("real/k.py")
    assert semfix("fix", "k.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "k.py").is_symlink() and (tmp_path / "real" / "k.py").read_text() == FIXED


@pytest.mark.parametrize("command", ["check", "review"])
def test_a_link_to_a_device_is_skipped_and_named_not_read(tmp_path: Path, command: str) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "start")
    (tmp_path / "k.py").write_text(BUGGY)
    (tmp_path / "evil.py").symlink_to("/dev/zero")
    git(tmp_path, "add", ".")
    result = semfix(command, *(["--base", "HEAD"] if command == "review" else []), cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # the kernel's finding, nothing else
    assert "warning: evil.py: not a regular file (a character device): skipped" in result.stderr
    assert "k.py:5:23: SEM001" in result.stdout


def test_a_named_pipe_is_never_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    result = semfix("check", "pipe.py", cwd=tmp_path)
    assert "warning: pipe.py: not a regular file (a named pipe): skipped" in result.stderr


def test_stdin_filename_without_a_dash_reads_stdin_and_writes_nothing(tmp_path: Path) -> None:
    """As ruff: `--stdin-filename` means the source is on stdin, whatever else is named."""
    (tmp_path / "k.py").write_text(BUGGY)
    (tmp_path / "other.py").write_text(BUGGY)
    result = semfix("fix", "--stdin-filename", "k.py", cwd=tmp_path, stdin=BUGGY)
    assert result.returncode == 0 and result.stdout == FIXED
    named = semfix("fix", "--stdin-filename", "k.py", "other.py", cwd=tmp_path, stdin=BUGGY)
    assert named.stdout == FIXED
    assert "warning: ignoring other.py in favor of standard input (--stdin-filename)" in named.stderr
    assert (tmp_path / "k.py").read_text() == BUGGY and (tmp_path / "other.py").read_text() == BUGGY


@pytest.mark.parametrize("user", USERS)
def test_the_dirty_tree_guard_fails_closed_when_git_refuses_the_repository(shared: Path, user: str) -> None:
    """A checkout owned by someone else ("dubious ownership": root in a container over a mounted
    checkout): git answers nothing, so nothing can be shown clean, and nothing is written."""
    git(shared, "init", "-q")
    (shared / "k.py").write_text(BUGGY)
    git(shared, "add", "k.py")
    git(shared, "commit", "-qm", "start")
    (shared / "k.py").write_text(BUGGY + "# my own edit\n")
    (shared / "ignored.py").write_text(BUGGY)
    (shared / ".gitignore").write_text("ignored.py\n")
    open_to_all(shared)
    owner = 1000 if user == "root" else 0  # someone other than who runs semfix
    for root, dirs, files in os.walk(shared):
        for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
            os.chown(name, owner, owner)
    result = semfix("fix", ".", cwd=shared, user=user)
    assert result.returncode == 2, result.stderr
    assert "error: k.py: git cannot say whether it has edits of its own (detected dubious ownership" in result.stderr
    assert (shared / "k.py").read_text() == BUGGY + "# my own edit\n"
    assert (shared / "ignored.py").read_text() == BUGGY
    assert semfix("fix", "--allow-dirty", "k.py", cwd=shared, user=user).returncode == 0
    assert (shared / "k.py").read_text() == FIXED + "# my own edit\n"


def test_hard_links_stay_one_file(tmp_path: Path) -> None:
    (tmp_path / "k.py").write_text(BUGGY)
    os.link(tmp_path / "k.py", tmp_path / "same.py")
    assert semfix("fix", "k.py", cwd=tmp_path).returncode == 0
    assert (tmp_path / "k.py").stat().st_ino == (tmp_path / "same.py").stat().st_ino
    assert (tmp_path / "same.py").read_text() == FIXED
    assert semfix("check", ".", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("user", USERS)
def test_fix_keeps_the_files_owner_and_group(shared: Path, user: str) -> None:
    """Root keeps the user's file the user's; an ordinary user writing a file of their group
    leaves it the owner's (a rename would make it theirs), as ruff and black do."""
    target = shared / "k.py"
    target.write_text(BUGGY)
    target.chmod(0o664)
    os.chown(target, 1000, 1000)
    assert semfix("fix", "--allow-dirty", "k.py", cwd=shared, user=user).returncode == 0
    assert target.read_text() == FIXED
    status = target.stat()
    assert (status.st_uid, status.st_gid, status.st_mode & 0o777) == (1000, 1000, 0o664)


def test_a_name_of_255_bytes_is_fixable(tmp_path: Path) -> None:
    name = "k" * 252 + ".py"
    (tmp_path / name).write_text(BUGGY)
    result = semfix("fix", name, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / name).read_text() == FIXED
    assert os.listdir(tmp_path) == [name]


def test_each_file_takes_its_nearest_settings_file(tmp_path: Path) -> None:
    """A monorepo: each member's `extend-exclude` and rules hold in a run from the root, and in a
    pre-commit batch spanning members (whose common folder is the root, with no settings)."""
    git(tmp_path, "init", "-q")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mono'\n")
    for member, table in (("a", 'extend-exclude = ["vendored"]'), ("b", 'ignore = ["SEM001"]\nforce-exclude = true')):
        (tmp_path / member / "vendored").mkdir(parents=True)
        (tmp_path / member / "pyproject.toml").write_text(f"[tool.semfix]\n{table}\n")
        (tmp_path / member / "k.py").write_text(BUGGY)
        (tmp_path / member / "vendored" / "k.py").write_text(BUGGY)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    batch = semfix("fix", "--force-exclude", "a/vendored/k.py", "a/k.py", "b/k.py", cwd=tmp_path)
    assert batch.returncode == 0, batch.stderr
    whole = semfix("fix", ".", cwd=tmp_path)
    assert whole.returncode == 0, whole.stderr
    assert (tmp_path / "a" / "vendored" / "k.py").read_text() == BUGGY  # a's exclude
    assert (tmp_path / "a" / "k.py").read_text() == FIXED
    assert (tmp_path / "b" / "k.py").read_text() == BUGGY  # b's ignore
    assert (tmp_path / "b" / "vendored" / "k.py").read_text() == BUGGY


def test_show_files_lists_what_a_run_checks_and_why_it_skips_the_rest(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nextend-exclude = ["gen"]\n')
    (tmp_path / ".gitignore").write_text("ignored.py\n")
    for name in ("pkg/k.py", "pkg/gen/g.py", "node_modules/x/n.py", "build/b.py", "ignored.py", "notes.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BUGGY)
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    result = semfix("check", "--show-files", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["build/b.py", "pkg/k.py"]
    assert result.stderr.splitlines() == [
        "skipped: ignored.py: ignored by git (.gitignore, info/exclude or the global excludes file)",
        "skipped: node_modules: a folder ruff and semfix skip by default",
        f"skipped: pkg/gen/g.py: excluded by 'gen' (--exclude or extend-exclude in {tmp_path / 'pyproject.toml'})",
        "skipped: zero.py: not a regular file (a character device): skipped",
    ]
    assert (tmp_path / "pkg" / "k.py").read_text() == BUGGY  # nothing checked, nothing written
    assert semfix("fix", "--show-files", "pkg", cwd=tmp_path).stdout == "pkg/k.py\n"
    assert (tmp_path / "pkg" / "k.py").read_text() == BUGGY
