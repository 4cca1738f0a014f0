"""Which imports a migration may drop.

Pruning. An imported name goes only when nothing but the taken reads reads it: not another
read, not a string other than a docstring (a string annotation may read it), not a doctest in
a docstring, not a line of code masked as a comment (`OPAQUE_CODE`: a notebook's magics), not
the importers of a package's `__init__.py` (`Request.exported`). A read of the loaded module
through a parent package (`jax.experimental.pallas.tpu.X` after `import jax`) needs one
module-level import of it to stay (only that makes the attribute exist): where none does, an
import of the module itself is kept, never a name imported from it (the deprecated names are
gone from it in JAX 0.11). A statement left with no name goes, its blank lines and comments
handed to the next.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from semfix.analysis.import_changes import ModuleView, Request, Unsure
from semfix.analysis.nodes import holder
from semfix.analysis.scopes import Scope
from semfix.patterns import whole


def _bound(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]


@dataclass
class Site:
    """An import statement a taken read resolves to: where it sits, what of it stays."""

    statement: ast.Import | ast.ImportFrom
    local: bool  # in a function (else at module level, perhaps under an `if` or a `try`)
    holder: ast.AST  # the node whose statement list holds it
    body: list[ast.stmt]  # that list
    keep: list[bool]  # per name it binds: False when only taken reads read it
    move: list[bool]  # per name: kept only for importers, and imported from `Request.moved_to` instead


def resolved_sites(module: ModuleView, request: Request, at_module: list[tuple[ast.Name, Scope]]) -> list[Site]:
    """The imports the taken reads resolve to, in source order (the taken reads of module-level
    ones noted in `at_module`). A read of one of their names bound otherwise there reads
    another variable. Unsure where one is imported in a class body or declared global or
    nonlocal (the reason names the line). A name a string spells (other than a docstring: a
    string annotation may read it) keeps its import."""
    names, taken = {root.id for root in request.taken}, {id(root) for root in request.taken}
    resolved: dict[int, tuple[ast.Import | ast.ImportFrom, bool]] = {}
    used: set[tuple[str, int]] = set()
    for name in names:
        for access in module.accesses.get(name, ()):
            owner, bindings = access.scope.lookup(name)
            if owner is None or any(b.kind != "import" for b in bindings):
                continue  # another variable (`del` binds too): a taken read resolves only to imports
            if owner.kind == "class":
                raise Unsure(f"an import in a class body, read at line {access.name.lineno}")
            for binding in bindings:
                if id(access.name) in taken:
                    statement = binding.node
                    assert isinstance(statement, (ast.Import, ast.ImportFrom))  # an import binding's node
                    resolved[id(statement)] = (statement, owner.kind == "function")
                    if owner.kind == "module":
                        at_module.append((access.name, access.scope))
                else:
                    used.add((name, id(binding.node)))
    dead = {  # the stale imports' names that nothing reads: dropped, or moved where a string may read them
        _bound(alias, statement)
        for statement in request.stale
        for alias in statement.names
        if alias.name in request.gone_names and not module.accesses.get(_bound(alias, statement))
    }
    strings: set[int] = set()  # a statement that is only a string (a docstring) names nothing...
    named = re.compile(whole(names | dead))
    spelled = set(named.findall(_unseen_code(module.text.text)))  # the names read unseen: their imports stay
    for node in module.nodes if names or dead else ():
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names.intersection(node.names):
            name = min(names.intersection(node.names))
            raise Unsure(f"`{name}` is declared global or nonlocal at line {node.lineno}")
        if isinstance(node, ast.Expr):
            strings.add(id(node.value))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            spelled.update(named.findall(_doctests(node.value) if id(node) in strings else node.value))
    gone = taken | {id(root) for root in request.gone}
    loaded = next(  # the module read through a parent package: some import of it must stay
        (
            access.name
            for name, found in module.accesses.items()
            for access in found
            if id(access.name) not in gone
            for binding in access.scope.lookup(name)[1]
            if binding.qualname is not None  # an import's: no other binding has one (`ScopeBuilder`)
            and _through_parent(binding.qualname, access.steps, request.loads)
        ),
        None,
    )
    for statement in request.stale:
        resolved.setdefault(id(statement), (statement, False))
    cache: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    sites = []
    for statement, local in sorted(resolved.values(), key=lambda site: (site[0].lineno, site[0].col_offset)):
        exported = request.exported and not local  # importers of the package may read it
        movable = isinstance(statement, ast.ImportFrom) and not statement.level and statement.module == request.loads
        keep, move, kept_gone = [], [], []
        for alias in statement.names:
            n = _bound(alias, statement)
            importer = exported or (n in request.kept and not local)
            if movable and n in dead and alias.name in request.gone_names:  # read nowhere, or by a string
                wanted = n in spelled or importer
                move.append(wanted and alias.name in request.moved)  # a move keeps it bound to the same object
                keep.append(wanted and not move[-1])
                kept_gone += [alias] if keep[-1] else []
                continue
            own = n not in names or n in spelled or (n, id(statement)) in used
            move.append(movable and importer and not own and alias.name in request.moved)
            keep.append((own or importer) and not move[-1])
        if kept_gone:
            assert isinstance(statement, ast.ImportFrom)  # `movable`
            request.kept_gone.append((statement, kept_gone))
        sites.append(Site(statement, local, *holder(module.tree, statement, cache), keep, move))
    if loaded is not None:
        _keep_loaded(module, request.loads, sites, loaded)
    return sites


def _keep_loaded(module: ModuleView, loads: str, sites: list[Site], read: ast.Name) -> None:
    """`read` reaches the module `loads` through a parent package, an attribute only an import
    of the module makes exist: unless a module-level import of it stays, keep the pruned ones that
    import the module itself (`from jax.experimental.pallas import tpu`). A name imported from it
    is no such import: the deprecated names are gone from it in JAX 0.11 (ImportError), so
    where only those load it, unsure."""
    pruned = {id(site.statement): site for site in sites}
    for statement in _module_level_imports(module.tree.body):
        site = pruned.get(id(statement))
        kept = [True] * len(statement.names) if site is None else site.keep
        if any(k and _loads(statement, alias, loads) for k, alias in zip(kept, statement.names)):
            return
    wanted = [
        (site, i)
        for site in sites
        for i, alias in enumerate(site.statement.names)
        if _loads(site.statement, alias, loads) and not _loads(site.statement, None, loads)
    ]
    if not wanted:
        why = f"`{loads}`, read through its parent package at line {read.lineno}, is loaded only by an import"
        raise Unsure(why + " of names it has no more from JAX 0.11")
    for site, i in wanted:
        site.keep[i] = True


def _loads(statement: ast.Import | ast.ImportFrom, alias: ast.alias | None, loads: str) -> bool:
    """Does this name of the statement (None: any, a from-import's module alone) import the
    module `loads` or one inside it?"""
    if isinstance(statement, ast.ImportFrom):
        if statement.level or statement.module is None:
            return False
        modules = [statement.module] + ([f"{statement.module}.{alias.name}"] if alias else [])
    else:
        modules = [alias.name] if alias else []
    return any(m == loads or m.startswith(loads + ".") for m in modules)


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run on import of the module: outside every function and class."""
    for statement in body:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            yield statement
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    yield from _module_level_imports(child.body)
            for name in ("body", "orelse", "finalbody"):
                yield from _module_level_imports(getattr(statement, name, []))


#: Marks a line of code semfix cannot read, kept as a comment: an IPython magic or shell line
#: the notebook layer masks (`pass  #semfix-magic#%time f(x)`). The names it spells may be read.
OPAQUE_CODE = "#semfix-magic#"
_OPAQUE_LINE = re.compile(re.escape(OPAQUE_CODE) + r"[^\r\n]*")
# A doctest's source lines in a docstring: `>>> code` and its `... more` lines.
_DOCTEST_LINE = re.compile(r"^[ \t]*(?:>>>|\.\.\.)(?: [^\r\n]*)?$", re.MULTILINE)


def _unseen_code(text: str) -> str:
    """The masked lines of code, which the tree does not hold (cheap when there are none)."""
    return "\n".join(_OPAQUE_LINE.findall(text)) if OPAQUE_CODE in text else ""


def _doctests(docstring: str) -> str:
    """A docstring's doctest lines: code that `doctest` runs with the module's names."""
    return "\n".join(_DOCTEST_LINE.findall(docstring)) if ">>>" in docstring else ""


def _through_parent(qualname: str, steps: tuple[str | None, ...], loads: str) -> bool:
    """Does `qualname` followed by the attribute `steps` reach the module `loads` as an
    attribute of a parent package (`jax.experimental.pallas.tpu`, `pallas.tpu`)? That attribute
    exists only while an import of the module runs, so none may be dropped."""
    attributes: list[str] = []
    for step in steps:
        if step is None:
            break
        attributes.append(step)
    dotted = ".".join([qualname, *attributes])
    return loads.startswith(qualname + ".") and (dotted == loads or dotted.startswith(loads + "."))


def without_unused(snippet: str, keep: list[bool]) -> str:
    """One import statement's text, from its first token through its line break, keeping the
    names `keep` marks (at least one): libcst fixes the commas and keeps the comments."""
    import libcst as cst  # only files whose imports are pruned pay for it

    statement = snippet.rstrip("\r\n")
    parsed = cst.parse_module(statement + "\n")  # libcst loses a lone `\r` at the end of a module
    line = parsed.body[0]
    assert isinstance(line, cst.SimpleStatementLine)  # one import statement
    small = line.body[0]
    assert isinstance(small, (cst.Import, cst.ImportFrom))  # one import statement
    aliases = small.names
    assert not isinstance(aliases, cst.ImportStar)  # `keep` is per name: a star import is never pruned
    names = [alias for alias, kept in zip(aliases, keep) if kept]
    parenthesized = isinstance(small, cst.ImportFrom) and small.lpar
    if names[-1] is not aliases[-1] and not parenthesized:
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    kept = line.with_changes(body=[small.with_changes(names=names)])
    return parsed.with_changes(body=[kept]).code[:-1] + snippet[len(statement) :]
