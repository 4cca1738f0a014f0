"""What an import edit is made of: the request (`Symbol`, `Request`), the changes declared for
the proof (`ImportChanges`), the module the edits look at, and `Unsure` for what they cannot
make sure of (semfix/analysis/importer.py puts them together)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from semfix.analysis.nodes import Text, alone_on_its_lines, end_of
from semfix.analysis.scopes import Access

# After an import alone on its lines: a comment, and the line break its removal takes too.
_ENDS_ITS_LINE = re.compile(r"[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)\Z")

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
    no module-level import is pruned; `kept`: those of its names that other modules import
    (`Settings.imported_by_run`), whose module-level imports are not pruned. `moved`: the names
    of `loads` that are the very objects of `symbol`'s module's names at the project's floor:
    one kept only for importers is imported from there instead (the TPU module's `DeviceIdType`
    is gone in JAX 0.11, `pl`'s is the same enum from 0.6: issue 36), in place where it stands
    sorted there. `gone`: roots of reads the fix removes whose names stay read (a dropped
    keyword's `pl` where the renames write `pl`): they prune nothing, and load nothing. `stale`:
    module-level imports of `loads` that no taken read may resolve to, whose `gone_names` (names
    `loads` has no more at the newest JAX) nothing reads are dropped, or where a string or an
    importer may read them, imported from `symbol`'s module if `moved`, else kept (an unused
    `from jax.experimental.pallas.tpu import DeviceIdType` fails on import from JAX 0.11)."""

    symbol: Symbol
    alias: str
    add: bool
    taken: list[ast.Name]
    loads: str
    exported: bool = False
    kept: frozenset[str] = frozenset()
    moved: frozenset[str] = frozenset()
    gone: list[ast.Name] = field(default_factory=list)
    stale: list[ast.ImportFrom] = field(default_factory=list)
    gone_names: frozenset[str] = frozenset()
    #: Filled in by the edits: the imports whose `moved` names stay (their new import would not
    #: stand sorted in their place), for the caller to report, and those whose names moved; each
    #: with those names.
    unmoved: list[tuple[ast.ImportFrom, list[ast.alias]]] = field(default_factory=list)
    moved_from: list[tuple[ast.ImportFrom, list[ast.alias]]] = field(default_factory=list)
    #: and the `stale` imports' `gone_names` that nothing reads but a string or an importer may,
    #: where they cannot move: kept, for the caller to report
    kept_gone: list[tuple[ast.ImportFrom, list[ast.alias]]] = field(default_factory=list)


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


@dataclass
class ModuleView:
    """What the edits look at: the tree, its text, its every node, the accesses to names."""

    tree: ast.Module
    text: Text
    nodes: list[ast.AST]
    accesses: dict[str, list[Access]]


def own_lines(lines: Text, statement: ast.stmt) -> tuple[int, int] | None:
    """The statement's lines (with the line break); None if it shares them (see
    `alone_on_its_lines`) or ends the file without a line break."""
    if not alone_on_its_lines(statement, lines, _ENDS_ITS_LINE):
        return None
    return lines.starts[statement.lineno - 1], lines.after(end_of(statement)[0])
