"""The engine: one parsed file, each semaphore argument through the rules, in libcst's order.

`Engine` resolves the calls to catalog operations (its `Evidence` mixin), then decides, per
semaphore argument, SEM001 (a value read), SEM002 (an element read), SEM004 (a non-scalar),
SEM003 (a read carried through a variable, its `CarriedReads` mixin) and the walrus around
them, SEM101 (semfix/engine/migrations.py) and SEM102; it records findings and the text edits
of each fix with the tree the edit declares (`Rewrite`), which semfix/engine/proof.py checks.
"""

from __future__ import annotations

import ast
import bisect
import copy
import re
import tokenize
from dataclasses import replace

from semfix import messages
from semfix.catalog import Operation
from semfix.engine import migrations
from semfix.engine.carried import Carried, CarriedReads
from semfix.engine.evidence import Evidence, Kind
from semfix.engine.nodes import (
    LINE_BREAK,
    Rewrite,
    Text,
    element_read,
    has_slice,
    read_target,
    source_order,
    tokens,
)
from semfix.engine.scopes import Scope, ScopeBuilder, Steps
from semfix.findings import Finding, decide
from semfix.settings import Settings
from semfix.text import (
    Suppressions,
    apply_edits,
    line_starts,
    note_suppression,
    suppressed,
)

_IGNORE_TEXT = re.compile(r"#\s*semfix:\s*ignore")
# From the end of a subscript's value to its `[`: the value's closing parentheses, then what
# libcst calls the whitespace after the value.
_AFTER_VALUE = re.compile(r"(?:(?:[ \t\f\r\n\\]|#[^\r\n]*)*\))*(?P<after>(?:[ \t\f\r\n\\]|#[^\r\n]*)*)\[")
_SIMPLE_WHITESPACE = re.compile(r"(?:[ \t\f]|\\(?:\r\n?|\n))*\Z")  # libcst's SimpleWhitespace
_OPEN_PAREN = re.compile(r"(?:[ \t\f\r\n\\)]|#[^\r\n]*)*\(")
_CLOSE_PAREN = re.compile(r"(?:[ \t\f\r\n\\]|#[^\r\n]*)*\)")


class Engine(Evidence, CarriedReads):
    """Analysis of one parsed file, mirroring the libcst transformer's rules and order."""

    def __init__(self, text: Text, scopes: ScopeBuilder, settings: Settings) -> None:
        self.text = text
        self.settings = settings
        self.scopes = scopes
        self.param_kinds: dict[int, Kind] = {}
        self.proven: set[object] | None = None
        self.operations: dict[int, Operation | None] = {}
        self.findings: list[Finding] = []
        self.rewrites: list[Rewrite] = []
        self.suppressions = _suppressions(text.text)
        self.comments: dict[int, list[int]] = {}  # by call: where each comment in it starts
        self.tree: ast.Module | None = None  # set for SEM101, which looks at every reference
        self.pallas_alias: str | None = None
        self.migrated: list[ast.Name | ast.Attribute] = []  # SEM101's rewritten references
        self.proof_sites: dict[object, list[tuple[ast.expr, Scope]]] = {}  # attribute-chain proofs
        self.semaphore_args: set[int] = set()
        self.held: str | None = None  # while set, findings are reported with this reason, not fixed
        self.plans: dict[int, Carried | None] = {}  # by the `v = X[...]` binding
        self.removals: list[tuple[list[ast.stmt], ast.stmt, tuple[int, int, str]]] = []
        self._changes: dict[int, list[tuple[str, Steps, ast.expr]]] = {}
        self.import_edits: list[tuple[int, int, str]] = []  # and the import edits they need
        self.imports: migrations.ImportChanges | None = None
        self.unsure: list[str] = []  # why SEM101's import edits cannot be made sure of, if so

    # -- rules --------------------------------------------------------------------------
    def run(self) -> None:
        self.gather()
        calls = [(call, op) for call in self.scopes.relevant_calls() if (op := self.operation(call)) is not None]
        calls.sort(key=lambda item: (item[0].end_lineno, item[0].end_col_offset))
        renames = self._renames()
        self.semaphore_args = {id(a) for call, operation in calls for a in _semaphore_arguments(operation, call)}
        argument_spans = []
        for call, operation in calls:
            while renames and _end(renames[-1].node) <= _end(call):  # libcst's order: callee, then call
                self._migrate(renames.pop())
            scope = self.scopes.scope_of[id(call)]
            for argument in _semaphore_arguments(operation, call):
                argument_spans.append((self.text.start(argument)[2], self.text.end(argument)[2]))
                self._argument(call, argument, scope)
            if operation.name == "semaphore_wait" and operation.sem_params[0].name == "sem_or_view":
                self._rename_dec(call)
        while renames:
            self._migrate(renames.pop())
        self._check_migrated_imports()
        starts = sorted(self.text.start(call)[2] for call, _ in calls)
        for low, high in argument_spans:
            index = bisect.bisect_right(starts, low)
            if index < len(starts) and starts[index] < high:  # the fixes would nest: none is made
                self._hold("a semaphore call inside a semaphore argument")
                return

    def _hold(self, reason: str, rule: str | None = None) -> None:
        """Report without fixing the findings of `rule` (SEM101 when its import edits are
        unsure; its rewrites are the ones without a call), or of every rule."""
        self.findings = [
            replace(f, message=f"{f.message} (not fixed: {reason})", replacement=None, applied=False, safety=None)
            if f.replacement is not None and rule in (None, f.rule) else f
            for f in self.findings
        ]
        self.rewrites = [r for r in self.rewrites if rule is not None and r.call is not None]
        self.migrated, self.import_edits, self.imports = [], [], None
        if rule is None:
            self.removals = []

    def _renames(self) -> list[migrations.Reference]:
        """SEM101's references, last first (see migrations.py)."""
        if "SEM101" not in self.settings.enabled or self.tree is None:
            return []
        found = list(migrations.references(self.tree, self.scopes, self.qualified, self.unsure))
        self.pallas_alias = migrations.pallas_alias(self.tree)
        return sorted(found, key=lambda r: _end(r.node), reverse=True)

    def _migrate(self, reference: migrations.Reference) -> None:
        """One reference renamed; the import edits come after every rename (`_check_migrated_imports`)."""
        alias = self.pallas_alias or migrations.DEFAULT_PALLAS_ALIAS
        new_text = f"{alias}.{reference.function}"
        message = f"`{self.text.of(reference.node)}` was deprecated in JAX 0.10 and removed in 0.11; use `{new_text}`"
        if not migrations.alias_usable(reference.scope, alias, added=self.pallas_alias is None):
            self._report("SEM101", reference.node, message + f" (not fixed: `{alias}` means something else here)", None)
            return
        start, end = self.text.start(reference.node)[2], self.text.end(reference.node)[2]
        if LINE_BREAK.search(self.text.text, start, end):
            self._report("SEM101", reference.node, message + " (not fixed: a reference over several lines)", None)
            return
        if not self._report("SEM101", reference.node, message, new_text):
            return
        self.migrated.append(reference.node)
        self.rewrites.append(Rewrite(None, reference.node, reference.node, [(start, end, new_text)]))  # type: ignore[arg-type]

    def _check_migrated_imports(self) -> None:
        if self.unsure:
            self._hold(self.unsure[0], "SEM101")
        elif self.migrated:
            try:
                alias = self.pallas_alias or migrations.DEFAULT_PALLAS_ALIAS
                add = self.pallas_alias is None
                self.import_edits, self.imports = migrations.import_edits(self.tree, self.text.text, self.migrated, alias, add)  # type: ignore[arg-type]
            except migrations.Unsure as reason:
                self._hold(str(reason), "SEM101")

    def _rename_dec(self, call: ast.Call) -> None:
        """SEM102: `dec=` is `value=` since JAX 0.7.2, a rename of the keyword's name alone.
        Where `value` is also given (by keyword or as the second positional argument), the
        rename would repeat it: report only."""
        given = any(k.arg == "value" for k in call.keywords)
        given = given or sum(not isinstance(a, ast.Starred) for a in call.args) > 1
        message = "`semaphore_wait(dec=...)` is `semaphore_wait(value=...)` since JAX 0.7.2"
        for keyword in call.keywords:
            if keyword.arg != "dec":
                continue
            name = ast.Name("dec", lineno=keyword.lineno, col_offset=keyword.col_offset)
            name.end_lineno, name.end_col_offset = keyword.lineno, keyword.col_offset + len("dec")
            if given:
                self._report("SEM102", name, message + " (not fixed: `value` is also given)", None)
            elif self._report("SEM102", name, message, "value"):
                start = self.text.start(name)[2]
                edit = (start, start + len("dec"), "value")
                self.rewrites.append(Rewrite(call, keyword.value, keyword.value, [edit], keyword=keyword))

    def _report(
        self,
        code: str,
        node: ast.AST,
        message: str,
        replacement: str | None,
        *,
        safe: bool = True,
        span: tuple[tuple[int, int, int], tuple[int, int, int]] | None = None,
    ) -> bool | None:
        """Record a finding (at `node`, or at `span`: (line, 0-based column, offset) twice);
        whether its fix is accepted, None if the rule is off or silenced there."""
        (line, column, start), (end_line, end_column, end) = span or (self.text.start(node), self.text.end(node))
        if code not in self.settings.enabled or (
            self.suppressions and suppressed(self.suppressions, code, (line, end_line))
        ):
            return None
        if self.held is not None and replacement is not None:
            message, replacement = f"{message} (not fixed: {self.held})", None
        finding, accepted = decide(
            code, (line, column + 1, end_line, end_column + 1), message, self.text.text[start:end], replacement,
            safe=safe, unsafe_fixes=self.settings.unsafe_fixes, apply_fixes=True,
        )
        self.findings.append(finding)
        return accepted

    def _silenced(self, code: str, node: ast.AST) -> bool:
        """Is there a `# semfix: ignore` for `code` on the node's first or last line?"""
        lines = (node.lineno, node.end_lineno)  # type: ignore[attr-defined]
        return bool(self.suppressions) and suppressed(self.suppressions, code, lines)  # type: ignore[arg-type]

    def _cut(self, subscript: ast.Subscript, call: ast.Call, floor: int | None = None) -> tuple[int, int] | None:
        """(where the text to drop or `.at` starts, just past `]`), as libcst would cut it; None
        where libcst would not cut: a comment in the subscript outside its value (in the
        brackets, before them, or in the subscript's own parentheses, which start at or after
        `floor`, by default the call's own), or a line break between the value and `[` that is
        not a backslash continuation. Line breaks inside the brackets are cut with them."""
        text = self.text.text
        value_end, end = self.text.end(subscript.value)[2], self.text.end(subscript)[2]
        gap = _AFTER_VALUE.match(text, value_end)
        if gap is None:  # text the pattern does not know: no cut is sure
            return None
        if not _SIMPLE_WHITESPACE.match(gap.group("after")):
            return None
        comments = self._comments(call)
        if comments:
            lbracket = gap.end() - 1
            if any(lbracket <= c < end for c in comments) or self._comment_in_parentheses(subscript, call, floor, comments):
                return None
        return gap.start("after"), end

    def _comments(self, call: ast.Call) -> list[int]:
        """Where each comment inside the call starts; the tokenizer runs only if it holds a `#`."""
        if id(call) not in self.comments:
            start, end = self.text.start(call)[2], self.text.end(call)[2]
            source = self.text.text[start:end]
            found = []
            if "#" in source:
                starts = line_starts(source)
                for token in tokens(source):
                    if token.type == tokenize.COMMENT:
                        found.append(start + starts[token.start[0] - 1] + token.start[1])
            self.comments[id(call)] = found
        return self.comments[id(call)]

    def _comment_in_parentheses(self, subscript: ast.Subscript, call: ast.Call, floor: int | None, comments: list[int]) -> bool:
        """Is a comment inside the parentheses around the subscript itself (libcst counts them
        as the subscript's): after the outermost `(` that follows `floor`, before its `)`?"""
        text = self.text.text
        if floor is None:  # just past the call's own `(`
            floor = _OPEN_PAREN.match(text, self.text.end(call.func)[2]).end()  # type: ignore[union-attr]
        start, end = self.text.start(subscript)[2], self.text.end(subscript)[2]
        position, outermost, depth = start, start, 0
        while position > floor:  # back over blanks, comments and `(`
            index = bisect.bisect_right(comments, position - 1) - 1
            if index >= 0 and not LINE_BREAK.search(text, comments[index], position):
                position = comments[index]  # inside a comment: skip it
                continue
            char = text[position - 1]
            if char == "(":
                outermost, depth = position - 1, depth + 1
            elif char not in " \t\f\r\n\\":
                break
            position -= 1
        if not depth:
            return False
        close = end
        for _ in range(depth):
            close = _CLOSE_PAREN.match(text, close).end()  # type: ignore[union-attr]
        return any(outermost <= c < start or end <= c < close for c in comments)

    def _argument(self, call: ast.Call, original: ast.expr, scope: Scope, *, carried: bool = True, unusual: bool = True) -> None:
        if isinstance(original, ast.NamedExpr):
            self._walrus(call, original, scope)
            return
        if carried and isinstance(original, ast.Name):
            _, bindings = scope.lookup(original.id)
            if any(b.kind == "read" for b in bindings) and self._carried(call, original, bindings):
                return
        if unusual and isinstance(original, ast.Subscript) and isinstance(original.slice, ast.Tuple):
            if any(isinstance(e, ast.Starred) for e in original.slice.elts) or (
                len(original.slice.elts) == 1 and isinstance(original.slice.elts[0], ast.Constant)
            ):  # `sems[0,]`, `sems[(0,)]`, `sems[*i]`: reported, never rewritten
                held, self.held = self.held, self.held or "an unusual subscript"
                try:
                    self._argument(call, original, scope, carried=carried, unusual=False)
                finally:
                    self.held = held
                return
        whole = read_target(original)
        if has_slice(original) or self.kind(original, scope) is Kind.ARRAY or (
            whole is not None and self.kind(whole, scope) is Kind.ARRAY
        ):
            message = messages.non_scalar(self.text.of(original), whole_array=not has_slice(original))
            self._report("SEM004", original, message, None)
            return
        rewrite: Rewrite | None = None
        current = original
        if whole is not None:
            innermost = whole
            while read_target(innermost) is not None:
                innermost = read_target(innermost)  # type: ignore[assignment]
            if innermost is not whole:  # `X[...][...]`: stripping one read would leave another
                message = messages.value_read(self.text.of(original), self.text.of(innermost))
                self._report("SEM001", original, message + messages.NESTED_READ_SUFFIX, None)
                return
            cuts = self._cut(original, call)  # type: ignore[arg-type]
            if cuts is None:
                message = messages.value_read(self.text.of(original), self.text.of(whole))
                self._report("SEM001", original, message + messages.COMMENT_SUFFIX, None)
                return
            cut, end = cuts
            start = self.text.start(original)[2]
            suggestion = self.text.text[start:cut]
            if not self._report("SEM001", original, messages.value_read(self.text.of(original), suggestion), suggestion):
                return
            rewrite = Rewrite(call, original, whole, [(cut, end, "")])  # `whole` is never changed
            current = whole
        if element_read(current):
            floor = self.text.start(original)[2] if current is not original else None
            rewrite = self._element(call, current, scope, rewrite, floor)  # type: ignore[arg-type]
        if rewrite is not None:
            self.rewrites.append(rewrite)

    def _element(
        self, call: ast.Call, element: ast.Subscript, scope: Scope, previous: Rewrite | None, floor: int | None
    ) -> Rewrite | None:
        base = element.value
        kind = self.kind(base, scope)
        if kind is Kind.TUPLE:
            return previous
        key = self.key(base, scope)
        safe = kind is Kind.ARRAY or (key is not None and key in self.proofs())
        if safe and isinstance(base, ast.Attribute):  # the text matches: both must keep their Ref
            sites = self.proof_sites[key]
            safe = self.unstable(base, scope) is None and any(self.unstable(p, s) is None for p, s in sites)
        cuts = self._cut(element, call, floor)
        if cuts is None:
            return previous
        cut = cuts[0]
        insert = (cut, cut, ".at")
        start, end = self.text.start(element)[2], self.text.end(element)[2]
        view = self.text.text[start:cut] + ".at" + self.text.text[cut:end]
        message = messages.element_read(
            self.text.of(element), view, safe=safe, array=kind is Kind.ARRAY, base=self.text.of(base)
        )
        replacement = copy.deepcopy(element)
        replacement.value = ast.Attribute(value=replacement.value, attr="at", ctx=ast.Load())
        if previous is not None:
            if not (safe or self.settings.unsafe_fixes) or "SEM002" not in self.settings.enabled or self._silenced("SEM002", element):
                self._report("SEM002", element, message, view, safe=safe)
                return previous
            edits = sorted([*previous.edits, insert])
            root_start = self.text.start(previous.argument)[2]
            suggestion = apply_edits(self.text.text, root_start, self.text.end(previous.argument)[2], edits)
            last = self.findings[-1]
            self.findings[-1] = replace(
                last, replacement=suggestion, message=messages.read_then_view(last.message, suggestion, safe=safe)
            )
            return Rewrite(call, previous.argument, replacement, edits)
        if self._report("SEM002", element, message, view, safe=safe):
            return Rewrite(call, element, replacement, [insert])
        return None

    # -- an assignment expression in a semaphore argument -----------------------------------------
    def _walrus(self, call: ast.Call, original: ast.NamedExpr, scope: Scope) -> None:
        """`f(s := sem[...])`: the rules apply to the value. The fix makes `s` hold the Ref
        instead of the value read, so it is applied only when nothing can read `s`."""
        held, count = self.held, len(self.rewrites)
        self.held = held or self._walrus_blocker(original.target, scope)
        try:
            self._argument(call, original.value, scope, carried=False)
        finally:
            self.held = held
        if len(self.rewrites) > count:
            inner = self.rewrites.pop()
            walrus = ast.NamedExpr(target=original.target, value=inner.replacement)
            self.rewrites.append(Rewrite(call, original, walrus, inner.edits))

    def _walrus_blocker(self, target: ast.Name, scope: Scope) -> str | None:
        """Why `s` in `s := ...` may be read; by spelling, so `global s` and reads anywhere in
        the function, nested ones and earlier loop iterations included, all count."""
        if scope.kind != "function":
            return f"`{self.text.of(target)}` is not a local name, and would hold the Ref instead of the value"
        if _spelled(scope.node, target.id) > 1:  # type: ignore[arg-type]
            return f"`{target.id}` is used elsewhere, and would hold the Ref instead of the value"
        return None


def _spelled(node: ast.AST, name: str) -> int:
    """How often `name` is written as a name anywhere in `node`, as libcst counts its Name
    nodes: reads and stores, attributes, keywords, parameters, definitions, imports,
    `global` and `nonlocal`, `except ... as`, and capture patterns."""
    count = 0
    for current in ast.walk(node):
        if isinstance(current, ast.Name):
            count += current.id == name
        elif isinstance(current, ast.Attribute):
            count += current.attr == name
        elif isinstance(current, (ast.keyword, ast.arg)):
            count += current.arg == name
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)):
            count += current.name == name
        elif isinstance(current, (ast.Global, ast.Nonlocal)):
            count += current.names.count(name)
        elif isinstance(current, ast.alias):
            count += current.name.split(".").count(name) + (current.asname == name)
        elif isinstance(current, ast.ImportFrom):
            count += (current.module or "").split(".").count(name)
        elif isinstance(current, (ast.MatchAs, ast.MatchStar)):
            count += current.name == name
        elif isinstance(current, ast.MatchMapping):
            count += current.rest == name
        elif isinstance(current, ast.MatchClass):
            count += current.kwd_attrs.count(name)
        elif type(current).__name__ in ("TypeVar", "ParamSpec", "TypeVarTuple"):
            count += getattr(current, "name", None) == name
    return count


def _suppressions(text: str) -> Suppressions:
    """The `# semfix: ignore` comments, by line. Only comments count, not strings, so the
    tokenizer decides; it runs only when the text holds such a comment at all."""
    found: Suppressions = {}
    if "semfix" in text and _IGNORE_TEXT.search(text):
        for token in tokens(text):
            if token.type == tokenize.COMMENT and "semfix" in token.string:
                note_suppression(found, token.start[0], token.string)
    return found


def _semaphore_arguments(operation: Operation, call: ast.Call) -> list[ast.expr]:
    by_position = {p.position for p in operation.sem_params if p.position is not None}
    by_name = {p.name for p in operation.sem_params}
    found: list[ast.expr] = []
    position: int | None = 0
    for item in source_order(call):
        if isinstance(item, ast.keyword):
            if item.arg in by_name:
                found.append(item.value)
        elif isinstance(item, ast.Starred):
            position = None
        elif position is not None:
            if position in by_position:
                found.append(item)  # type: ignore[arg-type]
            position += 1
    return found


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset  # type: ignore[attr-defined,return-value]
