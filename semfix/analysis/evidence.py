"""What the file shows about its Refs: resolution, allocations, proofs, and their stability.

`Evidence` is computed once per file and cached, and rules read it through their `Context`
(semfix/analysis/context.py): imports resolved to qualified names and catalog operations, and
the Refs `X.at[...]` and `X[...]` prove (resolution.py); kernels' scratch shapes and
`run_scoped` allocations giving parameters a kind, one semaphore or a tuple or array of them
(allocations.py); and here, whether a Ref expression keeps its value where that evidence is used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from semfix.analysis.allocations import Allocations
from semfix.analysis.nodes import Located, Steps, unchain
from semfix.analysis.resolution import Kind, NeedsAccesses
from semfix.analysis.scopes import Scope

if TYPE_CHECKING:
    from semfix.analysis.nodes import Text
    from semfix.analysis.scopes import ScopeBuilder

__all__ = ["Evidence", "Kind", "NeedsAccesses"]


class Evidence(Allocations):
    """Resolution and evidence for one file, each computed on first use and cached."""

    def __init__(self, text: Text, scopes: ScopeBuilder) -> None:
        super().__init__(text, scopes)
        self._changes: dict[int, list[tuple[str, Steps, ast.expr]]] = {}

    # -- whether a Ref expression keeps its value (a view's evidence, a carried read)----------------
    def unstable(self, node: ast.expr, scope: Scope) -> str | None:
        """Why `node` may not name the same Ref everywhere in its scope; None when it must.

        Evidence about a Ref expression (a view's proof, a carried read) holds only
        while its base name, each attribute in its chain and each name in its indices keep
        their values. Flow is not followed: a name bound twice anywhere in the scope (or once, by
        a function through `global`, which binds it again at each call), or a
        chain written, deleted, called a method on or handed away anywhere its base name is
        seen (nested functions and later loop iterations included), voids the evidence.
        """
        for root, top, watched in _chains(node):
            _, bindings = scope.lookup(root.id)
            if len(bindings) > 1 or bindings and bindings[0].declared:
                return f"`{root.id}` is reassigned or deleted, so the Ref could differ at the use"
            if not watched:
                continue
            if not bindings:
                return f"`{self._code(top)}` may be changed outside this file"
            for how, changed, where in self._changes_of(root.id, scope):
                through = watched[: len(changed)] == changed
                if how == "write" and through:
                    return f"`{self._code(top)}` may be rebound: `{self._code(where)}` is assigned or deleted"
                if how == "handed" and through and len(changed) < len(watched):
                    return f"`{self._code(top)}` may be rebound by other code given `{self._code(where)}`"
        return None

    def _code(self, node: Located) -> str:
        return " ".join(self.text.of(node).split())

    def _changes_of(self, name: str, scope: Scope) -> list[tuple[str, Steps, ast.expr]]:
        """Every place the name's value, or a chain under it, may change: ("write", chain) for a
        store or `del` target, ("handed", object) for an object given to code that may change
        anything under it: a call's receiver, an argument, a container stored into, or any
        other use that is not an attribute or subscript of it. A chain through a dunder attribute
        (`x.__dict__[k] = v`) hands away the object itself. With each, the expression there."""
        _, bindings = scope.lookup(name)
        if id(bindings) not in self._changes:
            found: list[tuple[str, Steps, ast.expr]] = []
            for access in self.tracking().references(name, scope):
                steps, top = access.steps, access.top
                own = next((i for i, s in enumerate(steps) if s is not None and s[:2] == s[-2:] == "__"), None)
                if own is not None:  # `x.__dict__`, `x.__class__`: the object's own state
                    found.append(("handed", steps[:own], top))
                    continue
                if access.context in (ast.Store, ast.Del):
                    found.append(("write", steps, top))
                    if steps and steps[-1] is None:  # `X[i] = v` runs X's own code
                        assert isinstance(top, ast.Subscript)  # the step a subscript makes: None (`unchain`)
                        found.append(("handed", steps[:-1], top.value))
                elif access.called and steps:
                    assert isinstance(top, (ast.Attribute, ast.Subscript))  # with steps, a chain (`unchain`)
                    found.append(("handed", steps[:-1], top.value))
                else:
                    found.append(("handed", steps, top))
            self._changes[id(bindings)] = found
        return self._changes[id(bindings)]


def _chains(node: ast.AST) -> Iterator[tuple[ast.Name, ast.expr, Steps]]:
    """Each name in `node`, in source order, with the part of its attribute and subscript
    chain that lies inside `node`: (`self`, `self.sems.at[i]`, ("sems", "at", None)), then (`i`, `i`, ())."""
    if not isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        for child in ast.iter_child_nodes(node):
            yield from _chains(child)
        return
    root, steps, links = unchain(node)
    if isinstance(root, ast.Name):
        yield root, node, steps
    else:
        yield from _chains(root)
    for link in reversed(links):
        yield from _chains(link.slice)
