"""The quick engine must agree with the libcst engine exactly wherever it does not defer."""

from __future__ import annotations

import ast
import dataclasses
import re
import sys

import pytest
from conftest import Case, fixture_cases

from semfix import FixResult, fix_source
from semfix.findings import Finding
from semfix.engine import Defer, analyse
from semfix.settings import Settings
from semfix.text import line_starts

CASES = fixture_cases()


def _both(source: bytes, settings: Settings, apply_fixes: bool):  # type: ignore[no-untyped-def]
    reference = fix_source(source, settings=settings, apply_fixes=apply_fixes, engine="libcst")
    try:
        quick = fix_source(source, settings=settings, apply_fixes=apply_fixes, engine="quick")
    except Defer:
        return reference, None
    return reference, quick


@pytest.mark.parametrize("apply_fixes", [True, False], ids=["fix", "check"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_quick_engine_matches_libcst(case: Case, apply_fixes: bool) -> None:
    settings = Settings.build(**case.spec.get("settings", {}))
    for source in (case.before, case.after):
        reference, quick = _both(source, settings, apply_fixes)
        if quick is not None:
            assert quick.source == reference.source
            assert quick.findings == reference.findings
            assert quick.encoding == reference.encoding


def test_quick_engine_takes_most_fixtures() -> None:
    """Guard against a quick engine that defers everything (and so proves nothing)."""
    taken = 0
    for case in CASES:
        try:
            fix_source(case.before, settings=Settings.build(**case.spec.get("settings", {})), engine="quick")
            taken += 1
        except Defer:
            pass
    assert taken >= len(CASES) // 2


# What the quick engine still hands to libcst: SEM101's rarest import placements.
_STILL_DEFERRED = re.compile(r"SEM101: (a reference outside a call|the imported name is rebound|a reference over several lines|an import in a class body|a string may name the import|an import that shares its line|an import dropped at the end of a block|the pallas import goes where AddImportsVisitor puts it)")


def _quick_takes(source: str | bytes, settings: Settings) -> bool:
    try:
        analyse(source, settings, apply_fixes=True)
    except Defer as reason:
        assert _STILL_DEFERRED.search(str(reason)), f"deferred: {reason}"
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_quick_engine_defers_only_what_it_does_not_model(case: Case) -> None:
    """Ignore comments, comments and line breaks at the brackets and reads of reads are the
    quick engine's own."""
    for settings in (Settings.build(**case.spec.get("settings", {})), Settings.build(select=["SEM"])):
        for source in (case.before, case.after):
            _quick_takes(source, settings)


def _same(case: Case, variant: str, settings: Settings, reference: FixResult | None = None) -> None:
    """Both engines give the variant the same output and findings; the quick engine takes it
    whenever it takes the fixture itself."""
    if not _quick_takes(case.before, settings) or not _quick_takes(variant, settings):
        return
    if reference is None:
        reference = fix_source(variant, settings=settings, engine="libcst")
    quick = fix_source(variant, settings=settings, engine="quick")
    assert (quick.source, quick.findings) == (reference.source, reference.findings), variant


def _quick_findings(case: Case, text: str, settings: Settings) -> tuple[Finding, ...]:
    """The fixture's findings, from the quick engine; none when it defers the fixture."""
    if not _quick_takes(case.before, settings):
        return ()
    return fix_source(text, settings=settings, apply_fixes=False, engine="quick").findings


def _text(case: Case) -> str:
    return case.before.decode(fix_source(case.before, apply_fixes=False).encoding)


def _offset(text: str, line: int, column: int) -> int:
    return line_starts(text)[line - 1] + column - 1


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ignore_comments_agree(case: Case) -> None:
    """Every finding's first or last line gets a bare ignore, one for its rule, or one for
    another rule (lower case, in a list); findings are silenced alike, and the fixes kept."""
    settings = Settings.build(**case.spec.get("settings", {}))
    text = _text(case)
    findings = _quick_findings(case, text, settings)
    comments: dict[int, str] = {}
    shift = len(case.name)  # varies which finding gets which comment from fixture to fixture
    for index, finding in enumerate(findings):
        kind = (index + shift) % 3
        codes = ["", f"[{finding.rule}]", "[sem004, SEM002]" if finding.rule == "SEM001" else "[ sem001 ]"][kind]
        comments.setdefault(finding.line if (index + shift) % 2 else finding.end_line, f"  # semfix: ignore{codes}")
    lines = text.splitlines(keepends=True)
    for line, comment in comments.items():
        body = lines[line - 1].rstrip("\r\n")
        lines[line - 1] = body + comment + lines[line - 1][len(body) :]
    variant = "".join(lines)
    if comments and _parses(variant):
        _same(case, variant, settings)


_BRACKETS = {  # (value, `[...]`) -> the variant text of the whole subscript
    "comment in the brackets": lambda value, rest: f"{value}[  # note\n{rest[1:]}",
    "line break in the brackets": lambda value, rest: f"{value}{rest[:-1]}\n]",
    "continued line before them": lambda value, rest: f"{value} \\\n    {rest}",
    "line break before them": lambda value, rest: f"{value}\n    {rest}",
    "comment in the value's parentheses": lambda value, rest: f"({value}  # note\n){rest}",
    "comment after it, in parentheses": lambda value, rest: f"({value}{rest}  # note\n)",
    "comment before it, in parentheses": lambda value, rest: f"(  # note\n{value}{rest})",
}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_comments_and_line_breaks_at_the_brackets_agree(case: Case) -> None:
    """Each flagged subscript, written with comments or line breaks around or inside its last
    brackets (one form each, in turn): libcst reports what it cannot cut, and cuts line
    breaks inside the brackets."""
    settings = Settings.build(**case.spec.get("settings", {}))
    text = _text(case)
    findings = _quick_findings(case, text, settings)
    variant = text
    forms = list(_BRACKETS.values())
    for index, finding in enumerate(sorted(findings, key=lambda f: (f.line, f.column), reverse=True)):
        start, end = _offset(text, finding.line, finding.column), _offset(text, finding.end_line, finding.end_column)
        written = text[start:end]
        if not written.endswith("]"):
            continue
        cut = written.rindex("[")
        form = forms[(index + len(case.name)) % len(forms)]
        variant = variant[:start] + form(written[:cut], written[cut:]) + variant[end:]
    if variant != text and _parses(variant):
        _same(case, variant, settings)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_lone_carriage_returns_are_line_breaks(case: Case) -> None:
    """CPython ends a line at a lone CR, as at `\\n`: the file with every `\\n` made a CR gets
    the result of the `\\n` file (which the libcst engine's equals), line breaks made CRs."""
    text = _text(case)
    if "\r" in text or not _quick_takes(case.before, Settings.build(**case.spec.get("settings", {}))):
        return
    settings = Settings.build(**case.spec.get("settings", {}))
    reference = fix_source(text, settings=settings, engine="quick")

    def lone(value: object) -> object:
        return value.replace("\n", "\r") if isinstance(value, str) else value

    findings = tuple(dataclasses.replace(f, **{k: lone(v) for k, v in vars(f).items()}) for f in reference.findings)
    _same(case, text.replace("\n", "\r"), settings, FixResult(lone(reference.source), findings, reference.encoding))  # type: ignore[arg-type]


_NEWER = pytest.mark.skipif(sys.version_info < (3, 12), reason="this Python's ast cannot parse PEP 695 syntax")


@_NEWER
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_type_parameters_agree(case: Case) -> None:
    """Every function and class made generic, and a type alias added: same results."""
    text = re.sub(r"^(\s*)def (\w+)\(", r"\1def \2[T: int, *Ts, **P](", _text(case), flags=re.MULTILINE)
    text = re.sub(r"^(\s*)class (\w+)\b", r"\1class \2[T]", text, flags=re.MULTILINE)
    text += "\ntype Pair[T] = tuple[T, T]\n"
    if _parses(text):
        _same(case, text, Settings.build(**case.spec.get("settings", {})))


@pytest.mark.skipif(sys.version_info < (3, 11), reason="`except*` is Python 3.11 syntax: see test_newer_syntax.py")
def test_except_star_agrees() -> None:
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef kernel(sem, sems, i):\n"
        "    try:\n        pl.semaphore_wait(sem[...])\n    except* ValueError as group:\n"
        "        pl.semaphore_signal(sems.at[i][...], 1)\n        sems.at[i]\n"
        "    finally:\n        pl.semaphore_read(sem[()])\n"
    )
    reference = fix_source(source, engine="libcst")
    quick = fix_source(source, engine="quick")
    assert quick.findings == reference.findings and len(quick.findings) == 3
    assert quick.source == reference.source


_SEM101_RENAMES = '''\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(sem, x_ref):
    x_ref[...] = pltpu.VMEM
    pltpu.semaphore_signal(sem[...], 1)
    pltpu.semaphore_wait(sem, dec=1)  # semfix: ignore[SEM102]


def other(sem):
    def pl():
        pass
    pltpu.semaphore_read(sem)
'''


@pytest.mark.parametrize("apply_fixes", [True, False], ids=["fix", "check"])
def test_quick_engine_takes_sem101_renames(apply_fixes: bool) -> None:
    """SEM101 renames with the pallas import present and `pltpu` still used need no import
    edit: the quick engine takes them (a local `pl` blocks the fix), equal to libcst."""
    settings = Settings.build(select=["SEM"])
    reference, quick = _both(_SEM101_RENAMES, settings, apply_fixes)
    assert quick is not None
    assert (quick.source, quick.findings) == (reference.source, reference.findings)
    assert [f.rule for f in quick.findings].count("SEM101") == 3


_EDGES = {  # each a kernel body after the pallas import
    "semicolon": "def f(sem):\n    v = sem[...] ;\n    pl.semaphore_wait(v)\n",
    "shares line": "def f(sem):\n    x = 1; v = sem[...]\n    pl.semaphore_wait(v)\n",
    "suite": "def f(sem, c):\n    if c: v = sem[...]\n    pl.semaphore_wait(v)\n",
    "comment above": "def f(sem):\n    x = 1\n    # note\n\n    v = sem[...]\n    pl.semaphore_wait(v)\n",
    "footer comment": "def f(sem, c):\n    if c:\n        x = 1\n        # deeper\n\n    v = sem[...]\n    pl.semaphore_wait(v)\n",
    "footer then own": "def f(sem, c):\n    if c:\n        x = 1\n        # deeper\n    # own\n    v = sem[...]\n    pl.semaphore_wait(v)\n",
    "first in block": "def f(sem):\n    # first\n    v = sem[...]\n    pl.semaphore_wait(v)\n",
    "comment inside": "def f(sems, i):\n    v = sems.at[  # why\n        i][...]\n    pl.semaphore_wait(v)\n",
    "hash in string": "def f(sems):\n    v = sems.at['#'][...]\n    pl.semaphore_wait(v)\n",
    "deleted": "def f(sem):\n    v = sem[...]\n    pl.semaphore_wait(v)\n    del v\n",
    "no final newline": "def f(sem):\n    pl.semaphore_signal(sem)\nv = SEM[...]\npl.semaphore_wait(v)\nv2 = SEM[...]",
    "last line removed": "def f(sem):\n    pl.semaphore_wait(w)\n    w = sem[...]",
    "two uses": "def f(sems, i):\n    v = sems.at[i][...]\n    pl.semaphore_signal(v)\n    pl.semaphore_wait(sem_or_view=(v))\n",
    "silenced use": "def f(sem):\n    v = sem[...]\n    pl.semaphore_wait(v)  # semfix: ignore[SEM003]\n",
    "silenced after": "def f(sem):\n    v = sem[...]\n    # semfix: ignore\n    pl.semaphore_wait(v)\n",
    "loop use before": "def f(sem, n):\n    for _ in range(n):\n        v = sem[...]\n        pl.semaphore_wait(v)\n",
    "comprehension use": "def f(sem, n):\n    v = sem[...]\n    [pl.semaphore_wait(v) for _ in range(n)]\n",
    "global read": "def f(sem):\n    global v\n    v = sem[...]\n    pl.semaphore_wait(v)\n",
    "call in ref": "def f(g):\n    v = g().sem[...]\n    pl.semaphore_wait(v)\n",
    "element ref": "def f(sems):\n    v = sems[0][...]\n    pl.semaphore_wait(v)\n",
    "module level": "v = SEM[...]\npl.semaphore_wait(v)\n",
    "class body": "class K:\n    v = SEM[...]\n    pl.semaphore_wait(v)\n",
    "walrus in lambda": "k = lambda sem: pl.semaphore_wait(s := sem[...])\n",
    "walrus in class": "class K:\n    pl.semaphore_wait(s := SEM[...])\n",
    "walrus comprehension": "def f(sem, n):\n    [pl.semaphore_wait(s := sem[...]) for _ in range(n)]\n",
    "walrus attribute named": "def f(sem, o):\n    pl.semaphore_wait(s := sem[...])\n    o.s = 1\n",
    "walrus keyword named": "def f(sem, g):\n    pl.semaphore_wait(s := sem[...])\n    g(s=1)\n",
    "walrus param named": "def f(sem, s=None):\n    pl.semaphore_wait(s := sem[...])\n",
    "walrus nested": "def f(sem):\n    pl.semaphore_wait(s := (t := sem[...]))\n",
    "walrus element view": "def f(sems, i):\n    pl.semaphore_signal(sems.at[0])\n    pl.semaphore_wait(s := sems[i][...])\n",
    "walrus of carried": "def f(sem):\n    v = sem[...]\n    pl.semaphore_wait(s := v)\n",
    "attr proof in comprehension": "class K:\n    def f(self, n):\n        [pl.semaphore_signal(self.sems.at[i]) for i in range(n)]\n        pl.semaphore_wait(self.sems[1])\n",
    "attr proof subscript store": "class K:\n    def f(self, o):\n        pl.semaphore_signal(self.sems.at[0])\n        self.sems[2] = o\n        pl.semaphore_wait(self.sems[1])\n",
    "attr proof free base": "def f():\n    pl.semaphore_signal(STATE.sems.at[0])\n    pl.semaphore_wait(STATE.sems[1])\n",
    "attr proof nested index": "class K:\n    def f(self, i):\n        pl.semaphore_signal(self.sems.at[i])\n        pl.semaphore_wait(self.sems[self.slot])\n        self.slot = 2\n",
    "attr read then view": "class K:\n    def f(self):\n        pl.semaphore_signal(self.sems.at[0])\n        pl.semaphore_wait(self.sems[1][...])\n",
    "ref multi line": "def f(sems, i):\n    v = sems.at[\n        i\n    ][...]\n    pl.semaphore_wait(v, 1)\n",
    "decorated next": "def f(sem):\n    v = sem[...]\n    @g\n    def h():\n        pass\n    pl.semaphore_wait(v)\n",
}


@pytest.mark.parametrize("body", _EDGES.values(), ids=_EDGES.keys())
def test_carried_reads_walrus_and_attribute_evidence_agree(body: str) -> None:
    """SEM003, assignment expressions and evidence about attribute chains are the quick
    engine's own: it takes each case, and agrees with libcst on output and findings."""
    source = "from jax.experimental import pallas as pl\n\n\n" + body
    for settings in (Settings.build(), Settings.build(select=["SEM0"]), Settings.build(unsafe_fixes=True)):
        assert _quick_takes(source, settings)
        for apply_fixes in (True, False):
            reference, quick = _both(source.encode(), settings, apply_fixes)
            assert (quick.source, quick.findings) == (reference.source, reference.findings)


def test_a_read_before_the_assignment_in_a_loop_blocks_sem003() -> None:
    """`out_ref[0] = v` reads the previous iteration's `v`: dropping `v = sem[...]` would leave
    it unbound. libcst links that read to no assignment (it precedes it) and so fixes; the
    quick engine counts every read of `v` in its scope, and reports."""
    source = (
        "from jax.experimental import pallas as pl\n\n\ndef f(sem, out_ref, n):\n    for _ in range(n):\n"
        "        if n > 1:\n            out_ref[0] = v\n        v = sem[...]\n        pl.semaphore_wait(v)\n"
    )
    result = fix_source(source, engine="quick")
    assert result.source == source
    [finding] = result.findings
    assert finding.rule == "SEM003" and not finding.applied
    assert finding.message.endswith("(not fixed: `v` is also used for something else)")


_IMPORT_EDITS = {
    "sorted into the JAX import's block": "import functools\n\n# third party\nimport jax\nfrom jax.experimental.pallas import tpu as pltpu\nfrom mykernels import helpers\n\n\ndef kernel(sem):\n    helpers.run(pltpu.VMEM, jax, functools)\n    pltpu.semaphore_signal(sem, 1)\n",
    "first in its block": "from zzz import z\n# the kernels' own\nfrom jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    z(pltpu.VMEM)\n    pltpu.semaphore_signal(sem, 1)\n",
    "in place of the dropped import, comments kept": "import os\n# TPU spellings\nfrom jax.experimental.pallas import tpu as pltpu  # old\nimport sys\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n    return os, sys\n",
    "parenthesized import cut down": "from jax.experimental.pallas.tpu import (\n    VMEM,  # memory\n    semaphore_signal,\n    semaphore_wait,\n)\n\n\ndef kernel(sem):\n    semaphore_signal(sem, 1)\n    semaphore_wait(sem, 1)\n    return VMEM\n",
    "lazy imports, used on and dropped": "def a(sem):\n    import jax.experimental.pallas.tpu as pltpu\n    pltpu.semaphore_signal(sem, 1)\n    return pltpu.VMEM\n\n\ndef b(sem):\n    if sem:\n        from jax.experimental.pallas import tpu as pltpu\n        pltpu.semaphore_wait(sem, 1)\n",
    "nested function uses the module import": "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    def inner():\n        return pltpu.VMEM\n    pltpu.semaphore_wait(sem, 1)\n    return inner\n",
    "windows line breaks": "from jax.experimental.pallas import tpu as pltpu\r\nimport os\r\n\r\n\r\ndef kernel(sem):\r\n    pltpu.semaphore_signal(sem, 1)\r\n    return os\r\n",
    "imported under another name": "from jax.experimental import pallas as pl\nfrom jax.experimental.pallas.tpu import semaphore_read as read_sem\n\n\ndef kernel(sem):\n    return read_sem(sem)\n",
    "a name of the same spelling assigned": "import typing\n\nfrom jax._src.tpu import primitives as _p\n\nif typing.TYPE_CHECKING:\n    semaphore_wait = _p.wait\n",
    "passed to a call": "import functools\n\nfrom jax.experimental.pallas.tpu import semaphore_wait\n\n\ndef kernel(sem):\n    return functools.partial(semaphore_wait, sem)\n",
}


@pytest.mark.parametrize("source", _IMPORT_EDITS.values(), ids=_IMPORT_EDITS.keys())
def test_quick_engine_makes_sem101_import_edits(source: str) -> None:
    """Import edits (names dropped, statements cut down, the pallas import placed) are the
    quick engine's too, byte for byte as the libcst engine makes them."""
    settings = Settings.build(select=["SEM"])
    assert _quick_takes(source, settings)  # past the prefilter too
    for apply_fixes in (True, False):
        reference, quick = _both(source, settings, apply_fixes)
        assert quick is not None
        assert (quick.source, quick.findings, quick.encoding) == (reference.source, reference.findings, reference.encoding)


_IMPORT_EDITS_DEFERRED = {
    "rebound elsewhere": ("from jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem):\n    pltpu.semaphore_signal(sem, 1)\n\n\ndef other():\n    pltpu = 1\n    return pltpu\n", "rebound"),
    "only in an if": ("import sys\nif sys:\n    from jax.experimental.pallas import tpu as pltpu\n    import os\n\n\ndef kernel(sem):\n    pltpu.semaphore_signal(sem, 1)\n", "AddImportsVisitor"),
    "one-line function": ("def kernel(sem): from jax.experimental.pallas import tpu as pltpu; pltpu.semaphore_signal(sem, 1)\n", "shares its line"),
    "string annotation": ("from jax.experimental import pallas as pl\nfrom jax.experimental.pallas import tpu as pltpu\n\n\ndef kernel(sem: 'pltpu.SemaphoreType'):\n    pltpu.semaphore_signal(sem, 1)\n", "a string"),
    "last statement, comment above": ("from jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n    pltpu.semaphore_wait(sem, 1)\n    # old\n    from jax.experimental.pallas import tpu as pltpu\n", "end of a block"),
}


@pytest.mark.parametrize("source, reason", _IMPORT_EDITS_DEFERRED.values(), ids=_IMPORT_EDITS_DEFERRED.keys())
def test_rare_sem101_import_edits_are_deferred_by_name(source: str, reason: str) -> None:
    with pytest.raises(Defer, match=reason):
        analyse(source, Settings.build(select=["SEM"]), apply_fixes=True)
    fix_source(source, settings=Settings.build(select=["SEM"]))  # the libcst engine takes them
