"""The import edits a migration needs: where a new import goes, and which imports it may drop.

A migration (the rename to `pl.` today) renames references as text, then asks `edit_imports` for the import
edits the renames need, as ruff's `get_or_import_symbol` or libcst's `AddImportsVisitor` would
make them. It imports no rule: its inputs are the tree, the text, the accesses the scope
builder recorded, the reads the renames took away, and the module to import (`Symbol`); its
output is text edits, each declared in `ImportChanges` as the tree the proof
(semfix/engine/proof.py) holds the new text to.

Placement. The new import reuses a module-level name already bound to the module
(`bound_name`); else it goes inside a function beside the import whose reads went (a lazy
import stays lazy); at module level in place of a dropped import where it stands sorted there,
or at its sorted place in that import's block (`import x` lines first, then `from` lines by
module and by the name imported, as isort and ruff's I001 sort them). That block holds the
dropped module's import, so in a
sorted file it is that module's section: no guess about which modules are first-party.

Pruning. An imported name goes only when nothing but the taken reads reads it: not another
read, not a string other than a docstring (a string annotation may read it), not a doctest in
a docstring, not a line of code masked as a comment (`OPAQUE_CODE`: a notebook's magics), not
the importers of a package's `__init__.py` (`Request.exported`), not a read of the loaded
module through a parent package (`jax.experimental.pallas.tpu.X` after `import jax`: only an
import of the module makes that attribute exist). A statement left with no name goes, its
blank lines and comments handed to the next.

What it cannot make sure of raises `Unsure`, whose words say why: the caller reports without
a fix.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field

from semfix.analysis.nodes import Located, Text, end_of, holder
from semfix.analysis.scopes import Access, Scope

Edit = tuple[int, int, str]


class Unsure(Exception):
    """The import edits are not sure here: the caller reports without fixing."""


@dataclass(frozen=True)
class Symbol:
    """A module imported from its parent package: `from {parent} import {name} as <alias>`."""

    parent: str  # jax.experimental
    name: str  # pallas

    @property
    def module(self) -> str:
        return f"{self.parent}.{self.name}"

    def statement(self, alias: str) -> ast.ImportFrom:
        return ast.ImportFrom(self.parent, [ast.alias(self.name, alias)], 0)

    def text(self, alias: str, newline: str) -> str:
        return f"from {self.parent} import {self.name} as {alias}{newline}"


@dataclass
class Request:
    """What the renames need: `symbol` bound to `alias` (`add`: no import binds it yet, one is
    added), and the imports the `taken` reads (the root names of the renamed references)
    resolved to pruned of the names nothing else reads. Every import pruned loads `loads`.
    `exported`: the module's names are read by its importers (a package's `__init__.py`), so
    no module-level import is pruned."""

    symbol: Symbol
    alias: str
    add: bool
    taken: list[ast.Name]
    loads: str
    exported: bool = False


@dataclass
class ImportChanges:
    """The fix as the proof sees it: each node whose id is a key becomes the nodes given (a
    reference its new spelling; an import statement none, itself cut down, or the new import
    beside it). `declare` turns the old tree into the declared one."""

    replaced: dict[int, tuple[ast.AST, list[ast.AST]]] = field(default_factory=dict)  # old node kept: its id stays its
    holders: dict[int, ast.AST] = field(default_factory=dict)  # the nodes holding them, by id

    def replace(self, node: ast.AST, new: list[ast.AST], holder: ast.AST) -> None:
        self.replaced[id(node)] = node, new
        self.holders[id(holder)] = holder

    def add(self, statement: ast.stmt, new: ast.stmt, holder: ast.AST, *, before: bool) -> None:
        now = self._now(statement)
        self.replace(statement, [new, *now] if before else [*now, new], holder)

    def _now(self, node: ast.AST) -> list[ast.AST]:
        return self.replaced.get(id(node), (node, [node]))[1]

    def declare(self) -> None:
        """Make the declared tree, in place: each replaced node swapped in its holder."""
        for node in self.holders.values():
            for name, value in ast.iter_fields(node):
                if isinstance(value, list):
                    value[:] = [new for item in value for new in self._now(item)]
                elif id(value) in self.replaced:
                    setattr(node, name, self.replaced[id(value)][1][0])


def bound_name(tree: ast.Module, symbol: Symbol) -> str | None:
    """The first module-level name bound to `symbol`'s module (as evidence.py finds it)."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == symbol.module and alias.asname:
                    return alias.asname
        elif isinstance(statement, ast.ImportFrom) and statement.module == symbol.parent and not statement.level:
            for alias in statement.names:
                if alias.name == symbol.name:
                    return alias.asname or symbol.name
    return None


def runs_first(tree: ast.Module, node: Located, scope: Scope, at: int) -> bool:
    """May `node` (read in `scope`) run on import before `tree.body[at]`, where an import binds
    its name? Yes if it is above it and runs on import itself (at module level, in a class
    body, a decorator, a default argument), or is in a function there that code above `at`
    may call (anything but imports and plain function definitions may)."""
    where = (node.lineno, node.col_offset)
    index = next(i for i, s in enumerate(tree.body) if (s.end_lineno, s.end_col_offset) >= where)
    if index >= at:
        return False
    while scope.kind != "function":
        if scope.parent is None:
            return True
        scope = scope.parent
    return not all(_quiet(statement) for statement in tree.body[index:at])


def _quiet(statement: ast.stmt) -> bool:
    """Does running this statement call nothing (an import, a def without decorators or calls
    in its defaults and annotations)?"""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        evaluated = [statement.args, *([statement.returns] if statement.returns else [])]
        calls = any(isinstance(n, ast.Call) for e in evaluated for n in ast.walk(e))
        return not statement.decorator_list and not calls
    return isinstance(statement, (ast.Import, ast.ImportFrom))


def _bound(alias: ast.alias, statement: ast.Import | ast.ImportFrom) -> str:
    if alias.asname is not None:
        return alias.asname
    return alias.name if isinstance(statement, ast.ImportFrom) else alias.name.split(".")[0]


@dataclass
class _Site:
    """An import statement a taken read resolves to: where it sits, what of it stays."""

    statement: ast.Import | ast.ImportFrom
    local: bool  # in a function (else at module level, perhaps under an `if` or a `try`)
    holder: ast.AST  # the node whose statement list holds it
    body: list[ast.stmt]  # that list
    keep: list[bool]  # per name it binds: False when only taken reads read it


@dataclass
class _Module:
    """What the edits look at: the tree, its text, its every node, the accesses to names."""

    tree: ast.Module
    text: Text
    nodes: list[ast.AST]
    accesses: dict[str, list[Access]]


def _sites(module: _Module, request: Request, at_module: list[tuple[ast.Name, Scope]]) -> list[_Site]:
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
                    # the ignore below: an import binding: its import
                    resolved[id(binding.node)] = (binding.node, owner.kind == "function")  # type: ignore[assignment]
                    if owner.kind == "module":
                        at_module.append((access.name, access.scope))
                else:
                    used.add((name, id(binding.node)))
    strings: set[int] = set()  # a statement that is only a string (a docstring) names nothing...
    named = re.compile(r"\b(?:" + "|".join(sorted(names)) + r")\b")
    spelled = set(named.findall(_unseen_code(module.text.text)))  # the names read unseen: their imports stay
    for node in module.nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names.intersection(node.names):
            name = min(names.intersection(node.names))
            raise Unsure(f"`{name}` is declared global or nonlocal at line {node.lineno}")
        if isinstance(node, ast.Expr):
            strings.add(id(node.value))
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            spelled.update(named.findall(_doctests(node.value) if id(node) in strings else node.value))
    loaded = any(  # the module read through a parent package: it must stay imported
        # the ignore below: an import's qualname is set
        _through_parent(binding.qualname, access.steps, request.loads)  # type: ignore[arg-type]
        for name, found in module.accesses.items()
        for access in found
        if id(access.name) not in taken
        for binding in access.scope.lookup(name)[1]
        if binding.kind == "import"
    )
    cache: dict[int, tuple[list[ast.stmt], list[int]]] = {}
    sites = []
    for statement, local in sorted(resolved.values(), key=lambda site: (site[0].lineno, site[0].col_offset)):
        bound = [_bound(alias, statement) for alias in statement.names]
        exported = request.exported and not local  # importers of the package may read it
        keep = [loaded or exported or n not in names or n in spelled or (n, id(statement)) in used for n in bound]
        sites.append(_Site(statement, local, *holder(module.tree, statement, cache), keep))
    return sites


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


def edit_imports(
    tree: ast.Module,
    text: Text,
    accesses: dict[str, list[Access]],
    request: Request,
    declared: ImportChanges,
    nodes: list[ast.AST] | None = None,
) -> list[Edit]:
    """The import edits `request` needs, as text edits declared in `declared`. `accesses` is
    every access to every name (a `Tracking` scope builder's); `nodes`, every node of the tree
    if the caller has them. Unsure for the rare placements it does not handle."""
    module = _Module(tree, text, list(ast.walk(tree)) if nodes is None else nodes, accesses)
    source, alias, add = text.text, request.alias, request.add
    unbound = [a.name for a in accesses.get(alias, ()) if not a.scope.lookup(alias)[1]] if add else []
    if unbound:  # the import added could bind it
        raise Unsure(f"`{alias}` is read where nothing binds it, at line {unbound[0].lineno}")
    newline = re.search(r"\r\n|\r|\n", source + "\n").group()  # type: ignore[union-attr]  # the first line break
    new_import = request.symbol.text(alias, newline)
    edits: list[Edit] = []
    emptied: dict[int, int] = {}
    kept_at_module: list[ast.stmt] = []
    placed = False
    at_module_reads: list[tuple[ast.Name, Scope]] = []
    sites = _sites(module, request, at_module_reads)
    dropped = {id(site.statement) for site in sites if not any(site.keep)}
    unswapped: list[ast.stmt] = []  # dropped at module level, where the new import would not stand sorted
    at: int | None = None  # where the new import goes at module level: above tree.body[at]
    for site in sites:
        statement = site.statement
        lines = _own_lines(text, statement)
        if lines is None:
            raise Unsure(f"an import that shares its line, at line {statement.lineno}")
        start, end = lines
        indent = source[start : start + statement.col_offset]
        new_text = source[start:end]
        if not all(site.keep):
            cut = copy.copy(statement)
            cut.names = [a for a, kept in zip(statement.names, site.keep) if kept]
            if cut.names:
                new_text = indent + without_unused(source[start + statement.col_offset : end], site.keep)
            else:
                new_text = ""
            declared.replace(statement, [cut] if cut.names else [], site.holder)
        at_module = site.body is tree.body  # not under an `if` or a `try`, nor in a function
        local = add and site.local
        swap = (
            add
            and at_module
            and not new_text
            and not placed
            and _sorted_in_place(module, statement, request.symbol, dropped)
        )
        if at_module and not new_text and not swap:
            unswapped.append(statement)
        if not new_text and not (local or swap):
            emptied[id(site.body)] = emptied.get(id(site.body), 0) + 1
            index = next(i for i, s in enumerate(site.body) if s is statement)
            # libcst drops the lines (blank or comments) above the last statement of a block with
            # it, which a text edit of the statement's lines keeps
            gap = index == 0 or end_of(site.body[index - 1])[0] + 1 != statement.lineno
            if emptied[id(site.body)] == len(site.body) or (index == len(site.body) - 1 and gap):
                raise Unsure(f"an import dropped at the end of a block, at line {statement.lineno}")
        if local or swap:
            first = bool(new_text) and _sorts_first(statement, request.symbol)  # a kept import may sort first
            new_text = new_text + indent + new_import if first else indent + new_import + new_text
            declared.add(statement, request.symbol.statement(alias), site.holder, before=not first)
            if swap:
                placed, at = True, tree.body.index(statement)
        elif new_text and at_module:
            kept_at_module.append(statement)
        if new_text != source[start:end]:
            edits.append((start, end, new_text))
    if add and not placed and not all(site.local for site in sites):
        if not kept_at_module and not unswapped:
            raise Unsure(f"no import block to put the {request.symbol.name} import in")
        at, edit = _insert_sorted(module, (kept_at_module or unswapped)[0], new_import, request, declared)
        edits.append(edit)
    if at is not None and any(runs_first(tree, name, scope, at) for name, scope in at_module_reads):
        raise Unsure(f"the `{alias}` import added would go below code that may run a renamed reference on import")
    return edits


def _own_lines(lines: Text, statement: ast.stmt) -> tuple[int, int] | None:
    """The statement's lines (with the line break); None if it shares them."""
    last, last_column = end_of(statement)
    text, start, end = lines.text, lines.starts[statement.lineno - 1], lines.after(last)
    before = text[start : start + statement.col_offset]
    after = text[lines.starts[last - 1] + last_column : end]
    if before.strip(" \t\f") or not re.fullmatch(r"[ \t\f]*(#[^\r\n]*)?(\r\n|\r|\n)", after):
        return None
    return start, end


def _insert_sorted(
    module: _Module, anchor: ast.stmt, new_import: str, request: Request, declared: ImportChanges
) -> tuple[int, Edit]:
    """Above which module-level statement, and as what edit, the new import goes at its sorted
    place in the module-level block of imports around `anchor` (imports alone on their lines,
    no blank line between), declared in `declared`."""
    body, text, starts = module.tree.body, module.text.text, module.text.starts

    def imported(i: int) -> bool:
        s = body[i]
        return (
            isinstance(s, (ast.Import, ast.ImportFrom))
            and s.names[0].name != "*"
            and _own_lines(module.text, s) is not None
        )

    def gap(i: int) -> bool:  # a blank line between body[i - 1] and body[i]
        between = range(end_of(body[i - 1])[0] + 1, body[i].lineno)
        return any(not text[starts[n - 1] : starts[n]].strip() for n in between)

    start = end = body.index(anchor)
    while start > 0 and imported(start - 1) and not gap(start):
        start -= 1
    while end + 1 < len(body) and imported(end + 1) and not gap(end + 1):
        end += 1
    # the ignore below: the block: imports (`imported`)
    first = (i + 1 for i in range(start, end + 1) if _sorts_first(body[i], request.symbol))  # type: ignore[arg-type]
    at = max(first, default=start)
    before = at == start  # nothing in the block sorts first
    neighbour = body[start] if before else body[at - 1]
    # the ignore below: own lines (`imported`)
    offset = starts[neighbour.lineno - 1] if before else _own_lines(module.text, neighbour)[1]  # type: ignore[index]
    declared.add(neighbour, request.symbol.statement(request.alias), module.tree, before=before)
    return at, (offset, offset, new_import)


def _sorts_first(statement: ast.Import | ast.ImportFrom, symbol: Symbol) -> bool:
    """Would ruff's I001 (isort's profile) put this import ahead of `from {symbol.parent}
    import {symbol.name}`? Within a section `import x` lines come first, then `from` lines by
    module, and `from` lines of one module by the name they import (`pallas` before
    `shard_map`); `__future__` comes first of all, relative imports last."""
    if isinstance(statement, ast.Import):
        return True
    module: str = statement.module or ""
    if statement.level:
        return False
    return module == "__future__" or (module.lower(), _member(statement.names[0].name)) < (
        symbol.parent.lower(),
        _member(symbol.name),
    )


def _member(name: str) -> tuple[int, str]:
    """isort's order of imported names: CONSTANTS, then Classes, then the rest."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower()


def _sorted_in_place(module: _Module, statement: ast.stmt, symbol: Symbol, dropped: set[int]) -> bool:
    """Would the new import stand sorted where `statement` (dropped) is, between the imports
    kept above and below it in its block (no blank line between)?"""
    body, text, starts = module.tree.body, module.text.text, module.text.starts

    def neighbour(index: int, step: int) -> ast.Import | ast.ImportFrom | None:
        while 0 <= index + step < len(body):
            before, after = (body[index + step], body[index]) if step < 0 else (body[index], body[index + step])
            between = range(end_of(before)[0] + 1, after.lineno)
            if any(not text[starts[n - 1] : starts[n]].strip() for n in between):
                return None  # a blank line ends the block
            index += step
            statement = body[index]
            if not isinstance(statement, (ast.Import, ast.ImportFrom)):
                return None
            if id(statement) not in dropped:
                return statement
        return None

    index = body.index(statement)
    above, below = neighbour(index, -1), neighbour(index, 1)
    return (above is None or _sorts_first(above, symbol)) and (below is None or not _sorts_first(below, symbol))


def without_unused(snippet: str, keep: list[bool]) -> str:
    """One import statement's text, from its first token through its line break, keeping the
    names `keep` marks (at least one): libcst fixes the commas and keeps the comments."""
    import libcst as cst  # only files whose imports are pruned pay for it

    statement = snippet.rstrip("\r\n")
    parsed = cst.parse_module(statement + "\n")  # libcst loses a lone `\r` at the end of a module
    line: cst.SimpleStatementLine = parsed.body[0]  # type: ignore[assignment]  # one import statement
    small: cst.Import | cst.ImportFrom = line.body[0]  # type: ignore[assignment]  # one import statement
    names = [alias for alias, kept in zip(small.names, keep) if kept]  # type: ignore[arg-type]  # never a star import
    parenthesized = isinstance(small, cst.ImportFrom) and small.lpar
    if names[-1] is not small.names[-1] and not parenthesized:  # type: ignore[index]  # never a star import
        names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    kept = line.with_changes(body=[small.with_changes(names=names)])
    return parsed.with_changes(body=[kept]).code[:-1] + snippet[len(statement) :]
