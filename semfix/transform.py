"""The libcst transformer: find semaphore arguments that read the Ref, and pass the Ref.

It works on a parsed module only; reading, decoding and writing files live elsewhere.
"""

from __future__ import annotations

import re
from typing import Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    CodeRange,
    PositionProvider,
    QualifiedNameProvider,
    QualifiedNameSource,
)

from semfix.catalog import Operation, lookup
from semfix.findings import Finding
from semfix.rules import SEM001


class _SourceText:
    """The module's text, addressable by libcst positions, built only when a finding needs it."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.line_starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", code)]

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column


def _one_line(code: str, limit: int = 60) -> str:
    text = " ".join(code.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def semaphore_arguments(operation: Operation, args: Sequence[cst.Arg]) -> list[int]:
    """Indexes into `args` of the arguments bound to semaphore parameters.

    Positional arguments after a `*iterable` cannot be bound to a position, so they are skipped.
    """
    by_position = {p.position: p for p in operation.sem_params if p.position is not None}
    by_name = {p.name for p in operation.sem_params}
    found: list[int] = []
    position: int | None = 0
    for index, arg in enumerate(args):
        if arg.keyword is not None:
            if arg.keyword.value in by_name:
                found.append(index)
        elif arg.star == "*":
            position = None
        elif arg.star == "" and position is not None:
            if position in by_position:
                found.append(index)
            position += 1
    return found


def read_target(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """For `X[...]` or `X[()]`, the Ref `X` being read; None for anything else.

    `X.at[...]` is not a read: `.at[...]` already is a valid view of the Ref.
    """
    if not m.matches(
        value,
        m.Subscript(
            slice=[m.SubscriptElement(slice=m.Index(value=m.Ellipsis() | m.Tuple(elements=[]), star=None))]
        ),
    ):
        return None
    target = value.value  # type: ignore[attr-defined]
    if m.matches(target, m.Attribute(attr=m.Name("at"))):
        return None
    return target


class SemaphoreRefTransformer(cst.CSTTransformer):
    """Rewrites `op(..., sem[...])` to `op(..., sem)` for calls that resolve to the catalog."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider)

    def __init__(self, apply_fixes: bool = True) -> None:
        super().__init__()
        self.apply_fixes = apply_fixes
        self.findings: list[Finding] = []
        self._module: cst.Module | None = None
        self._text: _SourceText | None = None

    def visit_Module(self, node: cst.Module) -> None:
        self._module = node

    def _source(self) -> _SourceText:
        if self._text is None:
            assert self._module is not None
            self._text = _SourceText(self._module.code)
        return self._text

    def _span(self, node: cst.CSTNode) -> tuple[CodeRange, int, int]:
        position: CodeRange = self.get_metadata(PositionProvider, node)
        text = self._source()
        return (
            position,
            text.offset(position.start.line, position.start.column),
            text.offset(position.end.line, position.end.column),
        )

    def _operation(self, func: cst.BaseExpression) -> Operation | None:
        """The catalog entry `func` names, only if every binding it may have is a JAX import."""
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return None
        names = self.get_metadata(QualifiedNameProvider, func, set())
        operations = set()
        for qualified in names:
            operation = lookup(qualified.name) if qualified.source is QualifiedNameSource.IMPORT else None
            if operation is None:
                return None
            operations.add(operation)
        return operations.pop() if len(operations) == 1 else None

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        operation = self._operation(original_node.func)
        if operation is None:
            return updated_node
        args = list(updated_node.args)
        for index in semaphore_arguments(operation, original_node.args):
            replacement = self._check_argument(original_node.args[index].value, args[index].value)
            if replacement is not None:
                args[index] = args[index].with_changes(value=replacement)
        return updated_node.with_changes(args=args)

    def _check_argument(
        self, original: cst.BaseExpression, updated: cst.BaseExpression
    ) -> cst.BaseExpression | None:
        """Record a finding for a Ref read; return the rewritten argument when it is applied."""
        target = read_target(updated)
        if target is None:
            return None
        assert isinstance(updated, cst.Subscript) and isinstance(original, cst.Subscript)
        replacement = target.with_changes(
            lpar=[*updated.lpar, *target.lpar], rpar=[*target.rpar, *updated.rpar]
        )
        # Dropping the brackets must not drop a comment written inside them.
        safe = len(m.findall(updated, m.Comment())) == len(m.findall(target, m.Comment()))
        position, start, end = self._span(original)
        _, _, target_end = self._span(original.value)
        _, slice_start, slice_end = self._span(original.slice[0])
        code = self._source().code
        written = code[start:end]
        # Around the slice there is only whitespace once comments are ruled out, so the
        # brackets are the nearest "[" before it and "]" after it.
        cut = code.rindex("[", target_end, slice_start)
        if isinstance(original.whitespace_after_value, cst.SimpleWhitespace):
            cut -= len(original.whitespace_after_value.value)
        suggested = code[start:cut] + code[code.index("]", slice_end) + 1 : end]
        message = (
            f"`{_one_line(written)}` reads a value out of the semaphore Ref; "
            f"pass the Ref `{_one_line(suggested)}`"
        )
        if not safe:
            message += " (not fixed: a comment inside the brackets would be lost)"
        applied = safe and self.apply_fixes
        self.findings.append(
            Finding(
                rule=SEM001.code,
                line=position.start.line,
                column=position.start.column + 1,
                end_line=position.end.line,
                end_column=position.end.column + 1,
                message=message,
                original=written,
                replacement=suggested if safe else None,
                applied=applied,
            )
        )
        return replacement if applied else None
