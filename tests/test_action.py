"""The GitHub Action (action.yml at the root): its structure, and its one script run for real
in a temporary repository, as the runner would run it, with the semfix under test.

The script's install step is skipped (`SEMFIX_INSTALL=skip`): no network here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytestmark = pytest.mark.skipif(not (shutil.which("git") and shutil.which("bash")), reason="needs git and bash")
CHECKOUT = Path(__file__).resolve().parents[1]
SCRIPT = CHECKOUT / "action" / "run.sh"
MAIN = "from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pl.semaphore_wait(sem)\n"
BRANCH = MAIN + "    pl.semaphore_signal(sem[...])\n    pl.semaphore_signal(sems.at[0:2])\n"


def git(cwd: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    return subprocess.run(command, cwd=cwd, check=True, capture_output=True, text=True).stdout


def test_action_yml_is_a_composite_action_whose_step_runs_the_script() -> None:
    action = yaml.safe_load((CHECKOUT / "action.yml").read_text())
    assert action["name"] and action["description"] and action["runs"]["using"] == "composite"
    inputs = action["inputs"]
    assert {"version", "paths", "base", "args", "reviewdog-reporter"} <= set(inputs)
    assert all(spec.get("description") and "default" in spec for spec in inputs.values())
    steps = action["runs"]["steps"]
    runs = [step for step in steps if "run" in step]
    assert len(runs) == 1 and runs[0]["shell"] == "bash"
    assert runs[0]["run"].strip() == '"$GITHUB_ACTION_PATH/action/run.sh"'  # the script this file tests
    assert SCRIPT.is_file() and os.access(SCRIPT, os.X_OK)
    text = json.dumps(steps)
    used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", text))
    assert used == set(inputs), used ^ set(inputs)  # each input passed on, none undeclared
    assert "${{ inputs." not in runs[0]["run"]  # inputs reach the script as environment, never as code
    reviewdog = [step for step in steps if "reviewdog" in step.get("uses", "")]
    assert len(reviewdog) == 1 and "reviewdog-reporter" in reviewdog[0]["if"]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A pull request's checkout: main, and a branch that adds a bug and a finding without a fix."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "pkg").mkdir()
    (repo / "pkg" / "kernels.py").write_text(MAIN)
    (repo / "pkg" / "old.py").write_text(MAIN.replace("wait(sem)", "wait(sem[...])"))  # not this branch's
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "main")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "pkg" / "kernels.py").write_text(BRANCH)
    git(repo, "commit", "-qam", "feature")
    return repo


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """`semfix` on PATH is this checkout's, as the action's install step would leave it."""
    folder = tmp_path / "bin"
    folder.mkdir()
    shim = folder / "semfix"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m semfix "$@"\n')
    shim.chmod(0o755)
    return folder


def action(repo: Path, bin_dir: Path, **inputs: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "SEMFIX_", "CI_"))},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")])),
        "GITHUB_ACTION_PATH": str(CHECKOUT),
        "SEMFIX_INSTALL": "skip",
        **inputs,
    }
    return subprocess.run(["bash", str(SCRIPT)], cwd=repo, env=env, capture_output=True, text=True, check=False)


def test_the_script_annotates_the_pull_requests_changed_lines(repository: Path, bin_dir: Path) -> None:
    result = action(repository, bin_dir, GITHUB_BASE_REF="main", SEMFIX_PATHS="pkg")
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(",")[:2] for line in lines] == [["::error file=pkg/kernels.py", f"line={n}"] for n in (6, 7)]
    assert "compared with" in result.stderr
    only = action(repository, bin_dir, GITHUB_BASE_REF="main", SEMFIX_ARGS="--select SEM004 --quiet")
    assert only.returncode == 1 and only.stdout.count("::error") == 1 and "SEM004" in only.stdout and not only.stderr
    assert action(repository, bin_dir, GITHUB_BASE_REF="main", SEMFIX_BASE="HEAD").returncode == 0


def test_the_script_fails_when_it_cannot_find_the_base(repository: Path, bin_dir: Path, tmp_path: Path) -> None:
    missing = action(repository, bin_dir, GITHUB_BASE_REF="release-9")
    assert missing.returncode == 2 and "fetch-depth: 0" in missing.stderr
    assert missing.stdout.startswith("::error title=semfix review::GITHUB_BASE_REF names the branch 'release-9'")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "feature", f"file://{repository}", str(clone))
    shallow = action(clone, bin_dir, GITHUB_BASE_REF="main")
    assert shallow.returncode == 2 and "fetch-depth: 0" in shallow.stderr


def test_the_script_hands_rdjson_to_reviewdog(repository: Path, bin_dir: Path, tmp_path: Path) -> None:
    received = tmp_path / "reviewdog"
    fake = bin_dir / "reviewdog"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{received}.args"\ncat > "{received}.json"\n')
    fake.chmod(0o755)
    (repository / "pkg" / "broken.py").write_text(MAIN + "    pl.semaphore_wait(\n")
    git(repository, "add", ".")
    result = action(repository, bin_dir, GITHUB_BASE_REF="main", SEMFIX_REVIEWDOG_REPORTER="github-pr-review")
    assert result.returncode == 2, result.stderr  # semfix's own status: a file it could not process
    args = Path(f"{received}.args").read_text().split()
    assert "-f=rdjson" in args and "-reporter=github-pr-review" in args
    diagnostics = json.loads(Path(f"{received}.json").read_text())["diagnostics"]
    assert [(d["location"]["path"], d.get("code", {}).get("value")) for d in diagnostics] == [
        ("pkg/kernels.py", "SEM001"),
        ("pkg/kernels.py", "SEM004"),
        ("pkg/broken.py", None),
    ]


def test_the_readme_shows_every_input_and_full_history() -> None:
    readme = (CHECKOUT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### GitHub Actions") :]
    section = section[: section.index("\n### ", 1)]
    inputs = set(yaml.safe_load((CHECKOUT / "action.yml").read_text())["inputs"]) - {"github-token"}
    assert "uses: <owner>/semfix@" in section and "fetch-depth: 0" in section
    assert all(f"# {name}:" in section or f" {name}:" in section for name in inputs), inputs


def test_the_script_installs_the_version_asked_for(repository: Path, bin_dir: Path, tmp_path: Path) -> None:
    """The install step, with a stand-in `python3` that records what pip was asked for."""
    log = tmp_path / "pip.log"
    fake = bin_dir / "python3"
    fake.write_text(
        "#!/bin/sh\n"  # `python3 -m venv DIR` makes DIR/bin/python, which logs its pip arguments
        'mkdir -p "$3/bin"\n'
        f'printf \'#!/bin/sh\\necho "$*" >> "{log}"\\n\' > "$3/bin/python"\n'
        'chmod +x "$3/bin/python"\n'
    )
    fake.chmod(0o755)
    for version, spec in (("", str(CHECKOUT)), ("latest", "semfix"), ("0.1.0", "semfix==0.1.0")):
        inputs = {"SEMFIX_INSTALL": "", "SEMFIX_VERSION": version, "RUNNER_TEMP": str(tmp_path)}
        result = action(repository, bin_dir, GITHUB_BASE_REF="main", **inputs)
        assert result.returncode == 1, result.stderr  # installed, then the review found the branch's bugs
        assert log.read_text().splitlines()[-1].endswith(f"pip install --quiet --disable-pip-version-check {spec}")
    assert (tmp_path / "semfix-venv" / "bin" / "python").exists()


def test_on_a_push_the_script_reviews_what_the_push_brought(repository: Path, bin_dir: Path, tmp_path: Path) -> None:
    """On main after a push, main's merge base with HEAD is HEAD: the event's `before` is the base."""
    git(repository, "checkout", "-q", "main")
    before = git(repository, "rev-parse", "HEAD").strip()
    git(repository, "merge", "-q", "--ff-only", "feature")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"before": before, "after": git(repository, "rev-parse", "HEAD").strip()}))
    pushed = action(repository, bin_dir, GITHUB_EVENT_NAME="push", GITHUB_EVENT_PATH=str(event))
    assert pushed.returncode == 1, pushed.stderr
    assert "::error file=pkg/kernels.py,line=6" in pushed.stdout
    alone = subprocess.run(
        [sys.executable, "-m", "semfix", "review"], cwd=repository, capture_output=True, text=True, check=False
    )
    assert alone.returncode == 0 and "which is HEAD itself: only uncommitted changes are reviewed" in alone.stderr


def test_the_script_reviews_a_checkout_in_a_working_directory(repository: Path, bin_dir: Path) -> None:
    """actions/checkout with `path: repo` leaves the workspace above the checkout."""
    result = action(repository.parent, bin_dir, GITHUB_BASE_REF="main", SEMFIX_WORKING_DIRECTORY="repo")
    assert result.returncode == 1, result.stderr
    assert "::error file=pkg/kernels.py,line=6" in result.stdout
