"""What a rule sees of one parsed file: `Context`.

The rules (semfix/rules/semNNN.py) are functions over a Context. It gives them the file's
`text` and `settings`; the evidence about its Refs (`kind`, `key`, `proofs`, `unstable`, from
evidence.py); `report`, which records a finding unless its rule is off or silenced there and
says whether its fix is accepted; `bracket` and `cut`, where a subscript's `[` is and whether
its brackets can be dropped without a comment; `holding`, under which fixes are only
reported; and the lists a fix declares itself in (`make`, one `Decision` each), which the
driver applies and proves.
"""

from __future__ import annotations

import ast
import re
import tokenize
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Literal

from semfix.analysis import views
from semfix.analysis.evidence import Evidence
from semfix.analysis.fixes import Decision
from semfix.analysis.nodes import Located, Rewrite, Text, element_read, end_of, is_at, read_target, tokens
from semfix.analysis.paths import Path
from semfix.analysis.resolution import bound_arguments
from semfix.analysis.suppressions import Suppressions
from semfix.catalog import Operation, SemParam
from semfix.findings import Finding, Fix
from semfix.messages import UNSAFE_SUFFIX
from semfix.patterns import compiled
from semfix.rewrite.text import line_starts

if TYPE_CHECKING:
    from semfix.analysis.scopes import Scope, ScopeBuilder
    from semfix.settings import Allocated, Passed, Place, Settings

# From the end of a subscript's value to its `[`: the value's closing parentheses, then what
# libcst calls the whitespace after the value.
_AFTER_VALUE = compiled(r"(?:(?:[ \t\f\r\n\\]|#[^\r\n]*)*\))*(?P<after>(?:[ \t\f\r\n\\]|#[^\r\n]*)*)\[")

Span = tuple[tuple[int, int, int], tuple[int, int, int]]  # (line, 0-based column, offset), twice


class Context(Evidence):
    """One file's evidence, and the services and results the rules share."""

    def __init__(self, text: Text, scopes: ScopeBuilder, settings: Settings) -> None:
        super().__init__(text, scopes)
        self.settings = settings
        self.aliases = dict(settings.read_through.aliases)
        self.foreign = {name: _operation(name, passed) for name, passed in settings.read_through.helpers}
        self.launched = settings.launched_by_run
        self.findings: list[Finding] = []
        self.fixes: list[Decision] = []  # the accepted fixes, one per decision
        self.tree: ast.Module | None = None  # set for a rule that looks at every reference (Rule.needs_tree)
        self.semaphore_args: set[int] = set()  # id() of every semaphore argument of a catalog call
        self.sources: list[ast.expr] = []  # the DMA buffer arguments a copy reads
        self.destinations: list[ast.expr] = []  # and those it writes
        self.buffer_args: set[int] = set()  # their id()s
        self.memo: dict[object, object] = {}  # what a rule works out once, under a key of its own
        self.held: str | None = None  # while set, findings are reported with this reason, not fixed
        self.suppressions = Suppressions(text.text)
        self._comments: dict[int, list[int]] = {}  # by call: where each comment in it starts

    def viewed_read(
        self, node: ast.expr, scope: Scope
    ) -> tuple[ast.Subscript, tuple[ast.expr, ...], Scope, bool] | None:
        """`views.viewed_read`, where a value a local holds (`row = sems[0]`, viewed as
        `row.at[1]`) is handed out once: its one finding is at the read, for all its views."""
        viewed = views.viewed_read(node, scope)
        if viewed is None or not viewed[3]:
            return viewed
        if ("viewed", id(viewed[0])) in self.memo:
            return None
        self.memo["viewed", id(viewed[0])] = True
        return viewed

    def given_to_views(
        self, node: ast.expr, scope: Scope
    ) -> list[tuple[ast.Call, ast.Subscript, tuple[ast.expr, ...], Scope]]:
        """`sem.at[slot]`, a semaphore argument in a def of the file that views its parameter
        `sem`, where a call of the def gives `sem` a read (`helper(sems[0], 1)`, `helper(sem[...])`:
        a value, whose `.at` is jnp's): each such call (whose `func` names the def), with the
        read, the indices the def's view adds and the call's scope. Only for a parameter bound
        once, of an undecorated def bound once, whose every use on the path the call takes
        (`taken`: `if slot is None:` decided by its arguments) is such a view of one number of
        indices, with no `*args` before it at the call."""
        views: list[ast.Subscript] = []
        while isinstance(node, ast.Subscript) and is_at(node.value):
            views.insert(0, node)
            node = node.value.value
        if not views or not isinstance(node, ast.Name):
            return []
        owner, bindings = scope.lookup(node.id)
        if owner is None or len(bindings) != 1 or bindings[0].kind != "param" or bindings[0].declared:
            return []
        function, parameter = owner.node, bindings[0].node
        if not isinstance(function, ast.FunctionDef) or not isinstance(parameter, ast.arg) or function.decorator_list:
            return []
        ordered = [*function.args.posonlyargs, *function.args.args]
        position = next((i for i, p in enumerate(ordered) if p is parameter), None)
        found = []
        for call in self._calls_by_name().get(function.name, ()):
            given = [k.value for k in call.keywords if k.arg == parameter.arg]
            before = call.args[: position + 1] if position is not None else []
            if not given and position is not None and len(call.args) > position:
                given = [] if any(isinstance(a, ast.Starred) for a in before) else [call.args[position]]
            if len(given) == 1 and (element_read(given[0]) or read_target(given[0]) is not None):
                site = self.scopes.scope_of[id(call)]
                _, defs = site.lookup(function.name)
                taken = self.branch_taken(function, call)
                if len(defs) == 1 and defs[0].node is function and not defs[0].declared and taken.runs(node):
                    levels = self._viewed_levels(function, parameter, node.id, taken)
                    if levels is not None:
                        assert isinstance(given[0], ast.Subscript)  # a read is one
                        found.append((call, given[0], levels, site))
        return found

    def _calls_by_name(self) -> dict[str, list[ast.Call]]:
        """The file's calls of a plain name, by that name (worked out once)."""
        if "calls by name" not in self.memo:
            by_name: dict[str, list[ast.Call]] = {}
            for call in self.scopes.calls:
                if isinstance(call.func, ast.Name):
                    by_name.setdefault(call.func.id, []).append(call)
            self.memo["calls by name"] = by_name
        found = self.memo["calls by name"]
        assert isinstance(found, dict)  # what this method keeps under the key, above
        return found

    def _viewed_levels(
        self, function: ast.FunctionDef, parameter: ast.arg, name: str, taken: Path
    ) -> tuple[ast.expr, ...] | None:
        """The indices every use of the parameter on the path `taken` views it with, each a
        semaphore argument of a catalog call (`sem.at[slot]`); None where a use is anything
        else, or the numbers differ."""
        key = ("viewed levels", id(parameter), taken)
        if key not in self.memo:
            seen: list[tuple[ast.expr, ...]] = []
            for call in filter(taken.runs, self.catalog_calls()):
                operation, site = self.operation(call), self.scopes.scope_of[id(call)]
                for _, argument in bound_arguments(operation.sem_params if operation else (), call):
                    view = views.unview(argument, site)
                    if isinstance(view.base, ast.Name) and view.base.id == name and view.levels and view.counted:
                        _, bindings = view.scope.lookup(name)
                        if len(bindings) == 1 and bindings[0].node is parameter:
                            seen.append(tuple(i for level in view.levels for i in level))
            uses = [n for n in self.names_in(function).get(name, []) if taken.uses(n)]
            one = len(seen) == len(uses) and len({len(levels) for levels in seen}) == 1
            slices = any(self.keeps_dimension(i, self.scopes.bodies[id(function)]) for levels in seen for i in levels)
            self.memo[key] = seen[0] if one and not slices else None
        found = self.memo[key]
        return found if isinstance(found, tuple) else None

    def off(self, code: str, lines: Iterable[int]) -> bool:
        """Is the rule off, or silenced by a comment on one of `lines` or for the whole file?"""
        return code not in self.settings.enabled or self.suppressions.silence(code, lines)

    def report(
        self,
        code: str,
        node: Located,
        message: str,
        replacement: str | None,
        *,
        safe: bool = True,
        span: Span | None = None,
        made: bool = True,
        related: Iterable[Located | int] = (),
        doubt: Literal["rank", "value", "kind"] | None = None,
    ) -> bool | None:
        """Record a finding (at `node`, or at `span`); whether its fix is accepted, None if the
        rule is off or silenced there. `made=False`: the fix is shown but not made (its decision was not).
        `related`: the evidence it follows from, as nodes or lines (`Finding.related` holds their lines).
        `doubt`: why an unsafe fix is unsafe (`Fix.doubt`)."""
        (line, column, start), (end_line, end_column, end) = span or (self.text.start(node), self.text.end(node))
        if self.off(code, (line, end_line)):
            return None
        if self.held is not None and replacement is not None:
            message, replacement = f"{message} (not fixed: {self.held})", None
        place = (line, column + 1, end_line, end_column + 1)
        accepted = made and replacement is not None and self.settings.accepts(place, safe)
        if replacement is not None and not (safe or self.settings.unsafe_fixes):
            message += UNSAFE_SUFFIX
        fix = None if replacement is None else Fix(replacement, "safe" if safe else "unsafe", doubt=doubt)
        original = self.text.text[start:end]
        lines = {n for e in related for n in ((e,) if isinstance(e, int) else range(e.lineno, end_of(e)[0] + 1))}
        self.findings.append(Finding(code, *place, message, original, fix, accepted, related=tuple(sorted(lines))))
        return accepted

    def allocation(self, proof: ast.expr | Allocated) -> tuple[int | str, str, list[Located]]:
        """Where an allocation that proves a kind or rank is written (its line here, or another
        module's `file:line`: `Launch`), its text, and the evidence a finding follows (this
        file's lines only)."""
        if isinstance(proof, ast.expr):
            return proof.lineno, self.text.of(proof), [proof]
        return proof.where, proof.text, []

    def whole_lines(self, statement: ast.stmt) -> Span:
        """A statement's lines, from its first line's start through its line break: what a
        finding whose fix removes the statement replaces."""
        text, end = self.text, self.text.after(end_of(statement)[0])
        end_line = text.line_of(end)
        return (statement.lineno, 0, text.starts[statement.lineno - 1]), (
            end_line,
            end - text.starts[end_line - 1],
            end,
        )

    def place(self, node: Located) -> Place:
        """Where a finding at `node` is: (line, column, end line, end column), 1-based."""
        (line, column, _), (end_line, end_column, _) = self.text.start(node), self.text.end(node)
        return line, column + 1, end_line, end_column + 1

    def accepts(self, code: str, node: Located, safe: bool, finding: Located | None = None) -> bool:
        """Would a fix at `node` be made: its rule on and not silenced there, its safety
        allowed, and its finding (at `finding`, when it joins another's) chosen when the
        settings choose?"""
        lines = (node.lineno, node.end_lineno or node.lineno)
        return not self.off(code, lines) and self.settings.accepts(self.place(finding or node), safe)

    @contextmanager
    def holding(self, reason: str | None) -> Iterator[None]:
        """Fixes found meanwhile are reported with `reason`, not made (an outer reason wins)."""
        held, self.held = self.held, self.held or reason
        try:
            yield
        finally:
            self.held = held

    def make(self, decision: Decision) -> Decision:
        """Declare an accepted fix: by default, of the finding just reported."""
        if not decision.findings:
            decision = Decision(
                decision.rule, decision.edits, decision.changes, decision.settles, (len(self.findings) - 1,)
            )
        self.fixes.append(decision)
        return decision

    def join(self, decision: Decision, rewrite: Rewrite) -> Decision:
        """Add an argument's rewrite, for the finding just reported, to a decision already
        declared (a carried read's plan)."""
        index = next(i for i, made in enumerate(self.fixes) if made is decision)
        self.fixes[index] = joined = decision.joined(rewrite, len(self.findings) - 1)
        return joined

    @contextmanager
    def trial(self, enabled: frozenset[str]) -> Iterator[tuple[list[Finding], list[Decision]]]:
        """What the rules decide meanwhile with the `enabled` rules on and safe fixes only, with
        nothing silenced, held or chosen: the findings and fixes made are handed over, not
        kept. A carried read gets the verdict its direct form gets this way, from the very same rules."""
        kept = (self.settings, self.suppressions, self.held, self.findings, self.fixes)
        findings: list[Finding] = []
        fixes: list[Decision] = []
        trial = type(self.settings)(enabled=enabled)  # every other setting at its default
        self.settings, self.suppressions, self.held = trial, Suppressions(""), None
        self.findings, self.fixes = findings, fixes
        try:
            yield findings, fixes
        finally:
            self.settings, self.suppressions, self.held, self.findings, self.fixes = kept

    def hold(self, reason: str, rule: str | None = None) -> None:
        """Report without fixing the findings made so far of `rule` (a rule whose import edits are
        unsure), or of every rule."""
        self.findings = [
            replace(f, message=f"{f.message} (not fixed: {reason})", fix=None, applied=False)
            if f.fix is not None and rule in (None, f.rule)
            else f
            for f in self.findings
        ]
        self.fixes = [fix for fix in self.fixes if rule is not None and fix.rule != rule]

    def bracket(self, subscript: ast.Subscript) -> re.Match[str] | None:
        """From the end of the subscript's value to just past its `[`: the value's closing
        parentheses, then the blanks, line breaks and comments before `[` (group "after").
        Only those stand there in any source known; None for text the pattern does not know,
        which is then reported, not cut."""
        return _AFTER_VALUE.match(self.text.text, self.text.end(subscript.value)[2])

    def cut(self, subscript: ast.Subscript, call: ast.Call) -> tuple[int, int] | None:
        """(where the text to drop starts, just past `]`): the subscript's brackets with the
        blanks and line breaks before them; None where a comment would go with them."""
        end, gap = self.text.end(subscript)[2], self.bracket(subscript)
        if gap is None or any(gap.start("after") <= c < end for c in self.comments(call)):
            return None
        return gap.start("after"), end

    def comments(self, call: ast.Call) -> list[int]:
        """Where each comment inside the call starts; the tokenizer runs only if it holds a `#`."""
        if id(call) not in self._comments:
            start, end = self.text.start(call)[2], self.text.end(call)[2]
            source = self.text.text[start:end]
            found: list[int] = []
            if "#" in source:
                starts = line_starts(source)
                found = [
                    start + starts[t.start[0] - 1] + t.start[1] for t in tokens(source) if t.type == tokenize.COMMENT
                ]
            self._comments[id(call)] = found
        return self._comments[id(call)]


def _operation(name: str, passed: tuple[Passed, ...]) -> Operation:
    """A helper of another module of the run (`ReadThrough.helpers`) as a helper of the file is."""
    params = [
        [SemParam(p.name, p.position, via=(p.function, p.parameter)) for p in passed if p.buffer is buffer]
        for buffer in (False, True)
    ]
    return Operation(name.rpartition(".")[2], tuple(params[0]), tuple(params[1]))
