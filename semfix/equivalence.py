"""The semantic check on every libcst rewrite: old and new trees differ only as declared.

The two stdlib `ast` trees are walked side by side. Where they differ, the pair must be one
of the rewrites the rules declare: `X[...]` to `X` (SEM001), `X[i]` to `X.at[i]` (SEM002),
a carried variable to its Ref and its assignment dropped (SEM003), `pltpu.semaphore_*` to
`pl.semaphore_*`, with exactly the import edits it declares (SEM101: names dropped from
an import, an import left empty dropped, `from jax.experimental import pallas as pl` added), `dec=` to `value=` (SEM102). Anything else is
refused, naming the rule that rewrote that line and the line.
"""

from __future__ import annotations

import ast
import copy
import warnings
from typing import TYPE_CHECKING, Iterable

from semfix.compiles import prove_compiles
from semfix.errors import SafetyError
from semfix.findings import Finding

if TYPE_CHECKING:  # importing libcst is slow, and this module needs only the names
    from semfix.imports import ImportChanges

PALLAS_PARENT = "jax.experimental"

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
    def __init__(self, old: ast.Module, findings: Iterable[Finding], imports: ImportChanges | None) -> None:
        self.dropped = imports.dropped if imports is not None else {}
        self.adds_left = imports.added if imports is not None else 0
        self.pallas_alias = imports.migrated_to if imports is not None else None
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
        if isinstance(new, ast.Attribute) and new.attr in _MIGRATED and isinstance(new.value, ast.Name) and new.value.id == self.pallas_alias:
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
            if old and isinstance(old[0], ast.stmt):
                self._statements(old, new, owner)
                return
            if len(old) != len(new):
                self.fail(owner)
            for x, y in zip(old, new):
                self.compare(x, y, owner)
        elif old != new:
            self.fail(owner)

    def _statements(self, old: list[ast.stmt], new: list[ast.stmt], owner: object) -> None:
        """A statement list may lose carried assignments (SEM003), and imports may lose the names
        and gain the pallas imports SEM101 declares: nothing else about imports may change."""
        expected: list[ast.stmt] = []
        for statement in old:
            if isinstance(statement, ast.Assign) and statement.lineno in self.rules_at and _is_read(statement.value):
                continue
            if isinstance(statement, (ast.Import, ast.ImportFrom)) and statement.lineno in self.dropped:
                gone = self.dropped[statement.lineno]
                names = [a for a in statement.names if _bound_name(a, statement) not in gone]
                if not names:
                    continue
                statement = copy.copy(statement)
                statement.names = names
            expected.append(statement)
        index = 0
        for statement in new:
            if self.adds_left and self._is_added(statement) and not (index < len(expected) and _same(expected[index], statement)):
                self.adds_left -= 1
                continue
            if index == len(expected):
                self.fail(statement)
            self.compare(expected[index], statement, owner)
            index += 1
        if index != len(expected):
            self.fail(owner)

    def _is_added(self, statement: ast.stmt) -> bool:
        """`from jax.experimental import pallas as <the alias SEM101 declared>`."""
        return (
            isinstance(statement, ast.ImportFrom)
            and (statement.module, statement.level) == (PALLAS_PARENT, 0)
            and [(a.name, a.asname) for a in statement.names] == [("pallas", self.pallas_alias)]
        )


def _bound_name(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]


def check_rewrite(
    old_source: str | bytes | ast.Module,
    new_source: str | bytes,
    findings: Iterable[Finding],
    imports: ImportChanges | None = None,
) -> ast.Module | None:
    """Raise SafetyError unless every difference between the two trees is a declared rewrite
    and CPython compiles the new tree; the new tree, for a second pass to reuse (None when this
    Python cannot parse either text).

    The old tree may be handed in: it is only read here."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's code may warn; that is not ours to print
            old = old_source if isinstance(old_source, ast.Module) else ast.parse(old_source)
            new = ast.parse(new_source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # syntax newer than this Python: libcst's own parse and idempotency checks stand
    walker = _Walker(old, findings, imports)
    walker.compare(old, new, old)
    prove_compiles(old, new, SafetyError)
    return new
