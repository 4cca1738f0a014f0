"""Which branches of a def a call of it runs: `Path`, where the def tests a parameter for None.

A helper often takes an optional semaphore and branches on it (`def _emit(src, dst, sem=None):
if sem is None: dst[...] = src` `else: pltpu.make_async_copy(src, dst, sem)...`). Read whole, its
`src` is a value on one path and a DMA source on the other, so no call of it is a catalog call. A
call decides the test where it gives the parameter None (or leaves it to a default of None), or a
value that cannot be None (resolution.py's `not_none`): the branch it does not take is dead for
that call, and the test itself no use of the parameter (it reads neither a Ref nor a value).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import NamedTuple

Position = tuple[int, int]


class Path(NamedTuple):
    """What one call of a def does not run: the spans of the branches it does not take, and the
    Names its decided tests read (id() of each)."""

    dead: tuple[tuple[Position, Position], ...] = ()
    tests: frozenset[int] = frozenset()

    def runs(self, node: ast.expr | ast.stmt) -> bool:
        """Does the call run `node` (a call or a Name of the def)?"""
        if not self.dead:  # `EVERY`: most calls decide nothing
            return True
        at = (node.lineno, node.col_offset)
        return not any(start <= at < end for start, end in self.dead)

    def uses(self, name: ast.Name) -> bool:
        """Is the Name a use of what the call gave: run, and no decided test's?"""
        return id(name) not in self.tests and self.runs(name)


EVERY = Path()  # a call that decides nothing runs every branch


def none_tests(function: ast.FunctionDef) -> Iterator[tuple[ast.If, ast.Name, bool]]:
    """The def's own `if P is None:` and `if P is not None:` statements (`None is P` too; not
    those of a def or class inside it): each with the Name it tests, and whether the body runs
    where P is None. Only statements are walked (an `if` is one): a walk of every node of each
    def a file calls was 7% of a check of real kernels."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in _BLOCKS:  # `handlers` and `cases` hold nodes whose `body` is a block
            pending.extend(getattr(node, block, ()))
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in (ast.Is, ast.IsNot)):
            continue
        sides = (test.left, test.comparators[0])
        name = next((s for s in sides if isinstance(s, ast.Name)), None)
        if name is not None and any(isinstance(s, ast.Constant) and s.value is None for s in sides):
            assert isinstance(node, ast.If)  # the test was read off one
            yield node, name, isinstance(test.ops[0], ast.Is)


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def given(function: ast.FunctionDef, call: ast.Call, name: str) -> ast.expr | None:
    """What the call gives the def's parameter `name`: its argument, or its default (a constant)
    where the call leaves it; None where that is not known (a `*args` or `**kwargs` at the call)."""
    arguments = function.args
    ordered = [*arguments.posonlyargs, *arguments.args]
    position = next((i for i, p in enumerate(ordered) if p.arg == name), None)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if position is not None and position < len(call.args):
        return call.args[position]
    if (keyword := next((k for k in call.keywords if k.arg == name), None)) is not None:
        return keyword.value
    defaults = [
        *zip(reversed(ordered), reversed(arguments.defaults)),
        *zip(arguments.kwonlyargs, arguments.kw_defaults),
    ]
    default = next((d for p, d in defaults if p.arg == name), None)
    return default if isinstance(default, ast.Constant) else None  # another is evaluated where the def is


def path(
    function: ast.FunctionDef,
    call: ast.Call,
    tested: list[tuple[ast.If, ast.Name, bool]],
    parameter: Callable[[ast.Name], bool],
    not_none: Callable[[ast.expr], bool],
) -> Path:
    """The branches of the def's None tests (`tested`: `none_tests`) the call does not take: for
    each test of a Name that is a parameter bound once (`parameter`), where the call gives it
    None or (`not_none`) a value that cannot be None."""
    dead: list[tuple[Position, Position]] = []
    tests: set[int] = set()
    for statement, name, body_if_none in tested:
        value = given(function, call, name.id) if parameter(name) else None
        if value is None:
            continue
        none = isinstance(value, ast.Constant) and value.value is None
        if not none and not not_none(value):
            continue
        skipped = statement.orelse if none == body_if_none else statement.body
        tests.add(id(name))
        if skipped:
            first, last = skipped[0], skipped[-1]
            dead.append(((first.lineno, first.col_offset), (last.end_lineno or 0, last.end_col_offset or 0)))
    return Path(tuple(sorted(dead)), frozenset(tests)) if tests else EVERY
