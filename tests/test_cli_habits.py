"""ruff's habits (issue 37, items 4-9): where ruff has the same command, it runs beside semfix
on a file of the same shape, and the two answer alike (exit status, what is written, the
order and columns of what is printed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is a test dependency")

KERNEL = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sem, sems, i):\n"
    "    pl.semaphore_signal(sem[...], 2)\n"  # SEM001: a safe fix
    "    pl.semaphore_signal(sems[i], 1)\n"  # SEM002: an unsafe fix (nothing shows `sems` is a Ref)
)
#: The same shape for ruff: F401 has a safe fix, E711 an unsafe one.
LINTED = "import os\nx = 1\nif x == None:\n    pass\n"
RUFF_RULES = ("--select", "F401,E711")


def semfix(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", *args], cwd=cwd, capture_output=True, text=True, check=False, env=env
    )


def ruff(*args: str, cwd: Path, isolated: bool = True) -> subprocess.CompletedProcess[str]:
    """`ruff COMMAND --select F401,E711 ARGS`; not `isolated`, ruff reads its settings files, and
    they select the rules (a `--select` would override their `ignore`)."""
    assert RUFF is not None
    command = [RUFF, args[0], "--no-cache", *(["--isolated", *RUFF_RULES] if isolated else []), *args[1:]]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def both(tmp_path: Path) -> Path:
    """`ruff/x.py` and `semfix/k.py`: one fixable and one unsafe-fixable finding each."""
    (tmp_path / "ruff").mkdir()
    (tmp_path / "ruff" / "x.py").write_text(LINTED)
    (tmp_path / "semfix").mkdir()
    (tmp_path / "semfix" / "k.py").write_text(KERNEL)
    return tmp_path


# Item 4: `check --fix`, with `--unsafe-fixes` and `--diff`.


@needs_ruff
@pytest.mark.parametrize(
    ("options", "code", "written"),
    [
        (("--fix",), 1, True),  # the unsafe fix is left: exit 1
        (("--fix", "--unsafe-fixes"), 0, True),  # nothing left: exit 0
        (("--diff",), 1, False),  # a dry run fails on what it would fix
        (("--fix", "--diff"), 1, False),
    ],
)
def test_check_fix_works_as_in_ruff(both: Path, options: tuple[str, ...], code: int, written: bool) -> None:
    theirs = ruff("check", *options, "x.py", cwd=both / "ruff")
    ours = semfix("check", *options, "k.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (code, code), ours.stderr
    assert ((both / "ruff" / "x.py").read_text() != LINTED) == written
    assert ((both / "semfix" / "k.py").read_text() != KERNEL) == written
    if "--diff" in options:
        assert theirs.stdout.startswith("--- ") and ours.stdout.startswith("--- a/k.py\n+++ b/k.py\n@@ ")


# Item 5: noqa comments on a line, and for a file; `per-file-ignores`.

SILENCED = (
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sem):\n"
    "    pl.semaphore_signal(sem[...], 2)  # noqa: SEM001\n"
    "    pl.semaphore_signal(sem[...], 2)  # noqa\n"
    "    pl.semaphore_signal(sem[...], 2)  # NOQA:E501,SEM001 a reason\n"
    "    pl.semaphore_signal(sem[...], 2)  # noqa: E501\n"  # another rule's: still reported
    "    pl.semaphore_signal(sem[...], 2)  # noqa:\n"  # no code: silences nothing
    '    x = "# noqa"; pl.semaphore_signal(sem[...], 2)\n'  # not a comment
)
RUFF_SILENCED = (
    "import os  # noqa: F401\n"
    "import re  # noqa\n"
    "import io  # NOQA:E501,F401 a reason\n"
    "import sys  # noqa: E501\n"
    "import json  # noqa:\n"
    'x = "# noqa"; import abc\n'
)


@needs_ruff
def test_noqa_comments_silence_their_line_as_in_ruff(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text(RUFF_SILENCED)
    (tmp_path / "k.py").write_text(SILENCED)
    theirs = ruff("check", "--output-format", "concise", "x.py", cwd=tmp_path)
    ours = semfix("check", "k.py", cwd=tmp_path)
    assert (theirs.returncode, ours.returncode) == (1, 1), ours.stderr
    their_lines = [int(line.split(":")[1]) for line in theirs.stdout.splitlines() if line.startswith("x.py:")]
    assert their_lines == [4, 5, 6]  # the last three
    assert [int(line.split(":")[1]) - 4 for line in ours.stdout.splitlines()] == their_lines  # def kernel: line 4


@needs_ruff
@pytest.mark.parametrize(
    ("ruff_comment", "comment", "code"),
    [
        ("# ruff: noqa", "# ruff: noqa", 0),
        ("# ruff: noqa: F401", "# ruff: noqa: SEM001", 0),
        ("# ruff: noqa: E501", "# ruff: noqa: SEM002", 1),
        ("# ruff: noqa", "# semfix: noqa", 0),
        ("# ruff: noqa: F401", "# semfix: noqa: SEM001", 0),
    ],
)
def test_a_file_level_exemption_as_in_ruff(tmp_path: Path, ruff_comment: str, comment: str, code: int) -> None:
    (tmp_path / "x.py").write_text(f"{ruff_comment}\nimport os\n")
    (tmp_path / "k.py").write_text(KERNEL.replace("sems[i]", "sems.at[i]") + f"{comment}\n")
    theirs = ruff("check", "x.py", cwd=tmp_path)
    ours = semfix("check", "k.py", cwd=tmp_path)
    assert (theirs.returncode, ours.returncode) == (code, code), ours.stdout


@needs_ruff
@pytest.mark.parametrize("key", ["per-file-ignores", "extend-per-file-ignores"])
def test_per_file_ignores_as_in_ruff(tmp_path: Path, key: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.ruff.lint]\nselect = ["F401"]\n{key} = {{"tests/*" = ["F401"], "conftest.py" = ["F"]}}\n'
        f'[tool.semfix]\n{key} = {{"tests/*" = ["SEM001"], "conftest.py" = ["SEM"]}}\n'
    )
    for folder in ("tests/unit", "src", "src/deep"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "x.py").write_text("import os\n")
        (tmp_path / folder / "k.py").write_text(KERNEL.replace("sems[i]", "sems.at[i]"))
    (tmp_path / "src" / "deep" / "conftest.py").write_text("import os\n" + KERNEL)
    theirs = ruff("check", "--output-format", "concise", ".", cwd=tmp_path, isolated=False)
    ours = semfix("check", ".", cwd=tmp_path)
    assert (theirs.returncode, ours.returncode) == (1, 1), ours.stderr
    assert {line.split(":")[0] for line in theirs.stdout.splitlines() if ".py:" in line} == {
        str(Path("src/x.py")),
        str(Path("src/deep/x.py")),
    }
    assert {line.split(":")[0] for line in ours.stdout.splitlines()} == {
        str(Path("src/k.py")),
        str(Path("src/deep/k.py")),
    }


def test_per_file_ignores_must_name_rules(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.semfix]\nper-file-ignores = {"tests/*" = ["SEM9"]}\n')
    (tmp_path / "k.py").write_text(KERNEL)
    result = semfix("check", "k.py", cwd=tmp_path)
    assert result.returncode == 2
    assert "[tool.semfix] per-file-ignores.'tests/*': unknown rule selector 'SEM9'" in result.stderr


# Item 6: semfix.toml, as ruff.toml; a --config file with nothing for semfix is an error.


@needs_ruff
def test_own_settings_files_are_found_and_preferred_as_ruffs(tmp_path: Path) -> None:
    """In one folder ruff prefers .ruff.toml to ruff.toml to pyproject.toml; semfix the same."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.py").write_text(LINTED)
    (tmp_path / "sub" / "k.py").write_text(KERNEL)
    files = {
        "pyproject.toml": ('[tool.ruff.lint]\nselect = ["F401"]\n', '[tool.semfix]\nignore = ["SEM0"]\n'),
        "{}.toml": ('[lint]\nselect = ["E711"]\n', 'ignore = ["SEM001"]\n'),
        ".{}.toml": ('[lint]\nselect = ["F401"]\n', 'ignore = ["SEM002"]\n'),
    }
    expected = {
        "pyproject.toml": ({"F401"}, set()),
        "{}.toml": ({"E711"}, {"SEM002"}),
        ".{}.toml": ({"F401"}, {"SEM001"}),
    }
    for name, (theirs_text, ours_text) in files.items():  # each one more preferred than the last
        if name == "pyproject.toml":  # one file for both
            (tmp_path / name).write_text(theirs_text + ours_text)
        else:
            (tmp_path / name.format("ruff")).write_text(theirs_text)
            (tmp_path / name.format("semfix")).write_text(ours_text)
        theirs = ruff("check", "--output-format", "concise", "sub/x.py", cwd=tmp_path, isolated=False)
        ours = semfix("check", "sub/k.py", cwd=tmp_path)
        their_codes = {line.split()[1] for line in theirs.stdout.splitlines() if ".py:" in line}
        assert (their_codes, {line.split()[1] for line in ours.stdout.splitlines()}) == expected[name], ours.stderr
        assert (theirs.returncode, ours.returncode) == (1, 1 if expected[name][1] else 0)


@needs_ruff
def test_config_reads_a_file_with_top_level_keys_as_ruff_does(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("import os\n")
    (tmp_path / "k.py").write_text(KERNEL)
    (tmp_path / "lint.toml").write_text('[lint]\nselect = ["F"]\nignore = ["F401"]\n')
    (tmp_path / "settings.toml").write_text('ignore = ["SEM0"]\n')
    theirs = ruff("check", "--config", "lint.toml", "x.py", cwd=tmp_path, isolated=False)
    ours = semfix("check", "--config", "settings.toml", "k.py", cwd=tmp_path)
    assert (theirs.returncode, ours.returncode) == (0, 0), ours.stderr


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("ruff.toml", '[lint]\nignore = ["SEM002"]\n', "ruff.toml: has unknown key(s): lint (semfix reads its keys"),
        ("pyproject.toml", '[tool.semfx]\nignore = ["SEM002"]\n', "pyproject.toml: no [tool.semfix] table"),
        ("config.toml", '[tool.ruff]\nignore = ["SEM002"]\n', "config.toml: no [tool.semfix] table"),
        ("empty.toml", "", "empty.toml: no semfix settings"),
    ],
)
def test_a_config_file_with_nothing_for_semfix_is_an_error(tmp_path: Path, name: str, text: str, error: str) -> None:
    (tmp_path / name).write_text(text)
    (tmp_path / "k.py").write_text(KERNEL)
    result = semfix("check", "--config", name, "k.py", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith(f"error: {error}"), result.stderr


# Item 7: `--statistics`.

PARTLY = (  # SEM002 twice: one shown to be a Ref (a safe fix), one not (an unsafe one)
    "from jax.experimental import pallas as pl\n"
    "\n"
    "\n"
    "def kernel(sems, other, i):\n"
    "    pl.semaphore_signal(sems.at[0], 1)\n"
    "    pl.semaphore_signal(sems[i], 1)\n"
    "    pl.semaphore_signal(other[i], 1)\n"
)
RUFF_PARTLY = "def f():\n    x = 1\n    try:\n        pass\n    except Exception as e:\n        pass\n"  # F841 twice


def _rows(stdout: str) -> list[list[str]]:
    """`COUNT CODE [mark] name` rows, split at their tabs, without the counts' and codes' padding."""
    return [[cell.strip() for cell in line.split("\t")] for line in stdout.splitlines() if "\t" in line]


@needs_ruff
def test_statistics_mark_rules_all_some_or_none_fixable_as_ruff(both: Path) -> None:
    theirs = ruff("check", "--statistics", "x.py", cwd=both / "ruff")
    ours = semfix("check", "--statistics", "k.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (1, 1)
    assert _rows(theirs.stdout) == [["1", "E711", "[ ] none-comparison"], ["1", "F401", "[*] unused-import"]]
    assert _rows(ours.stdout) == [
        ["1", "SEM001", "[*] value-read-passed-as-semaphore"],
        ["1", "SEM002", "[ ] element-read-passed-as-semaphore"],
    ]
    (both / "ruff" / "x.py").write_text(RUFF_PARTLY)
    (both / "semfix" / "k.py").write_text(PARTLY)
    theirs = ruff("check", "--select", "F841", "--statistics", "x.py", cwd=both / "ruff")
    ours = semfix("check", "--statistics", "k.py", cwd=both / "semfix")
    assert _rows(theirs.stdout) == [["2", "F841", "[-] unused-variable"]]
    assert _rows(ours.stdout) == [["2", "SEM002", "[-] element-read-passed-as-semaphore"]]


@needs_ruff
@pytest.mark.parametrize("command", [("check", "--fix"), ("fix",)])
def test_statistics_after_a_fix_count_what_is_left_as_ruff(both: Path, command: tuple[str, ...]) -> None:
    theirs = ruff("check", "--fix", "--statistics", "x.py", cwd=both / "ruff")
    ours = semfix(*command, "--statistics", "k.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (1, 1)
    assert _rows(theirs.stdout) == [["1", "E711", "none-comparison"]]  # nothing left is fixable: no column
    assert _rows(ours.stdout) == [["1", "SEM002", "element-read-passed-as-semaphore"]]


@needs_ruff
def test_statistics_with_a_diff_is_refused_as_in_ruff(both: Path) -> None:
    theirs = ruff("check", "--diff", "--statistics", "x.py", cwd=both / "ruff")
    ours = [semfix(*c, "--diff", "--statistics", "k.py", cwd=both / "semfix") for c in (("fix",), ("check",))]
    assert [theirs.returncode] + [r.returncode for r in ours] == [2, 2, 2]
    assert all("--statistics cannot be used with --diff" in r.stderr and r.stdout == "" for r in ours)
    assert (both / "semfix" / "k.py").read_text() == KERNEL


@needs_ruff
def test_statistics_as_json_as_ruff(both: Path) -> None:
    import json

    theirs = json.loads(ruff("check", "--statistics", "--output-format", "json", "x.py", cwd=both / "ruff").stdout)
    ours = json.loads(semfix("check", "--statistics", "--output-format", "json", "k.py", cwd=both / "semfix").stdout)
    assert [set(row) for row in ours] == [set(row) for row in theirs]
    assert [(row["code"], row["count"], row["fixable"], row["fixable_count"]) for row in ours] == [
        ("SEM001", 1, True, 1),
        ("SEM002", 1, False, 0),
    ]


# Item 8: findings in position order; `rule CODE`; `-o`; `--output-format concise|full`.

MIGRATION = Path(__file__).parent / "fixtures" / "sem103" / "layouts_and_sem101_together" / "before.py"


def _places(stdout: str) -> list[tuple[str, int, int]]:
    """(path, line, column) of each concise finding line."""
    found = []
    for line in stdout.splitlines():
        path, row, column, *_ = [*line.split(":"), "", ""]
        if row.isdigit():
            found.append((path, int(row), int(column)))
    return found


@needs_ruff
def test_findings_come_by_path_line_and_column_as_in_ruff(both: Path) -> None:
    (both / "ruff" / "a.py").write_text(LINTED)
    (both / "semfix" / "a.py").write_bytes(MIGRATION.read_bytes())  # SEM101 at 10:5 after SEM103 at 10:47
    theirs = ruff("check", "--output-format", "concise", "x.py", "a.py", cwd=both / "ruff")
    ours = semfix("check", "--select", "SEM1", "--target-jax", "0.10.2", "k.py", "a.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (1, 1)
    for places in (_places(theirs.stdout), _places(ours.stdout)):
        assert [p[0] for p in places][0] == "a.py" and places == sorted(places)
    assert ("a.py", 10, 5) in _places(ours.stdout)


@needs_ruff
@pytest.mark.parametrize(("theirs", "ours", "code"), [("F401", "sem001", 0), ("XX9", "SEM9", 2), ("--all", "--all", 0)])
def test_rule_prints_one_rules_docs_as_ruff(tmp_path: Path, theirs: str, ours: str, code: int) -> None:
    assert RUFF is not None
    their = subprocess.run([RUFF, "rule", theirs], capture_output=True, text=True, check=False)
    our = semfix("rule", ours, cwd=tmp_path)
    assert (their.returncode, our.returncode) == (code, code), our.stderr
    if ours == "sem001":
        assert our.stdout.startswith("SEM001  value-read-passed-as-semaphore\n")
        assert our.stdout == semfix("rules", "SEM001", cwd=tmp_path).stdout
    no_code = subprocess.run([RUFF, "rule"], capture_output=True, text=True, check=False)
    assert (no_code.returncode, semfix("rule", cwd=tmp_path).returncode) == (2, 2)


@needs_ruff
def test_output_file_takes_the_findings_as_ruff(both: Path) -> None:
    theirs = ruff("check", "--output-format", "concise", "-o", "out/x.txt", "x.py", cwd=both / "ruff")
    ours = semfix("check", "-o", "out/k.txt", "k.py", cwd=both / "semfix")
    assert (theirs.returncode, ours.returncode) == (1, 1)
    assert theirs.stdout == ours.stdout == ""
    assert _places((both / "ruff" / "out" / "x.txt").read_text()) == [("x.py", 1, 8), ("x.py", 3, 9)]
    assert _places((both / "semfix" / "out" / "k.txt").read_text()) == [("k.py", 5, 25), ("k.py", 6, 25)]
    assert "2 problems found" in ours.stderr  # the summary stays on stderr


@needs_ruff
def test_output_formats_concise_and_full_as_ruff(both: Path) -> None:
    concise = (
        ruff("check", "--output-format", "concise", "x.py", cwd=both / "ruff"),
        semfix("check", "--output-format", "concise", "k.py", cwd=both / "semfix"),
    )
    assert _places(concise[0].stdout) == [("x.py", 1, 8), ("x.py", 3, 9)]
    assert _places(concise[1].stdout) == [("k.py", 5, 25), ("k.py", 6, 25)]
    theirs = ruff("check", "--output-format", "full", "x.py", cwd=both / "ruff").stdout
    ours = semfix("check", "--output-format", "full", "k.py", cwd=both / "semfix").stdout
    assert ours.startswith("SEM001 [*] ") and theirs.startswith("F401 [*] ")
    assert [line for line in ours.splitlines() if line.startswith(" --> ")] == [" --> k.py:5:25", " --> k.py:6:25"]
    assert [line for line in theirs.splitlines() if line.startswith(" --> ")] == [" --> x.py:1:8", " --> x.py:3:9"]
    assert "5 |     pl.semaphore_signal(sem[...], 2)\n  |                         ^^^^^^^^\n" in ours
    assert "1 | import os\n  |        ^^\n" in theirs
    assert "+    pl.semaphore_signal(sem, 2)\n" in ours  # the suggested fix


# Item 9: nothing drawn under --silent, -q or a machine format; NO_COLOR everywhere.

ESCAPE = b"\x1b["


def _on_a_terminal(
    command: list[str], cwd: Path, *, stream: str, env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Run `command` with `stream` ("stdout" or "stderr") on a pseudo-terminal and the other on a
    pipe: (exit status, what the terminal got, what the pipe got)."""
    import pty
    import tempfile

    leader, follower = pty.openpty()
    with tempfile.TemporaryFile() as other:  # a file, not a pipe: a full pipe would block the command
        streams = {"stdout": other, "stderr": other, stream: follower}
        with subprocess.Popen(command, cwd=cwd, env=env, **streams) as process:  # type: ignore[call-overload]
            os.close(follower)
            seen = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the command has exited
                    break
                if not chunk:
                    break
                seen += chunk
            code = process.wait(timeout=120)
        other.seek(0)
        rest = other.read()
    os.close(leader)
    return code, seen, rest


@pytest.mark.skipif(os.name == "nt", reason="a pseudo-terminal is POSIX")
def test_nothing_is_drawn_under_silent_quiet_or_a_machine_format(tmp_path: Path) -> None:
    for i in range(210):  # past the threshold where a bar is drawn
        (tmp_path / f"k{i}.py").write_text(KERNEL)
    command = [sys.executable, "-m", "semfix", "check", "-j", "1", "."]
    for options in (["--silent"], ["-q"], ["-q", "--output-format", "json"], ["--output-format", "sarif"]):
        code, drawn, stdout = _on_a_terminal([*command, *options], tmp_path, stream="stderr")
        assert code == 1 and ESCAPE not in drawn and b"semfix [" not in drawn, (options, drawn[:200])
        if "--output-format" in options:
            assert stdout.lstrip().startswith(b"{") or stdout.lstrip().startswith(b"[")
    code, drawn, _ = _on_a_terminal(command, tmp_path, stream="stderr")  # for people: the bar
    assert code == 1 and b"semfix [" in drawn


@needs_ruff
@pytest.mark.skipif(os.name == "nt", reason="a pseudo-terminal is POSIX")
def test_no_color_is_honoured_as_by_ruff(both: Path) -> None:
    assert RUFF is not None
    theirs = [RUFF, "check", "--no-cache", "--isolated", *RUFF_RULES, "--output-format", "full", "x.py"]
    ours = [sys.executable, "-m", "semfix", "check", "--output-format", "full", "k.py"]
    for no_color, coloured in (("1", False), ("", True)):
        env = {**os.environ, "NO_COLOR": no_color}
        their_out = _on_a_terminal(theirs, both / "ruff", stream="stdout", env=env)[1]
        our_out = _on_a_terminal(ours, both / "semfix", stream="stdout", env=env)[1]
        assert (ESCAPE in their_out, ESCAPE in our_out) == (coloured, coloured), our_out


@pytest.mark.skipif(shutil.which("git") is None or os.name == "nt", reason="git and a pseudo-terminal")
def test_review_diffs_honour_no_color(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=tmp_path, check=True)

    git("init", "-q", "-b", "main")
    (tmp_path / "k.py").write_text(KERNEL.replace("sem[...]", "sem").replace("sems[i]", "sems.at[i]"))
    git("add", ".")
    git("commit", "-qm", "main")
    git("checkout", "-q", "-b", "feature")
    (tmp_path / "k.py").write_text(KERNEL)
    command = [sys.executable, "-m", "semfix", "review", "--base", "main"]
    for no_color, coloured in (("1", False), ("", True)):
        code, out, _ = _on_a_terminal(command, tmp_path, stream="stdout", env={**os.environ, "NO_COLOR": no_color})
        assert code == 1 and b"+    pl.semaphore_signal(sem, 2)" in out.replace(b"\x1b[32m", b"")
        assert (ESCAPE in out) == coloured
