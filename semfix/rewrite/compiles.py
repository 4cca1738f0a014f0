"""The last check before a write: CPython must compile the new source, not only parse it.

`ast.parse` accepts code the compiler refuses (`f(value=1, value=2)`, `return` at module level,
a late `from __future__` import, a `nonlocal` whose binding is gone, ...). The engine's proofs
call `compile_error` on the new source: the whole of it, since some of those checks need the
enclosing scopes and the file's `__future__` imports. Compiling costs about what CPython's
symbol-table pass costs (the engine parses it anyway, and a parse builds Python objects
compile does not need). It runs when a file is rewritten, and in `check`, where a fixable
finding is found, on the tree the engine parsed (`refuse_uncompilable(text, tree)`).
"""

from __future__ import annotations

import ast
import warnings
from contextvars import ContextVar

from semfix.errors import SourceError

#: Set while a notebook's cells are fixed: IPython runs a cell's top-level `await`, so CPython
#: is asked to compile as IPython does (`PyCF_ALLOW_TOP_LEVEL_AWAIT`).
TOP_LEVEL_AWAIT: ContextVar[bool] = ContextVar("TOP_LEVEL_AWAIT", default=False)


def _flags() -> int:
    return ast.PyCF_ALLOW_TOP_LEVEL_AWAIT if TOP_LEVEL_AWAIT.get() else 0


def compile_error(code: str | bytes | ast.Module) -> str | None:
    """CPython's complaint when it will not compile `code` (text or a parsed tree), else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's code may warn; that is not ours to print
            compile(code, "<semfix>", "exec", flags=_flags(), dont_inherit=True)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"{type(error).__name__}: {error}"
    return None


def refuse_uncompilable(code: str | bytes | ast.Module, parsed: ast.Module | None = None) -> None:
    """SourceError when CPython will not compile `code`: semfix fixes nothing in such a file,
    and `check` says so as `fix` does, instead of calling its findings fixable. `parsed`, the
    tree `ast.parse` made of `code` and nothing changed since, is compiled instead: the same
    verdict and message (tests/test_compiles.py), without parsing the text a second time."""
    error = compile_error(code) if parsed is None else _parsed_compile_error(code, parsed)
    if error is not None:
        raise SourceError(f"CPython cannot compile this file ({error})")


def prove_compiles(old: str | bytes | ast.Module, new: str | bytes | ast.Module, fail: type[Exception]) -> None:
    """Raise `fail` when `new` does not compile although `old` did; SourceError when `old` did
    not compile either: such a file was never valid Python, and semfix fixes none (as a parse
    error)."""
    error = compile_error(new)
    if error is None:
        return
    refuse_uncompilable(old)
    raise fail(f"the rewritten source does not compile ({error}); file left unchanged")


def _parsed_compile_error(code: str | bytes | ast.Module, parsed: ast.Module) -> str | None:
    """`compile_error(code)` from its tree. CPython reads a tree's `__future__` imports from the
    tree, as it does a text's, and its errors carry the nodes' positions either way; but it
    converts a tree back to its C form under Python's recursion limit, lower than its parser's:
    a tree too deep for that (an expression nested some 1,000 deep) is compiled from the text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(parsed, "<semfix>", "exec", flags=_flags(), dont_inherit=True)
    except SyntaxError as error:
        return f"line {error.lineno}: {error.msg}"
    except (ValueError, RecursionError, MemoryError):
        return compile_error(code)
    return None
