"""The package's shape (docs/design.md, "Layout"): each layer imports only the layers below it,
no module imports itself back through others, and only the rules know the rules' codes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "semfix"

#: Lowest first. A module may import its own layer and those before it, never one after it.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("semfix.errors", "semfix.patterns", "semfix.catalog", "semfix.jax_versions", "semfix.messages", "semfix.findings"),
    ("semfix.floor", "semfix.settings"),  # what a run is asked to do, as data: names no rule
    ("semfix.rewrite",),  # decoding, text edits, import edits, compiling
    ("semfix.files", "semfix.git", "semfix.cache"),  # files read and written, results kept: for every front door
    ("semfix.analysis",),  # scopes, evidence, what a rule sees: imports no rule
    ("semfix.rules", "semfix.selection"),  # the rules, and which of them run
    ("semfix.notebook",),  # a notebook's code cells as one module, and back: analyses nothing
    ("semfix.engine",),  # the driver: the skim, the loop over calls, run, apply and prove
    ("semfix.explain",),  # from a traceback to the file it names and the argument to blame
    ("semfix.api", "semfix.codemod", "semfix"),
    ("semfix.server",),  # the language server: a front door of its own, below the CLI that starts it
    ("semfix.cli", "semfix.__main__"),
)


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    for index, prefixes in enumerate(LAYERS):
        if any(module == p or (p != "semfix" and module.startswith(p + ".")) for p in prefixes):
            return index
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(module: str) -> set[str]:
    """The semfix modules `module` imports, at any depth (not under `if TYPE_CHECKING:`)."""
    found: set[str] = set()
    tree = ast.parse(MODULES[module].read_text())
    skipped = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _type_checking(node)
        for statement in node.body
        for n in ast.walk(statement)
    }
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "semfix"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "semfix":
            for alias in node.names:  # `from semfix.rules import sem003` imports a module
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)  # type: ignore[arg-type]
    return found - {module}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_its_own_layer_and_those_below(module: str) -> None:
    above = sorted(i for i in imports(module) if _layer(i) > _layer(module))
    assert not above, f"{module} (layer {_layer(module)}) imports {above}"


def test_no_import_cycle() -> None:
    graph = {module: imports(module) & MODULES.keys() for module in MODULES}
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(module) :], module]))
        if module in done:
            return
        for imported in sorted(graph[module]):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_front_doors_reach_the_engine_only_through_the_api() -> None:
    """The CLI and the server know files and text, never trees; neither imports the other's rooms
    (the layers keep the server from importing the CLI)."""
    hidden = ("semfix.analysis", "semfix.engine", "semfix.explain", "semfix.notebook", "semfix.rules.")
    for module in (m for m in MODULES if m.startswith(("semfix.cli", "semfix.server"))):
        reached = sorted(i for i in imports(module) if i.startswith(hidden))
        assert not reached, f"{module} imports {reached}"


def test_nothing_outside_the_cli_imports_it() -> None:
    """The click commands are the top room: the server, explain and the API import none of them,
    and what they share (reading, finding and writing files) sits below all three. Only
    `python -m semfix` (semfix/__main__.py) starts the CLI."""
    upward = {m: sorted(i for i in imports(m) if i.startswith("semfix.cli")) for m in MODULES}
    outside = {m: found for m, found in upward.items() if found and not m.startswith("semfix.cli")}
    assert outside == {"semfix.__main__": ["semfix.cli.main"]}


#: Data that names rules on purpose: the words of their findings, and the table of JAX's
#: errors with the rules that find each mistake before anything runs.
_NAMING_RULES = ("semfix.messages", "semfix.explain.errors")


def test_only_the_rules_name_a_rule_code() -> None:
    """What the driver must know of a rule is declared on its RULE (text gate, tree, settling)."""
    code = re.compile(r"\bSEM\d{3}\b")
    outside = [
        f"{module}:{number}"
        for module, path in MODULES.items()
        if not module.startswith("semfix.rules") and module not in _NAMING_RULES
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if code.search(line)
    ]
    assert not outside, outside
