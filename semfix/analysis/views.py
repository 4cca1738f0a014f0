"""Which Ref a chain of `.at[...]` views reaches, and with which indices: `unview`.

A view is a Ref whatever it views, and it keeps what it views: `row = flags.at[slot];
row.at[0]` views `flags` with the indices `(slot,)`, then `(0,)`. A local bound once to a view
carries that view, so the rank, the semaphore kind and the evidence of the Ref it views hold for
the local too. An index that is a local bound once to a tuple display (`idx = (half, slot)`)
stands for its entries, as Python passes them.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from semfix.analysis.nodes import element_read, has_slice, is_at, read_target
from semfix.analysis.scopes import Scope


class View(NamedTuple):
    """What `.at[...]` views (followed through locals) start from, and each view's indices."""

    base: ast.expr  # the name or expression the views start from: `flags`
    scope: Scope  # the scope `base` is written in (a local's, when the view was bound to one)
    levels: tuple[tuple[ast.expr, ...], ...]  # each view's indices, innermost first; () for no view
    counted: bool  # False where an index may stand for any number of them (`...`, `*idx`)


def unview(node: ast.expr, scope: Scope) -> View:
    """The views `node` is made of: `.at[...]` subscripts, locals bound once (never declared
    global or nonlocal) to one or to another name (`row = sems`), and picks out of a
    comprehension of them (`picked`), through any number of each."""
    levels: list[tuple[ast.expr, ...]] = []
    counted, followed = True, set()
    while True:
        if isinstance(node, ast.Subscript) and is_at(node.value):
            entries, known = indices(node, scope)
            levels.insert(0, entries)
            counted = counted and known
            node = node.value.value
            continue
        bound = picked(node, scope) or _bound_once(node, scope, ("assign",))
        if bound is None or id(bound[0]) in followed or not _names_a_ref(bound[0]):
            break
        followed.add(id(bound[0]))
        node, scope = bound
    return View(node, scope, tuple(levels), counted)


def _names_a_ref(value: ast.expr) -> bool:
    """Does a local bound once to `value` name what `value` names: a view (`sems.at[i]`), or
    another name or attribute chain (`row = sems`, `row = held.sems`: the Ref itself, seen
    whole)?"""
    if isinstance(value, ast.Subscript):
        return is_at(value.value)
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name)


def picked(node: ast.expr, scope: Scope) -> tuple[ast.expr, Scope] | None:
    """What `views[k]` picks, where the local `views` is bound once to a comprehension
    (`[sems.at[i] for i in range(n)]`, `tuple(... for ...)`, `{i: ... for ...}`): its element
    expression, seen from the scope `views` is bound in, where the Ref it starts from is no
    name the comprehension binds (its loop variables may index it). None for a slice, which
    picks a container."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)) or has_slice(node):
        return None
    bound = _bound_once(node.value, scope, ("assign",))
    if bound is None:
        return None
    made, owner = bound
    if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) and made.func.id in ("tuple", "list"):
        if len(made.args) != 1 or made.keywords or owner.lookup(made.func.id)[1]:  # shadowed: not the builtin
            return None
        made = made.args[0]  # `tuple(... for ...)`
    elif isinstance(made, ast.GeneratorExp):  # a generator is not indexed
        return None
    if isinstance(made, (ast.ListComp, ast.GeneratorExp, ast.DictComp)):
        element = made.value if isinstance(made, ast.DictComp) else made.elt
    else:
        return None
    root = element
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    own = {n.id for g in made.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
    return (element, owner) if isinstance(root, ast.Name) and root.id not in own else None


def unread(node: ast.expr, scope: Scope) -> tuple[ast.expr, Scope]:
    """The Ref a semaphore argument reads whole (`sems.at[i][...]`, or a local bound once to such
    a read: `done = sems.at[i][...]`), with the scope it is written in: what the fixes of a read
    pass instead, so evidence read from it holds before and after their fixes. Else the argument."""
    bound = _bound_once(node, scope, ("read",))
    if bound is not None and read_target(bound[0]) is not None:
        node, scope = bound
    return read_target(node) or node, scope


def indices(subscript: ast.Subscript, scope: Scope) -> tuple[tuple[ast.expr, ...], bool]:
    """The indices a subscript gives, a tuple held in a local spread out; and whether their
    number is known (not with `...` or `*idx`)."""
    entries = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
    found: list[ast.expr] = []
    for entry in entries:
        bound = _bound_once(entry, scope, ("tuple_literal",))
        if bound is not None and isinstance(bound[0], ast.Tuple):
            found.extend(bound[0].elts)
        else:
            found.append(entry)
    known = not any(isinstance(e, ast.Starred) or (isinstance(e, ast.Constant) and e.value is Ellipsis) for e in found)
    return tuple(found), known


def _bound_once(node: ast.expr, scope: Scope, kinds: tuple[str, ...]) -> tuple[ast.expr, Scope] | None:
    """The value a name is bound to, with the scope of its assignment, where one plain
    assignment of one of `kinds` binds it and nothing else does."""
    if not isinstance(node, ast.Name):
        return None
    owner, bindings = scope.lookup(node.id)
    if owner is None or len(bindings) != 1 or bindings[0].kind not in kinds or bindings[0].declared:
        return None
    return bindings[0].value, owner


def viewed_read(node: ast.expr, scope: Scope) -> tuple[ast.Subscript, tuple[ast.expr, ...], Scope, bool] | None:
    """`sems[0]` in `sems[0].at[1]` (a view taken of a value: jnp's `.at`, not a Ref's), with the
    indices of the views taken of it and the scope it is written in; also where a local bound
    once holds it or a view of it (`row = sems[0]` then `row.at[1]`; `one = sems[0].at[1]` then
    `one`: carried, True). None where the views start from anything else."""
    views: list[tuple[ast.Subscript, Scope]] = []
    carried, followed = False, set()
    while True:
        while isinstance(node, ast.Subscript) and is_at(node.value):
            views.insert(0, (node, scope))
            node = node.value.value
        bound = _bound_once(node, scope, ("assign",))
        if (
            bound is None
            or id(bound[0]) in followed
            or not (isinstance(bound[0], ast.Subscript) and is_at(bound[0].value))
        ):
            break
        followed.add(id(bound[0]))
        (node, scope), carried = bound, True
    bound = _bound_once(node, scope, ("read",)) if views and isinstance(node, ast.Name) else None
    read, owner = bound or (node, scope)
    if not views or not element_read(read):
        return None
    levels = tuple(entry for view, where in views for entry in indices(view, where)[0])
    return read, levels, owner, carried or bound is not None
