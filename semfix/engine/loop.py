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
import itertools

from semfix.analysis.context import Context
from semfix.catalog import SemParam
from semfix.rules import dispatch


class Engine(Context):
    """A Context that runs the rules over its file."""

    def run(self) -> None:
        self.gather()
        calls = [(call, op) for call in self.scopes.relevant_calls() if (op := self.operation(call)) is not None]
        calls.sort(key=lambda item: (item[0].end_lineno, item[0].end_col_offset))
        semaphores = [_arguments(operation.sem_params, call) for call, operation in calls]
        buffers = [_arguments(operation.buffer_params, call) for call, operation in calls]
        self.semaphore_args = {id(a) for found in semaphores for a in found}
        self.buffer_args = {id(a) for found in buffers for a in found}
        for call, operation in calls:  # where a DMA copies from, and where it copies into
            for param in operation.buffer_params:
                (self.sources if param.name.startswith("src") else self.destinations).extend(_arguments((param,), call))
        arguments = [(call, [*found, *more]) for (call, _), found, more in zip(calls, semaphores, buffers)]
        state = dispatch.start(self)
        for (call, operation), (_, found) in zip(calls, arguments):
            dispatch.before_call(self, state, call)
            scope = self.scopes.scope_of[id(call)]
            for argument in sorted(found, key=lambda a: (a.lineno, a.col_offset)):
                if id(argument) in self.buffer_args:
                    dispatch.buffer(self, call, argument, scope, operation.partial)
                else:
                    dispatch.semaphore(self, call, argument, scope)
            given = [(param, a) for param in operation.sem_params for a in _arguments((param,), call)]
            dispatch.after_arguments(self, call, operation, scope, given)
        dispatch.finish(self, state)
        starts = sorted(self.text.start(call)[2] for call, _ in calls)
        for low, high in ((self.text.start(a)[2], self.text.end(a)[2]) for _, found in arguments for a in found):
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:  # the fixes would nest: none is made
                self.hold("a semaphore or DMA call inside one of their arguments")
                return


def _arguments(params: tuple[SemParam, ...], call: ast.Call) -> list[ast.expr]:
    """The call's arguments for `params` in source order: by position (up to a `*args`) and by keyword."""
    positions, names = {p.position for p in params}, {p.name for p in params}
    positional = itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args)
    found = [a for i, a in enumerate(positional) if i in positions] + [k.value for k in call.keywords if k.arg in names]
    return sorted(found, key=lambda a: (a.lineno, a.col_offset))
