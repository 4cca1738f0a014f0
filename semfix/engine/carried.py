"""SEM003: `v = X[...]` whose `v` only carries the read to semaphore arguments.

A mixin of the engine: one plan per assignment, shared by its uses; either every use is
rewritten to pass `X` and the assignment goes with its line, or nothing is fixed.
"""

from __future__ import annotations

import ast
import copy
import re
import tokenize
from dataclasses import dataclass
from typing import TYPE_CHECKING

from semfix import messages
from semfix.engine.nodes import (
    Rewrite,
    alone_on_its_lines,
    enclosing,
    first_line,
    is_at,
    tokens,
)
from semfix.engine.scopes import Access, Binding, Scope
from semfix.text import suppressed

if TYPE_CHECKING:
    from semfix.engine.nodes import Text
    from semfix.settings import Settings
    from semfix.text import Suppressions

_UNDECIDED = object()


@dataclass(eq=False)
class Carried:
    """`v = X[...]` whose `v` reaches semaphore arguments (SEM003)."""

    assign: ast.Assign
    ref: ast.expr  # X, the Ref the value was read from
    uses: list[ast.Name]
    body: list[ast.stmt] | None  # the statement list holding the assignment
    blocker: str | None  # why the rewrite is not safe; None when it is
    decision: object = _UNDECIDED


# After a statement alone on its lines: an optional `;`, then a comment.
_SOLE_END = re.compile(r"[ \t]*(?:;[ \t]*)?(?:#[^\r\n]*)?(?:\r\n?|\n)?\Z")


def _body_of(tree: ast.Module, statement: ast.stmt) -> list[ast.stmt] | None:
    """The statement list that holds `statement` itself; None if it shares a line with a
    statement that holds it (`if x: v = ...`)."""
    chain = enclosing(tree, statement.lineno, {})
    if not chain or chain[-1] is not statement:
        return None
    owner: ast.AST = chain[-2] if len(chain) > 1 else tree
    lists = [getattr(owner, name, None) for name in ("body", "orelse", "finalbody")]
    lists += [clause.body for clause in (*getattr(owner, "handlers", ()), *getattr(owner, "cases", ()))]
    return next((body for body in lists if isinstance(body, list) and any(s is statement for s in body)), None)


class CarriedReads:
    """The engine's SEM003 logic; `Engine` holds the state, the evidence (`unstable`, the
    accesses) and the reporting (`_report`) it uses."""

    text: Text
    settings: Settings
    suppressions: Suppressions
    semaphore_args: set[int]
    plans: dict[int, Carried | None]
    rewrites: list[Rewrite]
    removals: list[tuple[list[ast.stmt], ast.stmt, tuple[int, int, str]]]

    def _carried(self, call: ast.Call, use: ast.Name, bindings: list[Binding]) -> bool:
        """`v = X[...]` then `f(v)`: pass `X`, and drop the assignment with its line. False when
        no read plans for `v` (the other rules then look at it)."""
        plan = next((p for b in reversed(bindings) if b.kind == "read" and (p := self._plan(b)) is not None), None)
        if plan is None:
            return False
        ref_text = self.text.of(plan.ref)
        decision = self._decide(plan)
        message = (
            f"`{use.id}` holds a value read from the semaphore Ref at line {plan.assign.lineno}; "
            f"pass the Ref `{messages.one_line(ref_text)}`"
        )
        if plan.blocker is not None:
            self._report("SEM003", use, f"{message} (not fixed: {plan.blocker})", None)
        elif decision is None:
            self._report("SEM003", use, f"{message} (not fixed: a use or the assignment is silenced)", None)
        elif self._report("SEM003", use, message, ref_text) and decision:
            start, end = self.text.start(use)[2], self.text.end(use)[2]
            self.rewrites.append(Rewrite(call, use, copy.deepcopy(plan.ref), [(start, end, ref_text)]))
        return True

    def _plan(self, binding: Binding) -> Carried | None:
        """The plan for one `v = X[...]`, shared by its uses; None if no semaphore argument uses it."""
        if id(binding) not in self.plans:
            tracking = self._tracking()
            assign: ast.Assign = binding.node  # type: ignore[assignment]
            scope, name = tracking.scope_of_read[id(assign)], assign.targets[0].id  # type: ignore[attr-defined]
            references = [] if name in scope.declared else tracking.references(name, scope)
            end = (assign.end_lineno, assign.end_col_offset)
            uses = [  # as libcst links them: a read before the assignment, in its scope, is not its use
                a.name
                for a in references
                if id(a.name) in self.semaphore_args and (a.scope is not scope or (a.name.lineno, a.name.col_offset) >= end)
            ]
            plan = None
            if uses:
                body = _body_of(tracking.tree, assign)
                plan = Carried(assign, assign.value.value, uses, body, None)  # type: ignore[attr-defined]
                plan.blocker = self._blocker(plan, scope, name, references)
            self.plans[id(binding)] = plan
        return self.plans[id(binding)]

    def _blocker(self, plan: Carried, scope: Scope, name: str, references: list[Access]) -> str | None:
        """Why the rewrite is not safe; None when it is."""
        assign, ref = plan.assign, plan.ref
        if len(scope.bindings[name]) > 1:
            return f"`{name}` is assigned more than once"
        if len(plan.uses) != len(references):
            return f"`{name}` is also used for something else"
        if any(access.scope is not scope for access in references):
            return f"`{name}` is used in a nested scope"
        if plan.body is None or not alone_on_its_lines(assign, self.text, _SOLE_END):
            return "the assignment shares its line with other statements"
        if self._commented(assign, plan.body):
            return "a comment on the assignment would be lost"
        if any(isinstance(n, ast.Call) for n in ast.walk(ref)) or not isinstance(ref, (ast.Name, ast.Attribute, ast.Subscript)):
            return "the Ref expression is not a plain name or view"
        if isinstance(ref, ast.Subscript) and not is_at(ref.value):
            return "the Ref expression reads an element"
        rebound = self.unstable(ref, scope)
        if rebound is not None:
            return rebound
        first, last = plan.body[0], plan.body[-1]
        low, high = (first_line(first), first.col_offset), (last.end_lineno, last.end_col_offset)
        if any(not low <= (u.lineno, u.col_offset) <= high for u in plan.uses):
            return f"`{name}` is assigned conditionally"
        return None

    def _commented(self, assign: ast.Assign, body: list[ast.stmt]) -> bool:
        """A comment on the assignment's lines, or on the lines just above it that libcst
        gives it (those not indented deeper than it after a block, which that block keeps)."""
        text, starts = self.text.text, self.text.starts
        end = starts[assign.end_lineno] if assign.end_lineno < len(starts) else len(text)  # type: ignore[operator]
        own = text[starts[assign.lineno - 1] : end]
        if "#" in own and any(t.type == tokenize.COMMENT for t in tokens(own)):
            return True
        index = next(i for i, s in enumerate(body) if s is assign)
        previous = body[index - 1] if index else None
        floor = previous.end_lineno if previous is not None else 0
        footer = previous is not None and hasattr(previous, "body")  # a block keeps deeper comments
        above: list[int] = []  # the indentation of each comment line just above, up to code
        for number in range(assign.lineno - 1, floor, -1):  # type: ignore[operator]
            line = self.text.line(number)
            stripped = line.lstrip(" \t")
            if stripped.startswith("#"):
                above.append(len(line) - len(stripped))
            elif stripped.strip():
                break
        for indent in reversed(above):  # from the top: a block keeps the deeper ones
            footer = footer and indent > assign.col_offset
            if not footer:
                return True
        return False

    def _decide(self, plan: Carried) -> bool | None:
        """Decided once per assignment: all its uses are rewritten and it is removed, or none.
        True: rewrite; False: report only; None: the rule is off or silenced here."""
        if plan.decision is not _UNDECIDED:
            return plan.decision  # type: ignore[return-value]
        plan.decision = False
        if plan.blocker is None:
            lines = {u.lineno for u in plan.uses} | {plan.assign.lineno}
            if "SEM003" not in self.settings.enabled or (
                self.suppressions and suppressed(self.suppressions, "SEM003", lines)
            ):
                plan.decision = None
                return None
            assign, starts, text = plan.assign, self.text.starts, self.text.text
            first, last = assign.lineno, assign.end_lineno
            start = (first, 0, starts[first - 1])
            if last >= len(starts):  # type: ignore[operator]  # the last line, without a line break
                end = (last, len(text) - starts[last - 1], len(text))  # type: ignore[index]
            else:
                end = (last + 1, 0, starts[last])  # type: ignore[operator]
            message = f"`{messages.one_line(self.text.of(assign))}` only carried the read to semaphore arguments; removed with them"
            applied = self._report("SEM003", assign, message, "", span=(start, end))  # type: ignore[arg-type]
            if applied:
                self.removals.append((plan.body, assign, (start[2], end[2], "")))  # type: ignore[arg-type]
            plan.decision = bool(applied)
        return plan.decision  # type: ignore[return-value]
