"""Review as a gate: whatever the user's git configuration, attributes, links and submodules
say, each changed line is read, and a finding the branch made counts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

OLD = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def old_kernel(sem):\n"
    "    pl.semaphore_wait(sem[...])  # an old bug, not the branch's doing\n"
    "\n"
    "\n"
    "def kernel(sem):\n"
    "    pl.semaphore_signal(sem, 1)\n"
)
NEW_BUGS = (
    "from jax.experimental import pallas as pl\n\n\n"
    "def new(sem):\n    pl.semaphore_wait(sem[...])\n    pl.semaphore_signal(sem[()])\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository on main with one commit; git reads no configuration but the test's."""
    for variable in ("GITHUB_BASE_REF", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", "GITHUB_EVENT_NAME"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "gitconfig"
    config.write_text('[user]\n\tname = t\n\temail = t@t\n[protocol "file"]\n\tallow = always\n')
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "k.py").write_text(OLD)
    git(work, "add", ".")
    git(work, "commit", "-qm", "main")
    git(work, "checkout", "-q", "-b", "feature")
    return work


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def review(cwd: Path, *args: str) -> tuple[int, list[tuple[str, int, str]], str]:
    done = subprocess.run(
        [sys.executable, "-m", "semfix", "review", "--base", "main", "--format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    found = [(f["path"], f["line"], f["rule"]) for f in json.loads(done.stdout)] if done.returncode < 2 else []
    return done.returncode, found, done.stderr


def test_review_ignores_the_users_diff_configuration(repo: Path) -> None:
    """Merged hunks (`diff.interHunkContext`) would count the old bug as changed."""
    config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    config.write_text(
        config.read_text() + "[diff]\n\tinterHunkContext = 10\n\tnoprefix = true\n\tmnemonicPrefix = true\n"
        "\tsubmodule = log\n\talgorithm = patience\n\trelative = true\n[color]\n\tdiff = always\n"
    )
    (repo / "k.py").write_text(OLD.replace("sem, 1)", "sem, 2)").replace("def old_kernel", "def older_kernel"))
    git(repo, "commit", "-qam", "clean change")
    assert review(repo)[:2] == (0, [])


def test_a_diff_attribute_hides_no_kernel(repo: Path) -> None:
    (repo / ".gitattributes").write_text("*.py -diff\n")
    (repo / "new.py").write_text(NEW_BUGS)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "new kernel, its diff hidden")
    assert review(repo)[:2] == (1, [("new.py", 5, "SEM001"), ("new.py", 6, "SEM001")])


def test_a_link_become_a_file_keeps_the_names_in_step(repo: Path) -> None:
    """A type change is two patches under one name."""
    (repo / "a.py").symlink_to("k.py")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "a link")
    git(repo, "branch", "-f", "main")
    (repo / "a.py").unlink()
    (repo / "a.py").write_text("x = 1\n")
    (repo / "z.py").write_text(NEW_BUGS)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the link a file, and a new kernel")
    assert review(repo)[:2] == (1, [("z.py", 5, "SEM001"), ("z.py", 6, "SEM001")])


def test_a_submodule_bump_keeps_the_names_in_step(repo: Path) -> None:
    """`diff.submodule=log` writes a bump with no patch header at all."""
    library = repo.parent / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    git(library, "commit", "-q", "--allow-empty", "-m", "one")
    git(repo, "checkout", "-q", "main")
    git(repo, "submodule", "add", "-q", str(library), "a_sub")
    git(repo, "commit", "-qm", "a submodule")
    git(repo, "checkout", "-q", "-B", "feature")
    git(repo / "a_sub", "commit", "-q", "--allow-empty", "-m", "two")
    (repo / "z.py").write_text(NEW_BUGS)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "bump, and a new kernel")
    config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    config.write_text(config.read_text() + "[diff]\n\tsubmodule = log\n")
    assert review(repo)[:2] == (1, [("z.py", 5, "SEM001"), ("z.py", 6, "SEM001")])


ONE = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_hbm, o_hbm, sem):
    pl.semaphore_signal(sem, 1)
    pl.semaphore_wait(sem, 1)


def run(x, out_shape):
    return pl.pallas_call(kernel, out_shape=out_shape, scratch_shapes=[pltpu.SemaphoreType.REGULAR])(x)
"""


def test_an_allocation_made_an_array_breaks_the_lines_that_use_it(repo: Path) -> None:
    """SEM004's evidence is followed, as SEM006's: the branch changed only the allocation."""
    (repo / "one.py").write_text(ONE)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "one semaphore")
    git(repo, "branch", "-f", "main")
    (repo / "one.py").write_text(ONE.replace("REGULAR]", "REGULAR((2,))]"))
    git(repo, "commit", "-qam", "two semaphores")
    assert review(repo)[:2] == (1, [("one.py", 6, "SEM004"), ("one.py", 7, "SEM004")])


def test_a_path_that_is_not_there_is_an_error(repo: Path) -> None:
    code, _, stderr = review(repo, "--", "kernals")
    assert code == 2
    assert stderr.splitlines()[-1] == "error: kernals: no such file or folder"


def test_check_searches_submodules_build_and_hidden_folders_as_ruff(repo: Path) -> None:
    """ruff's default excludes hold `_build` and `dist`, not `build`, and no hidden folder but its
    list; a submodule is searched as its own work tree."""
    library = repo.parent / "library"
    library.mkdir()
    git(library, "init", "-q", "-b", "main")
    (library / "lib.py").write_text(NEW_BUGS)
    git(library, "add", ".")
    git(library, "commit", "-qm", "one")
    git(repo, "submodule", "add", "-q", str(library), "vendor_lib")
    for folder in ("build", ".github/scripts", "dist", ".venv"):
        (repo / folder).mkdir(parents=True)
        (repo / folder / "k.py").write_text(NEW_BUGS)
    git(repo, "add", "-f", ".")
    git(repo, "commit", "-qm", "tracked build and hidden folders")
    (repo / "k.py").write_text(OLD.replace("[...]", ""))
    done = subprocess.run(
        [sys.executable, "-m", "semfix", "check", "--format", "json", "."],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert sorted({f["path"] for f in json.loads(done.stdout)}) == [
        ".github/scripts/k.py",
        "build/k.py",
        "vendor_lib/lib.py",
    ]
