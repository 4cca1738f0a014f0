"""SEM101's import edits: drop the imports the migration left unused, add `pl` if needed.

libcst's RemoveImportsVisitor drops a removed statement's blank lines with it; this keeps
them, and puts a needed `pallas` import in the place of the import it replaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import ImportAssignment, MetadataWrapper, ScopeProvider


@dataclass
class ImportChanges:
    add_pallas_as: str | None = None  # bind jax.experimental.pallas to this name
    maybe_unused: set[str] = field(default_factory=set)  # names whose import may now be unused


def _unused(module: cst.Module, names: set[str]) -> set[str]:
    """Of `names`, those bound only by module-level imports and no longer referenced."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    scope = scopes[wrapper.module]
    unused = set()
    for name in names:
        bindings = scope[name]
        if bindings and all(isinstance(b, ImportAssignment) and not b.references for b in bindings):
            unused.add(name)
    return unused


def _bound_name(alias: cst.ImportAlias, is_from: bool) -> str:
    if alias.asname is not None:
        return alias.evaluated_alias  # type: ignore[return-value]
    return alias.evaluated_name if is_from else alias.evaluated_name.split(".")[0]


def _pallas_import(alias: str) -> cst.SimpleStatementLine:
    return cst.parse_statement(f"from jax.experimental import pallas as {alias}\n")  # type: ignore[return-value]


def apply_import_changes(module: cst.Module, changes: ImportChanges) -> cst.Module:
    if changes.add_pallas_as is None and not changes.maybe_unused:
        return module
    unused = _unused(module, changes.maybe_unused)
    pending = changes.add_pallas_as
    body: list[cst.BaseStatement] = []
    carried: list[cst.EmptyLine] = []
    for statement in module.body:
        if carried:
            statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
            carried = []
        kept = _without_unused(statement, unused)
        if kept is not None:
            body.append(kept)
        elif pending is not None:
            body.append(_pallas_import(pending).with_changes(leading_lines=statement.leading_lines))
            pending = None
        else:
            carried = list(statement.leading_lines)
    module = module.with_changes(body=body)
    if pending is not None:
        context = CodemodContext()
        AddImportsVisitor.add_needed_import(context, "jax.experimental", "pallas", pending)
        module = AddImportsVisitor(context).transform_module(module)
    return module


def _without_unused(statement: cst.BaseStatement, unused: set[str]) -> cst.BaseStatement | None:
    """The statement minus unused import aliases; None when nothing of it is left."""
    if not unused or not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return statement
    small = statement.body[0]
    if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
        return statement
    is_from = isinstance(small, cst.ImportFrom)
    names = [a for a in small.names if _bound_name(a, is_from) not in unused]
    if len(names) == len(small.names):
        return statement
    if not names:
        return None
    if names[-1] is not small.names[-1] and not (is_from and small.lpar):  # type: ignore[union-attr]
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return statement.with_changes(body=[small.with_changes(names=names)])
