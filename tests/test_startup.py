"""Start-up loads what a command needs, and nothing else (issue 32; benchmarks/startup.py
times it). Structural, not timed: each case runs in a fresh interpreter and reads `sys.modules`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from semfix.rules import GATES

ROOT = Path(__file__).parent.parent
KERNEL = (
    "from jax.experimental import pallas as pl\n\n\n"
    "def kernel(sem):\n    pl.semaphore_wait(sem[...], 1)\n"  # one finding: the engine runs
)
#: What no check of Python files needs: the editor's and explain's rooms, libcst (fixes that
#: drop an import alone use it), the off-by-default migrations' logic (the import edits, the
#: references SEM101 renames), the machine formats, a process pool for one file, a writer.
MIGRATIONS = ("semfix.analysis.importer", "semfix.analysis.import_", "semfix.rules.sem101_references")
NOT_FOR_A_CHECK = (
    "libcst",
    *MIGRATIONS,
    "pygls",
    "lsprotocol",
    "semfix.server",
    "semfix.explain",
    "semfix.notebook",
    "semfix.cli.formats",
    "semfix.engine.proof",
    "semfix.engine.incremental",  # the server's
    "multiprocessing",
    "concurrent.futures",
    "tempfile",
    "json",
)

RULE_MODULES = tuple(f"semfix.rules.{gate.module}" for gate in GATES.values())

_RUN = """
import sys
from semfix.cli.main import main
try:
    main(sys.argv[2:], prog_name="semfix")
except SystemExit:
    pass
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(sys.modules))
"""


def loaded(tmp_path: Path, *arguments: str, code: str = _RUN) -> set[str]:
    """The modules loaded by `semfix ARGUMENTS` (or by `code`), run in tmp_path."""
    listing = tmp_path / "modules.txt"
    subprocess.run(
        [sys.executable, "-c", code, str(listing), *arguments],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
        capture_output=True,
        check=True,
    )
    return set(listing.read_text().split("\n"))


def among(modules: set[str], names: tuple[str, ...]) -> list[str]:
    """The modules named, or in a package named; a name ending in `_` is a prefix of modules."""
    return sorted(
        m
        for m in modules
        if any(m == n or m.startswith(n + ".") or (n.endswith("_") and m.startswith(n)) for n in names)
    )


def test_a_one_file_check_loads_the_engine_and_nothing_it_does_not_use(tmp_path: Path) -> None:
    (tmp_path / "kernel.py").write_text(KERNEL)
    modules = loaded(tmp_path, "check", "kernel.py")
    assert "semfix.engine.run" in modules and "semfix.cli.fix_check" in modules
    assert among(modules, NOT_FOR_A_CHECK) == []
    assert among(modules, ("semfix.cli.review", "semfix.cli.rules_command", "semfix.cli.server_command")) == []


def test_a_check_of_files_without_pallas_code_loads_no_rule_nor_the_analysis(tmp_path: Path) -> None:
    """Most files of a repository, and of a pre-commit batch, hold no Pallas code: the byte scan
    clears them with the rule table alone (semfix/rules/table.py), every rule on too. The skim,
    the rules' modules and the analysis under them, half of a one-file check's modules, load
    for a file the scan keeps (issue 47)."""
    (tmp_path / "plain.py").write_text("import os\n\nprint(os.getcwd())\n")
    (tmp_path / "tool.py").write_text("from plain import os\n\n\ndef wait(sem):\n    return sem[...]\n")
    for command in (["check", "."], ["check", "--select", "ALL", "plain.py"], ["fix", "."]):
        modules = loaded(tmp_path, *command)
        assert "semfix.rules.table" in modules and "semfix.engine.fix" in modules
        assert among(modules, ("semfix.analysis", "semfix.engine", "semfix.rules.dispatch", *RULE_MODULES)) == [
            "semfix.engine",
            "semfix.engine.fix",
        ]
    (tmp_path / "kernel.py").write_text(KERNEL)
    assert among(loaded(tmp_path, "check", "."), RULE_MODULES) == sorted(RULE_MODULES)


def test_a_format_and_a_fix_load_what_they_use(tmp_path: Path) -> None:
    """The other side of the one-file check: what it leaves out is loaded where it is needed."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    assert among(loaded(tmp_path, "check", "--output-format", "sarif", "kernel.py"), ("semfix.cli.formats", "json"))
    fixed = loaded(tmp_path, "fix", "kernel.py")
    assert "semfix.engine.proof" in fixed and "tempfile" in fixed
    assert (tmp_path / "kernel.py").read_text() == KERNEL.replace("sem[...]", "sem")
    (tmp_path / "old.py").write_text("from jax.experimental.pallas import tpu as pltpu\n\npltpu.semaphore_wait(s, 1)\n")
    migrated = loaded(tmp_path, "check", "--extend-select", "SEM101", "old.py")  # a migration's logic, where enabled
    assert among(migrated, MIGRATIONS) == sorted(
        [
            "semfix.analysis.importer",
            "semfix.rules.sem101_references",
            *(f"semfix.analysis.import_{part}" for part in ("changes", "placement", "pruning")),
        ]
    )


@pytest.mark.parametrize("command", [["--version"], ["rules"], ["rules", "SEM001"], ["server", "--help"]])
def test_the_group_and_the_rule_table_do_not_load_the_engine(tmp_path: Path, command: list[str]) -> None:
    """(`semfix --help` loads every command, for the line of help each gives.)"""
    modules = loaded(tmp_path, *command)
    assert among(modules, ("semfix.engine", "semfix.api", "semfix.cli.fix_check", *NOT_FOR_A_CHECK)) == []


def test_importing_a_module_of_the_package_does_not_load_the_engine(tmp_path: Path) -> None:
    """`semfix/__init__.py` loads its public names on first use (PEP 562)."""
    code = "import sys, semfix.catalog, semfix.settings\nopen(sys.argv[1], 'w').write('\\n'.join(sys.modules))"
    modules = loaded(tmp_path, code=code)
    assert among(modules, ("semfix.api", "semfix.engine", "semfix.analysis", "semfix.rules", "click")) == []
    code = "import sys\nfrom semfix import fix_source\nopen(sys.argv[1], 'w').write('\\n'.join(sys.modules))"
    assert "semfix.engine.fix" in (modules := loaded(tmp_path, code=code)) and "semfix.engine.run" not in modules
    code = code.replace("\nopen", f"\nfix_source({KERNEL!r})\nopen")  # the first source it must parse
    assert "semfix.engine.run" in loaded(tmp_path, code=code)


_DATACLASSES = """
import dataclasses, sys
import semfix.cli.main, semfix.cli.fix_check
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(
        f"{name}.{key}" for name, module in list(sys.modules.items()) if name.startswith("semfix")
        for key, value in vars(module).items() if isinstance(value, type) and value.__module__ == name
        and dataclasses.is_dataclass(value)
    ))
"""


def test_loading_a_check_makes_few_dataclasses(tmp_path: Path) -> None:
    """Making a dataclass compiles three to six methods from source, 2 to 4 million instructions
    each on CPython 3.11: with 36 of them, they were a third of what a one-file check's start-up
    costs above click's (issue 47). A record that is only data is a NamedTuple (one method), any
    other internal class a plain one with `__slots__` (nothing compiled); the dataclasses left
    are public (`Settings`, `FixResult`, `Finding`, `Fix`): users may `replace` or `asdict` them."""
    assert len(loaded(tmp_path, code=_DATACLASSES)) <= 4


_COMPILES = """
import re, sys
compiles = []
original = re._compile


def _compile(pattern, flags):
    caller = sys._getframe(1)
    while caller.f_code.co_filename.startswith(re.__path__[0]):
        caller = caller.f_back
    compiles.append(caller.f_code.co_filename)
    return original(pattern, flags)


re._compile = _compile
import semfix.cli.main, semfix.cli.fix_check
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(file for file in compiles if "semfix" in file))
"""


def test_loading_a_check_compiles_no_regular_expression(tmp_path: Path) -> None:
    """Compiling every module-level pattern at import was about a fifth of the one-file check's
    start-up above click's (issue 47), though most serve only some files: each is compiled
    where first used (`semfix.patterns.compiled`)."""
    assert loaded(tmp_path, code=_COMPILES) == {""}


_COMPILED_BY_A_CHECK = """
import re, sys
from semfix.cli.main import main
compiled, original = [], re._compile
re._compile = lambda pattern, flags: compiled.append(pattern) or original(pattern, flags)
try:
    main(sys.argv[2:], prog_name="semfix")
except SystemExit:
    pass
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(map(repr, compiled)))
"""


def test_a_one_file_check_compiles_what_its_file_needs(tmp_path: Path) -> None:
    """No `getattr`, no `noqa`, no `semfix:` comment, no other module: the patterns for those
    are neither compiled nor searched (issue 47), though the check finds the kernel's bug."""
    (tmp_path / "kernel.py").write_text(KERNEL)
    patterns = loaded(tmp_path, "check", "kernel.py", code=_COMPILED_BY_A_CHECK)
    assert len(patterns) > 3  # the skim's, which gives up on the kernel's `copy_sem[...]`
    assert [p for p in patterns if any(word in p for word in ("getattr", "noqa", "semfix:", "import"))] == []
