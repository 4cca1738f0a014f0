"""Which names the modules of one run import from each other, so a fix keeps what a sibling reads.

A migration drops an import its renames leave unused; but a sibling module may import that very
name from the fixed one (`from .sync import DeviceIdType`), and would then fail on import. The
CLI names each file of a run as Python would (its dotted module name, and whether it is a
package's `__init__`); this reads their from-imports, resolves relative ones against the
importer's package, and answers, for each module of the run, the names the others import from
it by name (`*` for a star import: then every module-level name), or read as attributes of it where
they import the module itself (`from ringlib import compat` then `compat.pltpu`, `import
ringlib.compat as compat`: issue 36). Above its regular packages a
name runs through the folders that may be namespace packages up to the project root
(`semfix.files.module_names`), and which of them is on `sys.path` is not known: an import names
a module by any trailing part of its name (`ringlib.sync` names `src.ringlib.sync`). Naming
too many only keeps an import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

STAR = "*"


def names_imported(modules: Iterable[tuple[str, bool, bytes]]) -> dict[str, frozenset[str]]:
    """`modules`: each file of the run as (its dotted name, whether it is a package's
    `__init__`, its source); two files of one name answer for both. A source that does not
    parse imports nothing here (it is the run's to report)."""
    modules = list(modules)
    named: dict[str, set[str]] = {}  # each trailing part of a module's name: the modules it names
    for module, _, _ in modules:
        parts = module.split(".")
        for start in range(len(parts)):
            named.setdefault(".".join(parts[start:]), set()).add(module)
    found: dict[str, set[str]] = {}
    for importer, is_package, data in modules:
        if b"import" not in data:
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError):
            continue
        package = importer if is_package else importer.rpartition(".")[0]
        bound: dict[str, str] = {}  # each name an import binds: the module (or name) it is bound to
        attributes: list[ast.Attribute] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                attributes.append(node)
            elif isinstance(node, ast.Import):
                bound.update((a.asname, a.name) if a.asname else (a.name.partition(".")[0],) * 2 for a in node.names)
            elif isinstance(node, ast.ImportFrom) and (source := _resolve(package, node.level, node.module)):
                names = [alias.name for alias in node.names]
                for target in named.get(source, ()):
                    if target != importer:
                        found.setdefault(target, set()).update(names)
                bound.update((a.asname or a.name, f"{source}.{a.name}") for a in node.names)
        for node in attributes:  # `compat.pltpu`, `ringlib.compat.pltpu`: the module's name `pltpu`
            path = _dotted(node.value, bound)
            for target in named.get(path or "", ()):
                if target != importer:
                    found.setdefault(target, set()).add(node.attr)
    return {module: frozenset(names) for module, names in found.items()}


def _dotted(node: ast.expr, bound: dict[str, str]) -> str | None:
    """The module an attribute chain on an imported name reads (`ringlib.compat`), if it is one."""
    steps: list[str] = []
    while isinstance(node, ast.Attribute):
        steps.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in bound:
        return None
    return ".".join([bound[node.id], *reversed(steps)])


def _resolve(package: str, level: int, module: str | None) -> str | None:
    """The absolute name `from <level dots><module>` means in `package` (None: above the top)."""
    if not level:
        return module
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else [])) or None
