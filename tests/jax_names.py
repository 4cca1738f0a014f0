"""The public names of `jax.experimental.pallas` and `jax.experimental.pallas.tpu` in one JAX
release, read from its wheel's source without installing it (tests/test_jax_removals.py).

A name is public when the module binds it at its top level (an import, an assignment, a def or
a class, not deleted after) or its `_deprecations` table still gives an object for it (a
deprecated name still works; one mapped to None is removed). For each public enum the module
imports from `jax._src`, each member is a name too (`MemorySpace.HOST`): a member removed is an
AttributeError just as a name removed is, and no `_deprecations` table lists it.
"""

from __future__ import annotations

import ast
import zipfile

MODULES = ("jax.experimental.pallas", "jax.experimental.pallas.tpu")


def public_names(wheel: zipfile.ZipFile, module: str) -> set[str]:
    bound = _bound(wheel, module)
    public = {name for name in bound if not name.startswith("_")}
    members = {
        f"{name}.{member}"
        for name in public
        if (source := bound[name]) and source[0].startswith("jax._src")
        for member in _enum_members(wheel, *source)
    }
    return public | members


def _bound(wheel: zipfile.ZipFile, module: str) -> dict[str, tuple[str, str] | None]:
    """Each name the module binds at its top level: where a from-import takes it from (else None).
    A star import binds the other module's names; a deprecation table, the names it still gives
    (those of a table it unpacks, `**_pallas._deprecations`, too)."""
    tree = _parse(wheel, module)
    bound: dict[str, tuple[str, str] | None] = {}
    if tree is None:
        return bound
    modules: dict[str, str] = {}  # `import jax.pallas as _pallas`
    for statement in _top_level(tree.body):
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            for alias in statement.names:
                if alias.name == "*":
                    found = _bound(wheel, statement.module)
                    bound.update((n, s) for n, s in found.items() if not n.startswith("_"))
                else:
                    bound[alias.asname or alias.name] = (statement.module, alias.name)
        elif isinstance(statement, ast.Import):
            for alias in statement.names:
                bound[alias.asname or alias.name.partition(".")[0]] = None
                modules[alias.asname or alias.name] = alias.name
        elif isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            bound[statement.name] = None
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            bound.update(dict.fromkeys(names))
            if "_deprecations" in names and isinstance(statement.value, ast.Dict):
                bound.update(dict.fromkeys(_still_given(wheel, statement.value, modules)))
        elif isinstance(statement, ast.Delete):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    bound.pop(target.id, None)
    return bound


def _still_given(wheel: zipfile.ZipFile, table: ast.Dict, modules: dict[str, str]) -> set[str]:
    """The names a `_deprecations` table still gives an object for (None: removed)."""
    given = set()
    for key, value in zip(table.keys, table.values):
        if key is None:  # `**_pallas._deprecations`: that module's table
            if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in modules:
                other = _parse(wheel, modules[value.value.id])
                for statement in _top_level(other.body if other else []):
                    if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Dict):
                        if any(isinstance(t, ast.Name) and t.id == "_deprecations" for t in statement.targets):
                            given |= _still_given(wheel, statement.value, {})
        elif isinstance(key, ast.Constant) and isinstance(value, ast.Tuple) and not _is_none(value.elts[-1]):
            given.add(key.value)
    return given


def _top_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run on import, but a `TYPE_CHECKING` branch (for type checkers only)."""
    found = []
    for statement in body:
        if isinstance(statement, ast.If):
            checking = "TYPE_CHECKING" in ast.unparse(statement.test)
            found += _top_level(statement.orelse if checking else statement.body + statement.orelse)
        elif isinstance(statement, ast.Try):
            found += _top_level(statement.body)
        else:
            found.append(statement)
    return found


def _enum_members(wheel: zipfile.ZipFile, module: str, name: str) -> set[str]:
    tree = _parse(wheel, module)
    for statement in tree.body if tree else ():
        if isinstance(statement, ast.ClassDef) and statement.name == name:
            if not any(ast.unparse(base).endswith("Enum") for base in statement.bases):
                return set()
            return {
                target.id
                for item in statement.body
                if isinstance(item, ast.Assign)
                for target in item.targets
                if isinstance(target, ast.Name) and not target.id.startswith("_")
            }
    return set()


def _parse(wheel: zipfile.ZipFile, module: str) -> ast.Module | None:
    path = module.replace(".", "/")
    for name in (f"{path}.py", f"{path}/__init__.py"):
        try:
            return ast.parse(wheel.read(name))
        except KeyError:
            continue
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def main() -> None:
    """`python jax_names.py WHEEL...`: each wheel's names, as one JSON object by wheel file name."""
    import json
    import sys

    found = {}
    for path in sys.argv[1:]:
        with zipfile.ZipFile(path) as wheel:
            found[path.rpartition("/")[2]] = sorted(
                f"{module.removeprefix('jax.')}.{name}" for module in MODULES for name in public_names(wheel, module)
            )
    print(json.dumps(found))


if __name__ == "__main__":
    main()
