"""Resolving what a callee or a name refers to, through the file's imports (libcst metadata)."""

from __future__ import annotations

from typing import Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    QualifiedNameProvider,
    QualifiedNameSource,
)

from semfix.catalog import SEMAPHORE_TYPE_OWNERS, Operation, lookup



def semaphore_arguments(operation: Operation, args: Sequence[cst.Arg]) -> list[int]:
    """Indexes into `args` of the arguments bound to semaphore parameters.

    Positional arguments after a `*iterable` cannot be bound to a position, so they are skipped.
    """
    by_position = {p.position for p in operation.sem_params if p.position is not None}
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


def element_read(value: cst.BaseExpression) -> bool:
    """`B[i]` or `B[i, j]`: one element read out of B (not a slice, not `.at`, not `[...]`)."""
    return (
        isinstance(value, cst.Subscript)
        and not is_at(value.value)
        and read_target(value) is None
        and all(
            isinstance(e.slice, cst.Index) and e.slice.star is None and not isinstance(e.slice.value, cst.Ellipsis)
            for e in value.slice
        )
    )


def has_slice(value: cst.BaseExpression) -> bool:
    """`B[0:2]`, `B[:]`, `B.at[1:]`: a range of semaphores, never one."""
    return isinstance(value, cst.Subscript) and any(isinstance(e.slice, cst.Slice) for e in value.slice)


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
    if is_at(target):
        return None
    return target


def is_at(node: cst.BaseExpression) -> bool:
    """`X.at`: the indexer whose subscripts are views, not reads."""
    return m.matches(node, m.Attribute(attr=m.Name("at")))


class Resolver(cst.MetadataDependent):
    """Mixin for visitors and transformers that need to know what a name refers to."""

    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def imported_names(self, node: cst.CSTNode) -> set[str] | None:
        """The qualified names `node` may refer to, or None unless every binding is an import."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        names = self.get_metadata(QualifiedNameProvider, node, set())
        if not names or any(q.source is not QualifiedNameSource.IMPORT for q in names):
            return None
        return {q.name for q in names}

    def resolves_to(self, node: cst.CSTNode, targets: frozenset[str]) -> bool:
        names = self.imported_names(node)
        return bool(names) and names <= targets  # type: ignore[operator]

    def operation(self, func: cst.BaseExpression) -> Operation | None:
        """The catalog entry `func` names, only if every binding it may have is a JAX import."""
        names = self.imported_names(func)
        if not names:
            return None
        operations = {lookup(name) for name in names}
        if None in operations or len(operations) != 1:
            return None
        return operations.pop()

    def is_semaphore_type(self, node: cst.BaseExpression) -> bool:
        names = self.imported_names(node)
        return bool(names) and all(n.startswith(SEMAPHORE_TYPE_OWNERS) for n in names)  # type: ignore[union-attr]
