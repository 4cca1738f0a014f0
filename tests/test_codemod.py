"""semfix run through `python -m libcst.tool codemod`: the same bytes as `semfix fix`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from semfix.rules import RULES

FIXTURES = Path(__file__).parent / "fixtures"
# Encodings and line endings, an import migration, and a report-only finding.
CASES = (
    "general/crlf",
    "general/latin1_cookie",
    "general/bom",
    "sem101/adds_pl_drops_pltpu",
    "sem003/carried_fixed",
    "sem004/non_scalar",
)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], check=False, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(root.glob("*.py"))}


def test_libcst_tool_writes_what_semfix_fix_writes(tmp_path: Path) -> None:
    for folder in ("via_codemod", "via_semfix"):
        (tmp_path / folder).mkdir()
        for case in CASES:
            shutil.copyfile(FIXTURES / case / "before.py", tmp_path / folder / f"{case.replace('/', '_')}.py")
    before = _tree(tmp_path / "via_codemod")
    # The configured way: `modules` names the package, the command is `<module>.<class>`.
    # `--no-format`: libcst would otherwise pipe the output through black.
    (tmp_path / ".libcst.codemod.yaml").write_text("modules: ['semfix']\n")
    # the JAX floor both read from the project, as ruff reads `requires-python`: the migration is made
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "k"\ndependencies = ["jax>=0.10.2"]\n')
    tool = ["libcst.tool", "codemod", "codemod.SemfixCommand", "-j", "1", "--no-format", "--hide-progress"]
    codemod = _run([*tool, "--select", "SEM", "via_codemod"], tmp_path)
    semfix = _run(["semfix", "fix", "--select", "SEM", "via_semfix"], tmp_path)
    assert codemod.returncode == 0, codemod.stderr
    assert semfix.returncode == 1  # SEM004 is left in place
    after = _tree(tmp_path / "via_codemod")
    assert after == _tree(tmp_path / "via_semfix")
    assert sum(after[name] != before[name] for name in after) == len(CASES) - 1
    assert "WARNING: 7:25: SEM004" in codemod.stdout + codemod.stderr
    assert "Skipped codemodding" in codemod.stdout + codemod.stderr  # nothing to fix: file untouched


def test_libcst_tool_runs_the_command_by_its_full_name(tmp_path: Path) -> None:
    example = next(e for e in RULES["SEM102"].invalid if e.fixed and e.target_jax is None)  # no floor: by position
    kernel = tmp_path / "kernel.py"
    kernel.write_text(example.source)
    tool = ["libcst.tool", "codemod", "-x", "semfix.codemod.SemfixCommand", "-j", "1", "--no-format", "--hide-progress"]
    default = _run([*tool, "kernel.py"], tmp_path)
    assert default.returncode == 0 and kernel.read_text() == example.source  # SEM102 is off by default
    selected = _run([*tool, "--select", "SEM102", "kernel.py"], tmp_path)
    assert selected.returncode == 0 and kernel.read_text() == example.fixed
    typo = _run([*tool, "--select", "SEM9", "kernel.py"], tmp_path)
    assert typo.returncode == 2 and "unknown rule selector 'SEM9'" in typo.stderr


def test_a_file_with_problems_it_cannot_fix_is_not_said_to_have_nothing_to_fix(tmp_path: Path) -> None:
    """The skip reason counts as the CLI's summary counts: problems found, and what could fix them."""
    head = "from jax.experimental import pallas as pl\n\n\ndef kernel(sems, i):\n"
    (tmp_path / "report_only.py").write_text(
        head + "    pl.semaphore_signal(sems[0:2])\n    pl.semaphore_wait(sems[:])\n"
    )
    (tmp_path / "mixed.py").write_text(head + "    pl.semaphore_signal(sems[0:2])\n    pl.semaphore_wait(sems[i])\n")
    (tmp_path / "clean.py").write_text(head + "    pl.semaphore_wait(sems.at[i])\n")
    tool = ["libcst.tool", "codemod", "-x", "semfix.codemod.SemfixCommand", "-j", "1", "--no-format", "--hide-progress"]
    result = _run([*tool, "."], tmp_path)
    assert result.returncode == 0, result.stderr
    skipped = {
        Path(line.split(": ", 1)[0].rsplit(" ", 1)[1]).name: line.split(": ", 1)[1]
        for line in (result.stdout + result.stderr).splitlines()
        if line.startswith("Skipped codemodding ")
    }
    assert skipped == {
        "report_only.py": "2 problems found; none can be fixed automatically",
        "mixed.py": "2 problems found; 1 fixable with `--unsafe-fixes`; 1 cannot be fixed automatically",
        "clean.py": "no problems found",
    }
    assert "nothing to fix" not in result.stdout + result.stderr
