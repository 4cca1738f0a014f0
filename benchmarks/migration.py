"""SEM101 on real code: the Pallas files of older pinned wheels, migrated, still compile and import.

Older releases of tpu-inference and sglang-jax still read the `pltpu` names JAX 0.10
deprecated and 0.11 removed (`catalog.TPU_MOVED_TO_PALLAS`). Each wheel is fetched with
`pip download --no-deps` (benchmarks/real.py's `fetch`, nothing committed), its files that
spell `pallas` are copied, and `semfix fix --extend-select SEM101` runs over the copy. Then:
  references: the reads of a removed name before and after, counted here on their own (imports
              resolved by hand, not by semfix), so a miss shows;
  compile:    every fixed file compiles;
  import:     each file is imported as its module (the wheel's tree first on sys.path) in a
              subprocess (its parent packages bare: their `__init__` is not run), before
              and after, on the JAX installed; after, also with the
              removed names made to raise AttributeError, as JAX 0.11 does. A file whose own
              dependencies are missing cannot be imported either way: it is counted as such,
              with the first line of its error.

    python benchmarks/migration.py [--work DIR] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from real import fetch  # noqa: E402

from semfix.catalog import TPU_MOVED_TO_PALLAS  # noqa: E402

# The newest releases whose kernels still read the removed names, and sglang-jax's only ones.
WHEELS = ("tpu-inference==0.13.3", "tpu-inference==0.18.0", "sglang-jax==0.0.1.post1")
TPU = "jax.experimental.pallas.tpu"
REPOSITORY = Path(__file__).parents[1]
REMOVED = frozenset(TPU_MOVED_TO_PALLAS)

# Run in a subprocess: import one module; "ok", or the error's first line. With "removed", the
# names JAX 0.10 deprecated raise AttributeError first, as they do in 0.11.
_IMPORT = """
import importlib, os, sys, types, warnings
warnings.simplefilter("ignore")
parts = sys.argv[1].split(".")
for end in range(1, len(parts)):  # the packages above, bare: their __init__ may need what is not installed
    package = types.ModuleType(".".join(parts[:end]))
    package.__path__ = [os.path.join(os.getcwd(), *parts[:end])]
    sys.modules[package.__name__] = package
if sys.argv[2] == "removed":
    from jax.experimental.pallas import tpu
    def removed(name):
        raise AttributeError(f"module {tpu.__name__!r} has no attribute {name!r}")
    tpu.__getattr__ = removed
try:
    importlib.import_module(sys.argv[1])
    print("ok")
except BaseException as error:
    print(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:160])
"""


def removed_references(tree: ast.Module) -> int:
    """Reads of a removed name: `<tpu module>.name`, where the TPU module is reached through
    any import of it or of a parent package, or a name imported from it."""
    modules: dict[str, str] = {}  # local name -> the module it is bound to
    imported: set[str] = set()  # names imported from the TPU module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                modules[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if node.module == TPU and alias.name in REMOVED:
                    imported.add(alias.asname or alias.name)
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in REMOVED and _dotted(node.value, modules) == TPU:
            count += 1
        elif isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load):
            count += 1
    return count


def _dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The module an attribute chain of imported names spells, if any."""
    if isinstance(node, ast.Name):
        return modules.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value, modules)
        return f"{base}.{node.attr}" if base else None
    return None


@dataclass
class Wheel:
    requirement: str
    files: int = 0
    with_removed: int = 0  # files reading a removed name before
    references_before: int = 0
    references_after: int = 0
    changed: int = 0
    compile_failures: list[str] = field(default_factory=list)
    imports: Counter[str] = field(default_factory=Counter)  # before/after outcome pairs
    regressions: list[str] = field(default_factory=list)  # imported before, not after
    cannot_import: Counter[str] = field(default_factory=Counter)  # why, when not before


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import(root: Path, module: str, mode: str) -> str:
    run = subprocess.run(
        [sys.executable, "-c", _IMPORT, module, mode],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    return (run.stdout.strip().splitlines() or [f"crashed: {run.stderr.strip()[-120:]}"])[-1]


def measure(requirement: str, work: Path, imports: bool = True) -> Wheel:
    """One wheel: fetch, copy its Pallas files' tree, migrate the copy, count and import."""
    source = fetch(work / requirement.replace("==", "-"), (requirement,))
    [before] = [p for p in source.iterdir() if p.is_dir()]
    after = work / "migrated" / before.name
    if after.exists():
        shutil.rmtree(after)
    shutil.copytree(before, after)
    result = Wheel(requirement)
    pallas = sorted(p.relative_to(before) for p in before.rglob("*.py") if b"pallas" in p.read_bytes())
    result.files = len(pallas)
    command = [sys.executable, "-m", "semfix", "fix", "--extend-select", "SEM101", "--target-jax", "0.10.2", "--quiet"]
    subprocess.run(
        [*command, *(str(after / p) for p in pallas)],
        check=False,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY)},
    )
    for relative in pallas:
        old, new = (before / relative).read_bytes(), (after / relative).read_bytes()
        found = removed_references(ast.parse(old))
        result.references_before += found
        result.with_removed += found > 0
        result.changed += old != new
        try:
            compile(new, str(relative), "exec")
            result.references_after += removed_references(ast.parse(new))
        except SyntaxError as error:
            result.compile_failures.append(f"{relative}: {error}")
        if imports and (found or old != new):
            name = _module_name(before / relative, before)
            was, now = _import(before, name, "plain"), _import(after, name, "plain")
            removed = _import(after, name, "removed")
            result.imports[f"before {_ok(was)}, after {_ok(now)}, after with 0.11's removals {_ok(removed)}"] += 1
            if was == "ok" and (now != "ok" or removed != "ok"):
                result.regressions.append(f"{relative}: {now if now != 'ok' else removed}")
            if was != "ok":
                result.cannot_import[was] += 1
    return result


def _ok(outcome: str) -> str:
    return "imports" if outcome == "ok" else "fails"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="download and unpack here (default: a temporary folder)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    arguments = parser.parse_args()
    work = arguments.work or Path(tempfile.mkdtemp(prefix="semfix-migration-"))
    results = [measure(requirement, work) for requirement in WHEELS]
    if arguments.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    for r in results:
        print(
            f"{r.requirement}: {r.files} Pallas files, {r.with_removed} read removed names "
            f"({r.references_before} references); {r.changed} changed; {r.references_after} left; "
            f"{len(r.compile_failures)} do not compile; {len(r.regressions)} imported before and not after"
        )
        for outcome, count in sorted(r.imports.items()):
            print(f"    {count} files: {outcome}")
        for why, count in r.cannot_import.most_common():
            print(f"    cannot import before ({count}): {why}")
        for line in [*r.compile_failures, *r.regressions]:
            print(f"    {line}")


if __name__ == "__main__":
    main()
