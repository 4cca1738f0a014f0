"""Integrations that need the package registries: the SARIF schema, and pre-commit for real.

Marked `network`; deselect with `-m "not network"` on a machine without access to PyPI and
the npm registry. `.ci/run` runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.network
CHECKOUT = Path(__file__).resolve().parents[1]
BUGGY = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem[...])\n"
CLEAN = BUGGY.replace("sem[...]", "sem")


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def sarif_schema(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The SARIF 2.1.0 JSON schema, as Microsoft ships it in the npm package @microsoft/jest-sarif."""
    if shutil.which("npm") is None:
        pytest.fail("npm is needed to fetch the SARIF schema package")
    folder = tmp_path_factory.mktemp("sarif")
    packed = subprocess.run(
        ["npm", "pack", "@microsoft/jest-sarif@1.0.0-beta.0", "--silent"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert packed.returncode == 0, packed.stderr
    with tarfile.open(folder / packed.stdout.strip().splitlines()[-1]) as archive:
        member = archive.extractfile("package/lib/schemas/sarif-2.1.0-rtm.5.json")
        assert member is not None
        return json.load(member)


def test_sarif_output_validates_against_the_schema(tmp_path: Path, sarif_schema: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    (tmp_path / "k.py").write_text(BUGGY + "    pl.semaphore_signal(sems.at[0:2])\n")
    result = subprocess.run(
        [sys.executable, "-m", "semfix", "check", "--format", "sarif", "k.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    log = json.loads(result.stdout)
    jsonschema.validate(log, sarif_schema)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["SEM001", "SEM004"]
    assert "fixes" in results[0] and "fixes" not in results[1]
    (tmp_path / "broken.py").write_text(BUGGY + "    pl.semaphore_wait(\n")  # a file semfix cannot process
    command = [sys.executable, "-m", "semfix", "check", "--format", "sarif", "k.py", "broken.py"]
    failed = json.loads(subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False).stdout)
    jsonschema.validate(failed, sarif_schema)
    [notice] = failed["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notice["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"
    command = [sys.executable, "-m", "semfix", "check", "--format", "sarif", "--select", "SEM9", "k.py"]
    stopped = json.loads(subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False).stdout)
    jsonschema.validate(stopped, sarif_schema)  # a usage error: a notification without a location


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This checkout's files, committed in a repository of their own, for pre-commit to install."""
    repo = tmp_path_factory.mktemp("semfix-hooks")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=CHECKOUT,
        capture_output=True,
        text=True,
    )
    names = [n for n in listed.stdout.split("\0") if n] if listed.returncode == 0 else []
    assert "pyproject.toml" in names and ".pre-commit-hooks.yaml" in names
    for name in names:
        if (CHECKOUT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(CHECKOUT / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    assert git(repo, "commit", "-qm", "semfix").returncode == 0
    return repo


def test_pre_commit_hook_fixes_and_blocks_then_passes(tmp_path: Path, hook_repo: Path) -> None:
    if shutil.which("pre-commit") is None and not (Path(sys.executable).parent / "pre-commit").exists():
        pytest.fail("pre-commit is not installed (pip install -e '.[test]')")
    pre_commit = (
        str(Path(sys.executable).parent / "pre-commit")
        if (Path(sys.executable).parent / "pre-commit").exists()
        else "pre-commit"
    )
    rev = git(hook_repo, "rev-parse", "HEAD").stdout.strip()
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: semfix\n"
    )
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache")}
    installed = subprocess.run([pre_commit, "install"], cwd=project, capture_output=True, text=True, env=env)
    assert installed.returncode == 0, installed.stderr
    (project / "kernel.py").write_text(BUGGY)
    (project / "pyproject.toml").write_text('[tool.semfix]\nextend-exclude = ["vendor"]\n')
    (project / "vendor").mkdir()
    (project / "vendor" / "lib.py").write_text(BUGGY)  # named by pre-commit, excluded by the project
    git(project, "add", ".")
    blocked = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-m", "buggy kernel"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert blocked.returncode != 0, blocked.stdout + blocked.stderr
    assert (project / "kernel.py").read_text() == CLEAN  # the hook fixed it in place
    assert (project / "vendor" / "lib.py").read_text() == BUGGY and "vendor" not in blocked.stdout + blocked.stderr
    assert "SEM001" in blocked.stdout + blocked.stderr
    git(project, "add", "kernel.py")
    passed = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-m", "fixed kernel"],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
