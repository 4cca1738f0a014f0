"""The cheap paths the engine takes before the costly ones give the costly ones' answers.

Access tracking (`Tracking`) makes a file's analysis run again; a file should pay for it only
when its answer could differ. These tests hold the shortcuts to that: the fixture outputs are
the same either way (tests/fixtures), and here the shortcut is shown to be taken."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from semfix import fix_source
from semfix.analysis.evidence import NeedsAccesses
from semfix.analysis.nodes import Text
from semfix.analysis.scopes import ScopeBuilder, Tracking
from semfix.engine.run import _run, run_rules
from semfix.rewrite.text import line_starts
from semfix.selection import build_settings

FIXTURES = Path(__file__).parent / "fixtures"
EVERY_RULE = build_settings(select=["SEM"], target_jax="0.10.2")


def _needs_tracking(source: str) -> bool:
    try:
        _run(Text(source), ast.parse(source), ScopeBuilder(), EVERY_RULE)
    except NeedsAccesses:
        return True
    return False


def test_a_list_name_spelled_in_other_functions_needs_no_tracking() -> None:
    """`shapes` bound in `run` is spelled in `other` too: the text alone cannot say it is used
    only once, but `run`'s own names can."""
    source = (FIXTURES / "sem002" / "scratch_list_common_name" / "before.py").read_text()
    head = source[: source.index("def grown_kernel")]  # without the nested function that changes it
    assert not _needs_tracking(head)


@pytest.mark.parametrize("case", ["scratch_list_common_name", "scratch_list_changed"])
def test_a_list_changed_by_other_code_is_still_asked_of_tracking(case: str) -> None:
    """A nested function or the module using the name: only tracking can say whether it is the
    same list, so the shortcut must not answer."""
    assert _needs_tracking((FIXTURES / "sem002" / case / "before.py").read_text())


@pytest.mark.parametrize("text", ["", "a", "a\n", "\n\n", "ab\ncd\n\nx", "a\r\nb\rc\n", "é\nü\n", "x\r", "\r\n\r\n"])
def test_line_starts_split_lines_where_the_tokenizer_does(text: str) -> None:
    """Without a carriage return the starts are summed from `split`, not found by a pattern:
    they must be where Python's tokenizer starts each line (after `\\n`, `\\r\\n` or `\\r`)."""
    expected = [0] + [i + 1 for i, c in enumerate(text) if c == "\n" or c == "\r" and text[i + 1 : i + 2] != "\n"]
    assert line_starts(text) == expected


_TPU = "from jax.experimental.pallas import tpu as pltpu\n"
_MIGRATED = {
    "attribute": _TPU + "pltpu.semaphore_wait(sem, 1)\n",
    "attribute after a comment and a line break": _TPU + "(pltpu.  # note\n    semaphore_wait)(sem, 1)\n",
    "getattr string": _TPU + "getattr(pltpu, 'semaphore_read')(sem)\n",
    "imported in parentheses": (
        "from jax.experimental.pallas.tpu import (\n    semaphore_signal,\n)\n\nsemaphore_signal(sem)\n"
    ),
    "imported after a backslash": "from jax.experimental.pallas.tpu \\\n    import HOST\n\nspace = HOST\n",
}


@pytest.mark.parametrize("source", _MIGRATED.values(), ids=_MIGRATED.keys())
def test_every_way_to_spell_a_moved_tpu_name_passes_the_migrations_gate(source: str) -> None:
    found = fix_source(source, settings=build_settings(select=["SEM101"], target_jax="0.10.2"), apply_fixes=False)
    assert [f.rule for f in found.findings] == ["SEM101"]


def test_a_variable_named_semaphore_does_not_open_the_migrations_gate() -> None:
    """The names JAX moved are common words: a file about TPUs with a variable `semaphore` or
    `self.HOST` spelled nowhere as the TPU module's is not parsed for the migration."""
    source = "import tpu_tools\nfrom jax.experimental import pallas as pl\n\nsemaphore = tpu_tools.make()\n"
    assert not fix_source(
        source, settings=build_settings(select=["SEM101"], target_jax="0.10.2"), apply_fixes=False
    ).parsed


@pytest.mark.parametrize("name", ["DeviceIdType.MESH", "HOST", "semaphore"])
def test_a_file_naming_no_catalog_function_is_still_migrated(name: str) -> None:
    """The byte scan looks for a catalog function's name; a module that only reads
    `pltpu.DeviceIdType` (or the memory space, or the dtype) must still reach the migration."""
    source = f"from jax.experimental.pallas import tpu as pltpu\n\nVALUE = pltpu.{name}\n"
    found = fix_source(source, settings=build_settings(select=["SEM101"], target_jax="0.10.2"))
    assert [f.rule for f in found.findings] == ["SEM101"]
    assert f"pl.{name}" in found.source and "pltpu" not in found.source


def test_the_command_line_migrates_such_a_file(tmp_path: Path) -> None:
    target = tmp_path / "mesh.py"
    target.write_text("from jax.experimental.pallas import tpu as pltpu\n\nMESH = pltpu.DeviceIdType.MESH\n")
    done = subprocess.run(
        [sys.executable, "-m", "semfix", "fix", "--select", "SEM101", "--target-jax", "0.6", str(target)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "pl.DeviceIdType.MESH" in target.read_text()


def test_one_walk_finds_every_name_each_def_holds() -> None:
    """`names_within` passes over what can hold no Name (constants, contexts, operators), and
    still finds, for each def of every fixture, the Names `ast.walk` of the def finds: in one
    walk of the module, or in walks of its defs innermost first, each passing over the defs
    walked before it."""
    from semfix.analysis.nodes import Within, names_within

    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]
        piecemeal: Within = {}
        for node in reversed(defs):  # breadth first: reversed, each def before the one it is in
            piecemeal.update(names_within(node, piecemeal))
        for within in (names_within(tree, {}), piecemeal):
            for node in defs:
                found, pending = [], [node]
                while pending:  # the def's own Names and those of the defs nested in it
                    own, nested = within[id(pending.pop())]
                    found += [name for names in own.values() for name in names]
                    pending += nested
                walked = [n for n in ast.walk(node) if isinstance(n, ast.Name)]
                assert sorted(map(id, found)) == sorted(map(id, walked)), (path, node.lineno)
                checked += 1
    assert checked > 2000


def test_a_file_spelling_a_rules_tracked_name_is_analysed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEM103 reads every access where `DeviceIdType` is spelled (its `tracks`): the scopes
    record them from the start, where a plain first run was thrown away at the rule's finish;
    the findings are those of the run that asked."""
    source = (FIXTURES / "sem103" / "rt_signal_mesh_dropped" / "before.py").read_text()
    assert "DeviceIdType" in source
    built: list[type] = []
    build = ScopeBuilder.build

    def counted(self: ScopeBuilder, tree: ast.Module) -> None:
        built.append(type(self))
        build(self, tree)

    monkeypatch.setattr(ScopeBuilder, "build", counted)
    engine, findings = run_rules(Text(source), ast.parse(source), EVERY_RULE)
    assert built == [Tracking]
    asked = _run(Text(source), ast.parse(source), Tracking(), EVERY_RULE)
    assert [(f.rule, f.line, f.column) for f in findings] == [(f.rule, f.line, f.column) for f in asked.findings]
    assert any(f.rule == "SEM103" for f in findings)
    with pytest.raises(NeedsAccesses):  # what the plain scopes would have asked for
        _run(Text(source), ast.parse(source), ScopeBuilder(), EVERY_RULE)


@pytest.mark.parametrize(
    "source",
    [
        "from jax.experimental.pallas import tpu as pltpu\n\nkind = pltpu.DeviceIdType.LOGICAL\n",
        "from jax.experimental.pallas.tpu import DeviceIdType as D\n\nkind = D.LOGICAL\nsame = D\n",
        "import jax\n\nkind = jax.experimental.pallas.tpu.DeviceIdType\n",
        "from jax.experimental.pallas.tpu import *\n\nkind = DeviceIdType.LOGICAL\n",
        "import jax.experimental.pallas.tpu as t\n\ndef f(mods):\n    return t.DeviceIdType, mods[0].DeviceIdType\n",
    ],
)
def test_sem103_asks_only_the_accesses_that_may_name_device_id_type(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SEM103 reports every read of `DeviceIdType`: asking only the accesses whose root an
    import of it binds, or whose attributes spell it, reports what asking every access does."""
    from semfix.rules import sem103

    settings = build_settings(select=["SEM103"], target_jax="0.12.1")
    found = [(f.line, f.column) for f in fix_source(source, settings=settings, apply_fixes=False).findings]
    monkeypatch.setattr(sem103, "_may_name_it", lambda imports: None)  # every access asked
    asked = [(f.line, f.column) for f in fix_source(source, settings=settings, apply_fixes=False).findings]
    assert found == asked
    assert found or "import *" in source  # a star import of unknown names binds no import
