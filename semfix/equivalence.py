"""The semantic check on every libcst rewrite: old and new trees differ only as declared.

The two stdlib `ast` trees are walked side by side. Where they differ, the pair must be one
of the rewrites the rules declare: `X[...]` to `X` (SEM001), `X[i]` to `X.at[i]` (SEM002),
a carried variable to its Ref and its assignment dropped (SEM003), `pltpu.semaphore_*` to
`pl.semaphore_*` with import edits (SEM101), `dec=` to `value=` (SEM102). Anything else is
refused, naming the rule that rewrote that line and the line.
"""

from __future__ import annotations

import ast
import warnings
from typing import Iterable

from semfix.compiles import prove_compiles
from semfix.errors import SafetyError
from semfix.findings import Finding

_MIGRATED = {"semaphore_signal", "semaphore_wait", "semaphore_read"}


def _same(a: object, b: object) -> bool:
    if isinstance(a, ast.AST) and isinstance(b, ast.AST):
        return type(a) is type(b) and all(_same(getattr(a, f), getattr(b, f)) for f in a._fields)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _is_read(node: ast.AST) -> bool:
    if not isinstance(node, ast.Subscript):
        return False
    inner = node.slice
    return (isinstance(inner, ast.Constant) and inner.value is Ellipsis) or (isinstance(inner, ast.Tuple) and not inner.elts)


def _is_view_of(new: ast.AST, element: ast.AST) -> bool:
    """`new` is `element` with its subscripted value turned into `.at`."""
    return (
        isinstance(new, ast.Subscript)
        and isinstance(element, ast.Subscript)
        and isinstance(new.value, ast.Attribute)
        and new.value.attr == "at"
        and _same(new.value.value, element.value)
        and _same(new.slice, element.slice)
    )


class _Walker:
    def __init__(self, old: ast.Module, findings: Iterable[Finding]) -> None:
        self.rules_at: dict[int, set[str]] = {}
        for finding in findings:
            if finding.applied:
                for line in range(finding.line, finding.end_line + 1):
                    self.rules_at.setdefault(line, set()).add(finding.rule)
        self.carried: dict[str, list[ast.AST]] = {}
        for node in ast.walk(old):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if _is_read(node.value):
                    self.carried.setdefault(node.targets[0].id, []).append(node.value.value)  # type: ignore[attr-defined]

    def fail(self, node: object) -> None:
        line = getattr(node, "lineno", 0)
        rules = sorted(self.rules_at.get(line, set()))
        who = "/".join(rules) + " rewrite" if rules else "a change no rule declares"
        raise SafetyError(f"{who} at line {line} is not one semfix declares; file left unchanged")

    def declared(self, old: ast.AST, new: ast.AST) -> bool:
        if _is_read(old) and (_same(old.value, new) or _is_view_of(new, old.value)):  # type: ignore[attr-defined]
            return True  # SEM001 (and SEM001 then SEM002)
        if _is_view_of(new, old):
            return True  # SEM002
        if isinstance(old, ast.Name) and any(_same(ref, new) for ref in self.carried.get(old.id, [])):
            return True  # SEM003
        if isinstance(new, ast.Attribute) and new.attr in _MIGRATED and isinstance(new.value, ast.Name):
            old_name = old.attr if isinstance(old, ast.Attribute) else None
            return old_name in (None, new.attr) and isinstance(old, (ast.Attribute, ast.Name))  # SEM101
        return False

    def compare(self, old: object, new: object, owner: object) -> None:
        if isinstance(old, ast.AST) and isinstance(new, ast.AST):
            if type(old) is not type(new):
                if not self.declared(old, new):
                    self.fail(old)
                return
            if isinstance(old, ast.keyword) and old.arg == "dec" and new.arg == "value":  # type: ignore[attr-defined]
                self.compare(old.value, new.value, old)  # SEM102
                return
            if isinstance(old, (ast.Subscript, ast.Name, ast.Attribute)) and not _same(old, new) and self.declared(old, new):
                return
            for name in old._fields:
                self.compare(getattr(old, name), getattr(new, name), old)
        elif isinstance(old, list) and isinstance(new, list):
            if len(old) != len(new):
                old, new = self._align(old, new, owner)
            for x, y in zip(old, new):
                self.compare(x, y, owner)
        elif old != new:
            self.fail(owner)

    def _align(self, old: list, new: list, owner: object) -> tuple[list, list]:
        """Statement lists may lose carried assignments (SEM003) and gain or lose imports (SEM101)."""
        def kept(statements: list) -> list:
            return [s for s in statements if not isinstance(s, (ast.Import, ast.ImportFrom))]

        old_kept = [s for s in kept(old) if not (isinstance(s, ast.Assign) and s.lineno in self.rules_at and _is_read(s.value))]
        new_kept = kept(new)
        if len(old_kept) != len(new_kept):
            self.fail(owner)
        return old_kept, new_kept


def check_rewrite(old_source: str | bytes, new_source: str | bytes, findings: Iterable[Finding]) -> None:
    """Raise SafetyError unless every difference between the two trees is a declared rewrite
    and CPython compiles the new tree."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's code may warn; that is not ours to print
            old, new = ast.parse(old_source), ast.parse(new_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # syntax newer than this Python: libcst's own parse and idempotency checks stand
    walker = _Walker(old, findings)
    walker.compare(old, new, old)
    prove_compiles(old, new, SafetyError)
