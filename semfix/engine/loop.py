"""The engine's loop: each catalog call of one parsed file through the rules, in libcst's order.

`Engine` resolves the calls to catalog operations and gathers the evidence (its `Context`),
then, call by call, hands each semaphore argument, each DMA buffer and the call itself to the
rules' entry points (semfix/rules/dispatch.py, which decides their order). The rules record
findings and declare their fixes in the Context, which semfix/engine/run.py applies and
semfix/engine/proof.py checks. Nothing here names a rule.
"""

from __future__ import annotations

import ast
import bisect

from semfix.analysis.context import Context
from semfix.analysis.nodes import branches
from semfix.analysis.resolution import bound_arguments
from semfix.catalog import SemParam
from semfix.rules import dispatch


class Engine(Context):
    """A Context that runs the rules over its file. For the incremental check (incremental.py)
    it keeps which call each finding was made at: `calls_ended`, each call's end in the order
    the calls are handed on, and `emitted`, how many findings there were after each (and
    `before`, before the first); `nested` when the nesting check held every fix."""

    calls_ended: list[tuple[int, int]]
    emitted: list[int]
    before: int = 0
    nested: bool = False

    def run(self) -> None:
        self.gather()
        calls = [(call, op) for call in self.catalog_calls() if (op := self.operation(call)) is not None]
        calls.sort(key=lambda item: (item[0].end_lineno, item[0].end_col_offset))
        semaphores = [bound(operation.sem_params, call) for call, operation in calls]
        buffers = [bound(operation.buffer_params, call) for call, operation in calls]
        self.semaphore_args = {id(a) for found in semaphores for _, a in found}
        self.buffer_args = {id(a) for found in buffers for _, a in found}
        for (_, operation), found in zip(calls, buffers):  # where a DMA copies from, and where it copies into
            for param in operation.buffer_params:
                into = self.sources if (param.via or ("", param.name))[1].startswith("src") else self.destinations
                into.extend(a for p, a in found if p is param)
        state = dispatch.start(self)
        self.before, self.emitted = len(self.findings), []
        self.calls_ended = [(call.end_lineno or 0, call.end_col_offset or 0) for call, _ in calls]
        for (call, operation), given, more in zip(calls, semaphores, buffers):
            dispatch.before_call(self, state, call, operation)
            scope = self.scopes.scope_of[id(call)]
            for _, argument in sorted([*given, *more], key=lambda pair: _place(pair[1])):
                if id(argument) in self.buffer_args:
                    dispatch.buffer(self, call, argument, scope, operation.partial)
                else:
                    dispatch.semaphore(self, call, argument, scope)
            in_order = [(param, a) for param in operation.sem_params for p, a in given if p is param]
            dispatch.after_arguments(self, call, operation, scope, in_order)
            self.emitted.append(len(self.findings))
        dispatch.finish(self, state)
        # (line, byte column) orders positions as offsets do: no need to count characters
        starts = sorted(_place(call) for call, _ in calls)
        every = (a for pairs in (*semaphores, *buffers) for _, a in pairs)
        for low, high in ((_place(a), (a.end_lineno, a.end_col_offset)) for a in every):
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:  # the fixes would nest: none is made
                self.hold("a semaphore or DMA call inside one of their arguments")
                self.nested = True
                return


def bound(params: tuple[SemParam, ...], call: ast.Call) -> list[tuple[SemParam, ast.expr]]:
    """The call's arguments for `params`, each with its parameter, in source order: by position
    (up to a `*args`) and by keyword; each branch of a conditional expression as one."""
    found = [(param, branch) for param, argument in bound_arguments(params, call) for branch in branches(argument)]
    return sorted(found, key=lambda pair: _place(pair[1]))


def arguments(params: tuple[SemParam, ...], call: ast.Call) -> list[ast.expr]:
    """The call's arguments for `params`, in source order (see `bound`)."""
    return [argument for _, argument in bound(params, call)]


def _place(node: ast.expr) -> tuple[int, int]:
    return node.lineno, node.col_offset
