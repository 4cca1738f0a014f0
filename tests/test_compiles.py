"""`check` asks CPython whether a file with fixable findings compiles by compiling the tree the
engine parsed, not the text (a second parse). That is sound only if both give the same verdict
and message, and if nothing changed the tree before: both are shown here, over every fixture
and over sources the compiler refuses although the parser accepts them."""

from __future__ import annotations

import ast
import builtins
import warnings
from typing import Any

import pytest
from conftest import FIXTURES

from semfix import fix_source
from semfix.analysis.nodes import parse
from semfix.engine.run import analyse, analyse_tree
from semfix.errors import SourceError
from semfix.rewrite.compiles import compile_error, refuse_uncompilable
from semfix.rewrite.text import decode
from semfix.rules import RULES
from semfix.settings import Settings

_DEEP = "x = " + "-" * 1000 + "1\n"  # parses, compiles as text; too deep to convert back from a tree

TRICKY: dict[str, str | bytes] = {
    "repeated keyword argument": "f(a=1, a=2)\n",
    "return outside a function": "def f():\n    pass\nreturn 1\n",
    "yield outside a function": "yield 1\n",
    "nonlocal without a binding": "def f():\n    nonlocal x\n",
    "nonlocal with one": "def f():\n    x = 1\n    def g():\n        nonlocal x\n",
    "await outside async": "def f():\n    await x\n",
    "await at module level": "await x\n",
    "async comprehension outside async": "def f():\n    return [x async for x in y]\n",
    "from __future__ import annotations": "from __future__ import annotations\ndef f(x: nowhere) -> list[int]: ...\n",
    "late __future__ import": '"""doc"""\nimport os\nfrom __future__ import annotations\n',
    "__future__ after the docstring": '"""doc"""\nfrom __future__ import annotations, generator_stop\n',
    "unknown __future__ feature": "from __future__ import nope\n",
    "__future__ braces": "from __future__ import braces\n",
    "barry_as_FLUFL with !=": "from __future__ import barry_as_FLUFL\nx = 1 != 2\n",
    "barry_as_FLUFL with <>": "from __future__ import barry_as_FLUFL\nx = 1 <> 2\n",
    "type comments": "x = []  # type: list[int]\ndef f(a):\n    # type: (int) -> None\n    pass\n",
    "misplaced type comment": "def f():\n    pass  # type: int\n",
    "f-strings": "x = 1\ny = f'{x!r:>{x}} {x=} {\"q\"}'\nz = rf'\\d{x}'\n",
    "yield in an f-string at module level": "x = f'{(yield)}'\n",
    "break outside a loop": "break\n",
    "continue in a function": "def f():\n    continue\n",
    "break in a loop's else": "for x in y:\n    pass\nelse:\n    break\n",
    "assignment to __debug__": "__debug__ = 1\n",
    "starred target alone": "*a = [1]\n",
    "global after assignment": "x = 1\ndef f():\n    x = 2\n    global x\n",
    "bare except not last": "try:\n    pass\nexcept:\n    pass\nexcept ValueError:\n    pass\n",
    "return with a value in an async generator": "async def f():\n    yield 1\n    return 2\n",
    "too many statically nested blocks": "".join("    " * i + "for x in y:\n" for i in range(21))
    + "    " * 21
    + "pass\n",
    "invalid escape (a warning)": "x = '\\d'\nassert (x, 1)\n",
    "encoding cookie": "# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1"),
    "encoding cookie in text": "# -*- coding: latin-1 -*-\nx = 'é'\n",
    "BOM": b"\xef\xbb\xbfx = 1\nreturn x\n",
    "BOM in text": "\ufeffx = 1\n",
    "expression nested 1,000 deep": _DEEP,
    "a deep expression and an error": _DEEP + "return\n",
}


def _sources(*, parsing: bool = True) -> list[Any]:
    """Every fixture file and tricky source that parses (or, with `parsing=False`, that does not)."""
    fixtures = [(path.read_bytes(), str(path.relative_to(FIXTURES))) for path in _fixture_files()]
    every = [*fixtures, *((source, name) for name, source in TRICKY.items())]
    return [pytest.param(source, id=name) for source, name in every if (_parse(source) is not None) is parsing]


def _fixture_files() -> list[Any]:
    return sorted(FIXTURES.rglob("*.py"))


def _parse(source: str | bytes) -> tuple[str, ast.Module] | None:
    """The text and tree the engine has when it checks `source`; None if it cannot parse it."""
    try:
        text, _ = decode(source)
        return text, parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError, SourceError):
        return None


def _parsed(source: str | bytes) -> tuple[str, ast.Module]:
    parsed = _parse(source)
    assert parsed is not None
    return parsed


@pytest.mark.parametrize("source", _sources(parsing=False))
def test_a_source_that_does_not_parse_is_refused_before_anything_compiles(source: str | bytes) -> None:
    """So compiling its tree is never asked: check reports the parse error."""
    calls: list[object] = []
    real = builtins.compile

    def spy(code: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("flags", args[2] if len(args) > 2 else 0) & ast.PyCF_ONLY_AST:
            calls.append(code)
        return real(code, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builtins, "compile", spy)
        with pytest.raises(SourceError):
            analyse(source, Settings(enabled=frozenset(RULES)), apply_fixes=False)
    assert calls == []


def _refusal(text: str, tree: ast.Module | None = None) -> str | None:
    try:
        refuse_uncompilable(text, tree)
    except SourceError as error:
        return str(error)
    return None


@pytest.mark.parametrize("source", _sources())
def test_compiling_the_tree_says_what_compiling_the_text_says(source: str | bytes) -> None:
    text, tree = _parsed(source)
    assert _refusal(text, tree) == _refusal(text)


@pytest.mark.parametrize("source", _sources())
def test_cpython_compiles_a_parsed_tree_as_its_text(source: str | bytes) -> None:
    """CPython itself: the same success or SyntaxError, at the same place, for each tree it
    can convert back (every one but an expression nested about as deep as Python's recursion
    limit, which semfix then compiles from the text)."""
    text, tree = _parsed(source)

    def outcome(code: str | ast.Module) -> tuple[str, ...]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(code, "<semfix>", "exec", dont_inherit=True)
        except SyntaxError as error:
            return "SyntaxError", str(error.msg), str(error.lineno), str(error.offset)
        except RecursionError:
            return ("RecursionError",)
        return ("compiles",)

    from_tree = outcome(tree)
    if from_tree == ("RecursionError",):
        assert _DEEP in text
        assert compile_error(text) == compile_error(text.replace(_DEEP, "x = 1\n"))  # the text's limit is higher
    else:
        assert from_tree == outcome(text)


def test_a_future_import_in_the_tree_applies_to_compiling_it() -> None:
    """compile() takes a tree's `__future__` features from the tree, and not from semfix's own
    modules (which import `annotations` too): a `yield` in a local annotation compiles, but
    not under `from __future__ import annotations`, which refuses it in any annotation."""
    body = "def f():\n    x: (yield) = 1\n"
    with_future = "from __future__ import annotations\n" + body
    assert _refusal(body, ast.parse(body)) is None
    refused = _refusal(with_future, ast.parse(with_future))
    assert refused == _refusal(with_future)
    assert (
        refused == "CPython cannot compile this file (line 3: 'yield expression' can not be used within an annotation)"
    )


@pytest.mark.parametrize(
    "path",
    [path for path in _fixture_files() if _parse(path.read_bytes()) is not None],
    ids=lambda path: str(path.relative_to(FIXTURES)),
)
def test_checking_leaves_the_tree_as_parsed(path: Any) -> None:
    """Every rule, unsafe fixes included: the check path changes no node (only the fix path's
    `declare` does), so the tree it compiles is the text's."""
    text, tree = _parsed(path.read_bytes())
    settings = Settings(enabled=frozenset(RULES), unsafe_fixes=True)
    try:
        analyse_tree(text, tree, "utf-8", settings, apply_fixes=False)
    except SourceError:
        pass
    assert ast.dump(tree, include_attributes=True) == ast.dump(parse(text), include_attributes=True)


def test_check_reads_the_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a fixable finding, `check` parses the text and compiles its tree: CPython is handed
    the text once (it was twice: a parse, then a compile of the text)."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    token = sem[...]\n    pl.semaphore_signal(token, 1)\n"
    )
    handed: list[object] = []
    real = builtins.compile

    def spy(code: Any, *args: Any, **kwargs: Any) -> Any:
        handed.append(code)
        return real(code, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", spy)
    found = fix_source(source, apply_fixes=False).findings
    assert {f.rule for f in found if f.fix is not None} == {"SEM003"}
    assert [type(code) for code in handed] == [str, ast.Module]


def test_check_refuses_a_file_that_does_not_compile_as_before() -> None:
    """The user sees the same message: where and what CPython refuses."""
    source = (
        "from jax.experimental import pallas as pl\n\n\n"
        "def kernel(sem):\n    token = sem[...]\n    pl.semaphore_signal(token, 1)\n    pl.f(a=1, a=2)\n"
    )
    with pytest.raises(
        SourceError, match=r"^CPython cannot compile this file \(line 7: keyword argument repeated: a\)$"
    ):
        fix_source(source, apply_fixes=False)
