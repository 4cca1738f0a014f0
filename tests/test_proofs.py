"""Each engine's proof refuses new source that parses but that CPython will not compile."""

from __future__ import annotations

import ast

import pytest

from semfix import fix_source
from semfix.analysis.importer import ImportChanges
from semfix.analysis.nodes import Text
from semfix.engine.proof import prove
from semfix.errors import SafetyError, SourceError
from semfix.rewrite import compiles
from semfix.selection import build_settings
from semfix.settings import Settings


@pytest.mark.parametrize(
    ("old", "new", "error"),
    [
        ("f(a=1, b=2)\n", "f(a=1, a=2)\n", "keyword argument repeated"),
        (
            "pl.semaphore_wait(sem, value=1, dec=2)\n",
            "pl.semaphore_wait(sem, value=1, value=2)\n",
            "keyword argument repeated",
        ),
        ("def f():\n    pass\nreturn_(1)\n", "def f():\n    pass\nreturn (1)\n", "'return' outside function"),
    ],
)
def test_proof_rejects_source_that_does_not_compile(old: str, new: str, error: str) -> None:
    start = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
    same_end = next(i for i, (a, b) in enumerate(zip(reversed(old), reversed(new))) if a != b)
    edits = [(start, len(old) - same_end, new[start : len(new) - same_end])]
    expected = ast.parse(new)  # the declared tree, so the statement-by-statement proof passes
    with pytest.raises(SafetyError, match=error):
        prove(expected, Text(old), new, edits, build_settings(), settled=True)


def test_quick_proof_compiles_the_tree_it_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEM003 drops a line, so the whole new text is parsed: the compiler gets that tree, and
    neither the parser nor the compiler reads the new text a second time."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    token = sem[...]\n    pl.semaphore_signal(token, 1)\n"
    )
    compiled: list[object] = []
    real_compile_error = compiles.compile_error
    monkeypatch.setattr(compiles, "compile_error", lambda code: compiled.append(code) or real_compile_error(code))
    result = fix_source(source)
    assert result.applied and {f.rule for f in result.applied} == {"SEM003"}
    assert [type(code) for code in compiled] == [ast.Module]


def test_quick_proof_compiles_the_whole_tree_it_parsed() -> None:
    """A cut line break sends the proof to the whole tree, which must still compile."""
    old, new = "f(a=1,\n  b=2)\n", "f(a=1, a=2)\n"
    with pytest.raises(SafetyError, match="keyword argument repeated"):
        prove(ast.parse(new), Text(old), new, [(0, len(old), new)], build_settings(), settled=True)


def test_quick_proof_names_a_file_that_never_compiled_when_the_new_text_does_not_parse() -> None:
    old, new = "return\nf(a=\n  1)\n", "return\nf(a=\n"
    with pytest.raises(SourceError, match="'return' outside function"):
        prove(ast.parse(old), Text(old), new, [(9, len(old), "")], build_settings(), settled=True)


def test_a_file_that_never_compiled_is_not_fixed() -> None:
    """Not valid Python before the fix: named like a syntax error, as ruff does, and left alone;
    checking says so too, rather than calling a finding fixable that `fix` will not make."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    pl.semaphore_signal(sem[...], 1)\n\n\nreturn\n"
    )
    with pytest.raises(SourceError, match="'return' outside function"):
        fix_source(source)
    with pytest.raises(SourceError, match="'return' outside function"):
        fix_source(source, apply_fixes=False)


_OLD_MIGRATION = (
    "from __future__ import annotations\nfrom jax.experimental.pallas import tpu as pltpu\n\npltpu.semaphore_wait(s)\n"
)
_PALLAS = "from jax.experimental import pallas as pl\n"


def _prove_migration(new: str, *, imports: bool = True, first: bool = False) -> None:
    """Prove `new` against _OLD_MIGRATION with SEM101's declaration: the reference renamed and,
    with `imports`, the pltpu import swapped for the pallas import (placed `first` if asked)."""
    tree = ast.parse(_OLD_MIGRATION)
    future, tpu, call = tree.body[0], tree.body[1], tree.body[2].value  # type: ignore[attr-defined]
    declared = ImportChanges()
    declared.replace(call.func, [ast.parse("pl.semaphore_wait").body[0].value], call)  # type: ignore[attr-defined]
    if imports:
        declared.replace(tpu, [], tree)
        declared.add(future if first else tpu, ast.parse(_PALLAS).body[0], tree, before=first)
    declared.declare()
    prove(tree, Text(_OLD_MIGRATION), new, [(0, len(_OLD_MIGRATION), new)], build_settings())


def test_migration_proof_accepts_the_declared_import_edits() -> None:
    _prove_migration(f"from __future__ import annotations\n{_PALLAS}\npl.semaphore_wait(s)\n")


def test_migration_proof_compiles_the_declared_import_edits() -> None:
    """The declared edits, in an order CPython refuses: only compiling shows it."""
    with pytest.raises(SafetyError, match="__future__"):
        _prove_migration(f"{_PALLAS}from __future__ import annotations\n\npl.semaphore_wait(s)\n", first=True)


@pytest.mark.parametrize(
    ("new", "imports"),
    [
        (f"{_PALLAS}from __future__ import annotations\n\npl.semaphore_wait(s)\n", True),
        (f"from __future__ import annotations\n{_PALLAS}\npl.semaphore_wait(s)\n", False),
        (f"{_PALLAS}\npl.semaphore_wait(s)\n", True),
        ("from __future__ import annotations\nimport os\n\npl.semaphore_wait(s)\n", True),
        (f"from __future__ import annotations\n{_PALLAS}\nos.semaphore_wait(s)\n", True),
    ],
    ids=["misplaced", "undeclared", "dropped-too-much", "wrong-import-added", "wrong-module"],
)
def test_migration_proof_accepts_only_the_declared_import_edits(new: str, imports: bool) -> None:
    with pytest.raises(SafetyError, match="differs from the declared rewrites"):
        _prove_migration(new, imports=imports)


def test_proof_refuses_imports_that_differ_undeclared() -> None:
    old, new = "import os\nimport sys\n\nf()\n", "import os\n\nf()\n"
    with pytest.raises(SafetyError, match="differs from the declared rewrites"):
        prove(ast.parse(old), Text(old), new, [(0, len(old), new)], build_settings())


def test_migration_proof_parses_each_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SEM101's proof reads the engine's old tree and hands its parse of the new text to the
    compiler and to the second pass: each whole text goes through the parser once."""
    source = "from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem)\n"
    parsed: list[str] = []
    real_parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *a, **k: parsed.append(text) or real_parse(text, *a, **k))
    result = fix_source(source, settings=Settings(enabled=frozenset({"SEM101"}), target_jax=(0, 10, 2)))
    assert [f.rule for f in result.applied] == ["SEM101"]
    assert sorted(text for text in parsed if text.count("\n") > 2) == sorted([source, result.source])


def test_migration_proof_refuses_a_new_text_that_does_not_parse() -> None:
    """A rewrite that breaks the syntax is the fix's fault (SafetyError), not the file's."""
    with pytest.raises(SafetyError, match="the rewritten source does not"):
        _prove_migration("pl.semaphore_wait(s\n")


class _DropFirst:
    """A change that declares the module without its first statement, as a dropped import does."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree

    def declare(self) -> None:
        del self.tree.body[0]


def test_a_rewrite_that_leaves_a_read_unbound_is_refused() -> None:
    """The declared tree can be as wrong as the text (issue 36 item 1: an import dropped whose
    name a rename writes); the proof holds the new text to reading no name it leaves unbound."""
    from semfix.analysis.fixes import Decision
    from semfix.engine.run import apply_and_prove

    text = "from jax.experimental import pallas as pl\nimport os\n\npl.semaphore_wait(os.sep)\n"
    tree = ast.parse(text)
    line = len("from jax.experimental import pallas as pl\n")
    decision = Decision("SEM101", ((0, line, ""),), (_DropFirst(tree),))  # type: ignore[arg-type]
    with pytest.raises(SafetyError, match="reads pl, which nothing would bind"):
        apply_and_prove(Text(text), tree, [decision], "utf-8", Settings(frozenset({"SEM101"})), [])


def test_a_fix_that_a_second_run_would_change_again_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proof's last check: fixing the fixed text again changes nothing. A second run whose
    verdict differs from the first (here it also makes the unsafe fix the first left, as a rule
    whose verdict turns on its own output would) is refused: no half-done rewrite is written."""
    from dataclasses import replace

    from semfix.engine import run

    source = """\
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref, sem, sems):
    pl.semaphore_wait(sem[...], 1)
    pl.semaphore_signal(sems[1], 1)
"""
    once = run.analyse_tree
    runs: list[bool] = []

    def changed_verdict(
        text: str, tree: ast.Module, encoding: str, settings: Settings, apply_fixes: bool, rounds: int = run.ROUNDS
    ) -> run.Result:
        runs.append(apply_fixes)
        return once(text, tree, encoding, replace(settings, unsafe_fixes=len(runs) > 1), apply_fixes, rounds)

    assert fix_source(source).source == source.replace("sem[...]", "sem")  # as it is: the read fixed, sems[1] left
    monkeypatch.setattr(run, "analyse_tree", changed_verdict)
    with pytest.raises(SafetyError, match="a second run would change the rewritten source again"):
        fix_source(source)
    assert runs == [True, True]


class _Unchanged:
    """A change that declares nothing: the edit it goes with writes the text back as it was."""

    def declare(self) -> None:
        pass


def test_a_fix_that_leaves_a_fix_to_make_is_refused() -> None:
    """The proof's second pass (issue 43 §4): a fix must reach a fixed point. A fix that rewrites
    the wait and leaves `sems[0]` in the signal (a safe fix a second run would make) is refused,
    and `fix_source` itself writes a text a second run leaves alone."""
    from semfix.analysis.fixes import Decision
    from semfix.engine.run import apply_and_prove

    text = (
        "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\n"
        "def kernel(x_ref, o_ref, sems):\n"
        "    pl.semaphore_signal(sems[0], 1)\n    pl.semaphore_wait(sems.at[0], 1)\n\n\n"
        "def run(x):\n    regular = pltpu.SemaphoreType.REGULAR((2,))\n"
        "    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[regular])(x)\n"
    )
    settings = build_settings()
    fixed = fix_source(text, settings=settings)
    assert [f.rule for f in fixed.applied] == ["SEM002"]
    assert fix_source(fixed.source, settings=settings).source == fixed.source
    wait = text.index("sems.at[0], 1)")
    decision = Decision("SEM002", ((wait, wait + 4, "sems"),), (_Unchanged(),), settles=False)  # type: ignore[arg-type]
    with pytest.raises(SafetyError, match="a second run would change"):
        apply_and_prove(Text(text), ast.parse(text), [decision], "utf-8", settings, [])


UNSAFE_THEN_MORE = """\
from jax.experimental.pallas import tpu as pltpu


def _start(src, dst, sem):
    def go():
        pltpu.make_async_copy(src, dst, sem).start()

    go()


def kernel(x_hbm, o_hbm, flags, pair, sems):
    def step():
        sem = flags

    for src, dst, sem in ((x_hbm.at[0:2], o_hbm.at[0:2], pair[0]), (x_hbm.at[2:4], o_hbm.at[2:4][...], sems)):
        pltpu.make_async_copy(src, dst, sem).start()
    _start(x_hbm.at[4:6], o_hbm.at[4:6], pair[1])
"""


def test_unsafe_fixes_are_made_again_until_a_pass_makes_none() -> None:
    """The oracle's seeds 951051, 952629, 952819: under `--unsafe-fixes` the view one fix writes
    (`pair.at[1]`) is evidence that lets the next pass fix the loop's `pair[0]`; the proof's second
    pass refused that as an internal error and left the file. As ruff does, the fixes are made
    again, each pass proven, until one makes none: a further run changes nothing."""
    unsafe = build_settings(unsafe_fixes=True)
    fixed = fix_source(UNSAFE_THEN_MORE, settings=unsafe)
    assert "pair.at[1])" in fixed.source and "o_hbm.at[2:4][...]" in fixed.source
    assert fix_source(fixed.source, settings=unsafe).source == fixed.source
    assert sorted(f.original for f in fixed.applied) == ["pair[0]", "pair[1]"]
    assert fix_source(UNSAFE_THEN_MORE).source == UNSAFE_THEN_MORE  # no safe fix here
