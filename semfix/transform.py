"""The libcst transformer: pass semaphore Refs, not values read out of them.

It works on a parsed module and the evidence gathered from it; reading, decoding and writing
files live elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    CodePosition,
    CodeRange,
    FunctionScope,
    ImportAssignment,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from semfix.evidence import Bindings, CarriedRead, Evidence, Kind
from semfix import messages
from semfix.findings import Finding, decide
from semfix.messages import one_line as _one_line
from semfix.imports import ImportChanges
from semfix.resolve import Resolver, element_read, has_slice, read_target, semaphore_arguments
from semfix.settings import Settings
from semfix.text import apply_edits, line_starts

_DEPRECATED_TPU = {
    f"jax.experimental.pallas.tpu.semaphore_{op}": f"semaphore_{op}" for op in ("signal", "wait", "read")
}
DEFAULT_PALLAS_ALIAS = "pl"


class _SourceText:
    """The module's text, addressable by libcst positions, built only when a finding needs it."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.line_starts = line_starts(code)

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column


@dataclass
class _Edit:
    """A rewrite of one argument: the new node, and the same change as text edits."""

    node: cst.BaseExpression
    root: cst.CSTNode  # the original argument the text edits apply to
    edits: list[tuple[int, int, str]]  # (start, end, text) in module offsets


class SemaphoreTransformer(Bindings, Resolver, cst.CSTTransformer):
    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ScopeProvider, ParentNodeProvider)

    def __init__(self, evidence: Evidence, settings: Settings, apply_fixes: bool = True) -> None:
        super().__init__()
        self.evidence = evidence
        self.param_kinds = evidence.param_kinds
        self.settings = settings
        self.apply_fixes = apply_fixes
        self.findings: list[Finding] = []
        self.imports = ImportChanges()
        self._module: cst.Module | None = None
        self._text: _SourceText | None = None
        self._plans: dict[int, bool | None] = {}  # id(CarriedRead) -> decision
        self._removals: set[cst.SimpleStatementLine] = set()
        self._held: str | None = None  # while set, findings are reported with this reason, not fixed

    # -- positions and text -----------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def _source(self) -> _SourceText:
        if self._text is None:
            assert self._module is not None
            self._text = _SourceText(self._module.code)
        return self._text

    def _span(self, node: cst.CSTNode) -> tuple[int, int]:
        position: CodeRange = self.get_metadata(PositionProvider, node)
        text = self._source()
        return (
            text.offset(position.start.line, position.start.column),
            text.offset(position.end.line, position.end.column),
        )

    def _brackets(self, subscript: cst.Subscript) -> tuple[int, int] | None:
        """Offsets of the text from the end of the subscripted value to just past its `]`.

        None when that text holds a comment or a line break inside the value's own whitespace,
        which a text edit could not carry over exactly.
        """
        code = self._source().code
        _, value_end = self._span(subscript.value)
        first_start, _ = self._span(subscript.slice[0])
        _, last_end = self._span(subscript.slice[-1])
        if not isinstance(subscript.whitespace_after_value, cst.SimpleWhitespace):
            return None
        if len(m.findall(subscript, m.Comment())) != len(m.findall(subscript.value, m.Comment())):
            return None
        lbracket = code.rindex("[", value_end, first_start)
        rbracket = code.index("]", last_end)
        return lbracket - len(subscript.whitespace_after_value.value), rbracket + 1

    # -- findings ---------------------------------------------------------------------------
    def _report(
        self,
        code: str,
        node: cst.CSTNode,
        message: str,
        replacement: str | None,
        *,
        safe: bool = True,
        start_end: tuple[tuple[int, int], tuple[int, int]] | None = None,
    ) -> bool | None:
        """Record a finding; whether its fix is accepted (applied when fixing), None if off or silenced."""
        position: CodeRange = self.get_metadata(PositionProvider, node)
        (line, column), (end_line, end_column) = start_end or (
            (position.start.line, position.start.column + 1),
            (position.end.line, position.end.column + 1),
        )
        if not self._active(code, {line, end_line}):
            return None
        if self._held is not None and replacement is not None:
            message, replacement = f"{message} (not fixed: {self._held})", None
        start = self._source().offset(line, column - 1)
        end = self._source().offset(end_line, end_column - 1)
        finding, accepted = decide(
            code, (line, column, end_line, end_column), message, self._source().code[start:end], replacement,
            safe=safe, unsafe_fixes=self.settings.unsafe_fixes, apply_fixes=self.apply_fixes,
        )
        self.findings.append(finding)
        return accepted

    def _active(self, code: str, lines: set[int]) -> bool:
        return code in self.settings.enabled and not self.evidence.suppressed(code, lines)

    def _lines_of(self, node: cst.CSTNode) -> tuple[CodePosition, CodePosition]:
        position: CodeRange = self.get_metadata(PositionProvider, node)
        return position.start, position.end

    def _replace_last(self, **changes: object) -> None:
        self.findings[-1] = replace(self.findings[-1], **changes)  # type: ignore[arg-type]

    # -- calls ------------------------------------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        operation = self.operation(original_node.func)
        if operation is None:
            return updated_node
        args = list(updated_node.args)
        for index in semaphore_arguments(operation, original_node.args):
            new_value = self._fix_argument(original_node.args[index].value, args[index].value)
            if new_value is not None:
                args[index] = args[index].with_changes(value=new_value)
        if operation.name == "semaphore_wait" and operation.sem_params[0].name == "sem_or_view":
            args = self._rename_dec(original_node, args)
        return updated_node.with_changes(args=args)

    def _rename_dec(self, call: cst.Call, args: list[cst.Arg]) -> list[cst.Arg]:
        """SEM102: `dec=` became `value=` after JAX 0.7.1. Where `value` is also given (by
        keyword, or as the second positional argument), renaming would repeat it: report only."""
        given = any(a.keyword is not None and a.keyword.value == "value" for a in call.args)
        given = given or sum(a.keyword is None and not a.star for a in call.args) > 1
        for index, arg in enumerate(call.args):
            if arg.keyword is not None and arg.keyword.value == "dec":
                message = "`semaphore_wait(dec=...)` is `semaphore_wait(value=...)` since JAX 0.7.2"
                if given:
                    self._report("SEM102", arg.keyword, message + " (not fixed: `value` is also given)", None)
                elif self._report("SEM102", arg.keyword, message, "value") and self.apply_fixes:
                    args[index] = args[index].with_changes(keyword=cst.Name("value"))
        return args

    def _fix_argument(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression | None:
        """Run the argument rules in order; the new argument when a fix is applied."""
        if isinstance(original, cst.Name) and original in self.evidence.carried:
            return self._carried(original, self.evidence.carried[original])
        if isinstance(original, cst.NamedExpr):
            return self._walrus(original, updated)  # type: ignore[arg-type]
        if self._non_scalar(original):
            return None
        edit: _Edit | None = None
        current_original, current = original, updated
        target = read_target(updated)
        if target is not None:
            edit = self._strip_read(original, updated, target)
            if edit is None:
                return None
            current_original, current = original.value, edit.node  # type: ignore[attr-defined]
        if element_read(current):
            edit = self._element(current_original, current, edit, chained=edit is not None)
        return edit.node if edit is not None and self.apply_fixes else None

    def _walrus(self, original: cst.NamedExpr, updated: cst.NamedExpr) -> cst.BaseExpression | None:
        """`f(s := sem[...])`: the rules apply to the value. The fix makes `s` hold the Ref
        instead of the value read, so it is applied only when nothing can read `s`."""
        held, self._held = self._held, self._held or self._walrus_blocker(original.target)
        try:
            new_value = self._fix_argument(original.value, updated.value)
        finally:
            self._held = held
        return updated.with_changes(value=new_value) if new_value is not None else None

    def _walrus_blocker(self, target: cst.BaseExpression) -> str | None:
        """Why `s` in `s := ...` may be read; by spelling, so `global s` and reads anywhere in
        the function, nested ones and earlier loop iterations included, all count."""
        scope = self.get_metadata(ScopeProvider, target, None)
        if not isinstance(target, cst.Name) or not isinstance(scope, FunctionScope):
            return f"`{self._text_of(target)}` is not a local name, and would hold the Ref instead of the value"
        if len(m.findall(scope.node, m.Name(target.value))) > 1:
            return f"`{target.value}` is used elsewhere, and would hold the Ref instead of the value"
        return None

    def _non_scalar(self, original: cst.BaseExpression) -> bool:
        """SEM004: a slice, or a whole semaphore array (by itself or read with [...])."""
        whole = read_target(original)
        if not has_slice(original) and not (
            self.kind(original) is Kind.ARRAY or (whole is not None and self.kind(whole) is Kind.ARRAY)
        ):
            return False
        whole_array = not has_slice(original)
        self._report("SEM004", original, messages.non_scalar(self._text_of(original), whole_array=whole_array), None)
        return True

    def _text_of(self, node: cst.CSTNode) -> str:
        start, end = self._span(node)
        return self._source().code[start:end]

    def _strip_read(self, original: cst.Subscript, updated: cst.Subscript, target: cst.BaseExpression) -> _Edit | None:
        """SEM001: `X[...]` and `X[()]` become `X`."""
        node = target.with_changes(lpar=[*updated.lpar, *target.lpar], rpar=[*target.rpar, *updated.rpar])
        cut = self._brackets(original)
        written = self._text_of(original)
        inner = read_target(original)
        innermost = inner
        while read_target(innermost) is not None:  # type: ignore[arg-type]
            innermost = read_target(innermost)  # type: ignore[arg-type]
        if innermost is not inner:  # `X[...][...]`: stripping one read would leave another
            message = messages.value_read(written, self._text_of(innermost)) + messages.NESTED_READ_SUFFIX
            self._report("SEM001", original, message, None)
            return None
        if cut is None:
            message = messages.value_read(written, self._text_of(original.value)) + messages.COMMENT_SUFFIX
            self._report("SEM001", original, message, None)
            return None
        edits = [(cut[0], cut[1], "")]
        suggestion = self._apply_text(original, edits)
        applied = self._report("SEM001", original, messages.value_read(written, suggestion), suggestion)
        return _Edit(node, original, edits) if applied else None

    def _element(
        self, original: cst.Subscript, updated: cst.Subscript, previous: _Edit | None, *, chained: bool
    ) -> _Edit | None:
        """SEM002: `sems[i]` becomes `sems.at[i]` where `sems` is shown to be a Ref."""
        base = original.value
        kind = self.kind(base)
        if kind is Kind.TUPLE:
            return previous  # a tuple of Refs: `sems[i]` is the Ref, and correct
        key = self.key(base)
        safe = kind is Kind.ARRAY or (key is not None and key in self.evidence.proven_refs)
        cut = self._brackets(original)
        if cut is None:
            return previous
        insert = [(cut[0], cut[0], ".at")]
        node = updated.with_changes(value=cst.Attribute(value=updated.value, attr=cst.Name("at")))
        written = self._text_of(original)
        view = self._apply_text(original, insert)
        message = messages.element_read(written, view, safe=safe, array=kind is Kind.ARRAY, base=self._text_of(base))
        if chained and previous is not None:
            # Fold into the SEM001 finding just made, so the argument has a single rewrite.
            lines = {position.line for position in self._lines_of(original)}
            if not (safe or self.settings.unsafe_fixes) or not self._active("SEM002", lines):
                self._report("SEM002", original, message, view, safe=safe)
                return previous
            edits = sorted(previous.edits + insert)
            suggestion = self._apply_text(previous.root, edits)
            self._replace_last(
                replacement=suggestion,
                message=messages.read_then_view(self.findings[-1].message, suggestion, safe=safe),
            )
            return _Edit(node.with_changes(lpar=previous.node.lpar, rpar=previous.node.rpar), previous.root, edits)
        applied = self._report("SEM002", original, message, view, safe=safe)
        return _Edit(node, original, insert) if applied else None

    def _apply_text(self, node: cst.CSTNode, edits: list[tuple[int, int, str]]) -> str:
        """The text of `node` after the edits (module offsets)."""
        start, end = self._span(node)
        return apply_edits(self._source().code, start, end, edits)

    # -- SEM003: a value carried through a variable ---------------------------------------------
    def _carried(self, use: cst.Name, plan: CarriedRead) -> cst.BaseExpression | None:
        ref_text = self._text_of(plan.ref)
        decision = self._plan_applies(plan)
        message = (
            f"`{use.value}` holds a value read from the semaphore Ref at line {plan.read_line}; "
            f"pass the Ref `{_one_line(ref_text)}`"
        )
        if plan.blocker is not None:
            self._report("SEM003", use, f"{message} (not fixed: {plan.blocker})", None)
            return None
        if decision is None:
            self._report("SEM003", use, f"{message} (not fixed: a use or the assignment is silenced)", None)
            return None
        if not (self._report("SEM003", use, message, ref_text) and decision and self.apply_fixes):
            return None
        return plan.ref.with_changes(lpar=[*use.lpar, *plan.ref.lpar], rpar=[*plan.ref.rpar, *use.rpar])

    def _plan_applies(self, plan: CarriedRead) -> bool | None:
        """Decided once per assignment: all its uses are rewritten and it is removed, or none."""
        if id(plan) not in self._plans:
            self._plans[id(plan)] = self._decide_plan(plan)
        return self._plans[id(plan)]

    def _decide_plan(self, plan: CarriedRead) -> bool | None:
        """True: rewrite; False: report only; None: the rule is off or silenced here."""
        if plan.blocker is not None:
            return False
        lines = {self.get_metadata(PositionProvider, u).start.line for u in plan.uses} | {plan.read_line}
        if "SEM003" not in self.settings.enabled or self.evidence.suppressed("SEM003", lines):
            return None
        statement = self.get_metadata(PositionProvider, plan.statement)
        text = self._source()
        start, end = (statement.start.line, 1), (statement.end.line + 1, 1)
        if statement.end.line >= len(text.line_starts):  # the last line, without a newline
            end = (statement.end.line, len(text.code) - text.line_starts[statement.end.line - 1] + 1)
        applied = self._report(
            "SEM003",
            plan.statement,
            f"`{_one_line(self._text_of(plan.statement))}` only carried the read to semaphore "
            "arguments; removed with them",
            "",
            start_end=(start, end),
        )
        if applied and self.apply_fixes:
            self._removals.add(plan.statement)
        return bool(applied)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        return updated_node.with_changes(body=self._drop_removed(original_node.body, updated_node.body))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        return updated_node.with_changes(body=self._drop_removed(original_node.body, updated_node.body))

    def _drop_removed(self, originals, updated):  # type: ignore[no-untyped-def]
        """Drop removed statements, handing their blank lines to the next statement."""
        if not self._removals or not any(o in self._removals for o in originals):
            return updated
        kept, carried = [], []
        for original, new in zip(originals, updated):
            if original in self._removals:
                carried += list(new.leading_lines)
                continue
            if carried:
                new = new.with_changes(leading_lines=[*carried, *new.leading_lines])
                carried = []
            kept.append(new)
        return kept

    # -- SEM101: pltpu.semaphore_* moved to pl ----------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._migrate(original_node, updated_node)

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._migrate(original_node, updated_node)

    def _migrate(self, original: cst.Name | cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        if "SEM101" not in self.settings.enabled:
            return updated
        names = self.imported_names(original)
        if not names or len(names) != 1 or next(iter(names)) not in _DEPRECATED_TPU:
            return updated
        parent = self.get_metadata(ParentNodeProvider, original, None)
        if isinstance(parent, cst.Attribute) and parent.attr is original:
            return updated  # the `semaphore_wait` of `pltpu.semaphore_wait`: handled on the parent
        function = _DEPRECATED_TPU[next(iter(names))]
        alias = self.evidence.pallas_alias or DEFAULT_PALLAS_ALIAS
        new_text = f"{alias}.{function}"
        message = f"`{self._text_of(original)}` was deprecated in JAX 0.10 and removed in 0.11; use `{new_text}`"
        if not self._alias_usable(original, alias):
            self._report("SEM101", original, message + f" (not fixed: `{alias}` means something else here)", None)
            return updated
        if not (self._report("SEM101", original, message, new_text) and self.apply_fixes):
            return updated
        self.imports.migrated_to = alias
        if self.evidence.pallas_alias is None:
            self.imports.add_pallas_as = alias
        self._schedule_import_removal(original)
        return cst.Attribute(
            value=cst.Name(alias), attr=cst.Name(function), lpar=updated.lpar, rpar=updated.rpar  # type: ignore[attr-defined]
        )

    def _alias_usable(self, node: cst.CSTNode, alias: str) -> bool:
        """`alias` at this spot must be the pallas import, or free when semfix adds that import."""
        scope = self.get_metadata(ScopeProvider, node, None)
        if scope is None:
            return False
        bindings = scope[alias]
        if self.evidence.pallas_alias is None:
            return not bindings
        return all(isinstance(b, ImportAssignment) for b in bindings) and len(bindings) == 1

    def _schedule_import_removal(self, node: cst.Name | cst.Attribute) -> None:
        """The import that bound the rewritten reference may now be unused; the pallas import
        goes where it is (see semfix/imports.py)."""
        root: cst.BaseExpression = node
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(root, cst.Name):
            self.imports.maybe_unused.add(root.value)
            scope = self.get_metadata(ScopeProvider, root, None)
            bindings = scope[root.value] if scope is not None else ()
            for binding in bindings:
                if isinstance(binding, ImportAssignment):
                    self.imports.bound_by[binding.node] = self.get_metadata(PositionProvider, binding.node).start.line
