"""The migration to JAX 0.12 on real code: older wheels' Pallas files, migrated with every SEM1
rule at a declared floor of JAX 0.7, read no name of the family 0.12 removed or deprecates, and
import on 0.12.1 wherever they imported on 0.10.2.

Each wheel is fetched with `pip download --no-deps` (benchmarks/real.py's `fetch`, nothing
committed); its files that spell `pallas` (of JAX's own wheel, only its Pallas ops) are copied
with a `pyproject.toml` declaring `jax>=0.7` at the copy's root, from which semfix reads the
floor itself, and `semfix fix --extend-select SEM1` runs over the copy. Then:
  references: every read of a name of the family that JAX 0.12 removed or deprecates, by name,
              before and after, counted here on their own (imports resolved by hand, not by
              semfix, so a miss shows): the `pltpu` names `pl` now holds, `TPUMemorySpace`,
              the TPU enum's `ANY`, `DeviceIdType` however reached, and `device_id_type=`;
  left:       what semfix reported instead of fixing, with its reason;
  compile:    every fixed file compiles;
  import:     each file is imported as its module (its parent packages bare: their `__init__`
              is not run) in a subprocess: before on the JAX running this script (0.10.2),
              after on JAX 0.12.1 (tests/jax_env.py makes its env) with the Pallas family's
              DeprecationWarnings errors (tests/kernel_worker.py's strict mode). A file whose
              own dependencies are missing cannot be imported before: counted as such.

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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

REPOSITORY = Path(__file__).parents[1]
TESTS = REPOSITORY / "tests"
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(TESTS))
from jax_env import jax_python  # noqa: E402
from real import fetch  # noqa: E402

from semfix.catalog import MOVED_TO_PALLAS  # noqa: E402

# Older wheels whose kernels read the family's names (sglang-jax's newest release on PyPI is
# 0.0.1.post1), the newest ejkernel, and JAX 0.9.2's own Pallas ops; the folder of each that
# is measured ("": every file).
WHEELS = {
    "tpu-inference==0.13.3": "",
    "tpu-inference==0.22.1": "",
    "tpu-inference==0.30.0": "",
    "ejkernel==0.0.80.3": "",
    "sglang-jax==0.0.1.post1": "",
    "jax==0.9.2": "jax/experimental/pallas/ops",
}
FLOOR = "0.7"
AFTER_JAX = "0.12.1"
TPU = "jax.experimental.pallas.tpu"
TPU_MODULES = (TPU, "jax.pallas.tpu")
MOVED = frozenset(MOVED_TO_PALLAS)  # `pltpu.<name>`, which `pl` holds now
ENUMS = ("MemorySpace", "TPUMemorySpace")  # the TPU enum, whose `ANY` 0.9 removed

# Run in a subprocess: import one module; "ok", or the error's first line. Its parent packages
# are bare where the copy holds their `__init__.py`, so `jax.experimental.pallas.ops` comes from
# the copy while `jax` is the one installed. "strict": the family's deprecations are errors.
_IMPORT = """
import importlib, os, sys, types, warnings
parts = sys.argv[1].split(".")
if sys.argv[2] == "strict":
    sys.path.insert(0, sys.argv[3])
    import kernel_worker
    kernel_worker.fail_on_deprecations(kernel_worker.pallas_modules())
for end in range(1, len(parts)):
    path = os.path.join(os.getcwd(), *parts[:end])
    if os.path.exists(os.path.join(path, "__init__.py")):
        package = types.ModuleType(".".join(parts[:end]))
        package.__path__ = [path]
        sys.modules[package.__name__] = package
try:
    importlib.import_module(sys.argv[1])
    print("ok")
except BaseException as error:
    print(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:200])
"""


def family_references(tree: ast.Module) -> Counter[str]:
    """Each read of a name of the family JAX 0.12 removed or deprecates, by name: an attribute
    of the TPU module reached through any import of it or of a parent package, a name imported
    from it (the import counts too: it fails as the read does), `DeviceIdType` from any Pallas
    module, and the `device_id_type=` keyword of any call."""
    modules: dict[str, str] = {}  # local name -> the module it is bound to
    imported: dict[str, str] = {}  # local name -> the family name it imports
    found: Counter[str] = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                modules[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                name = _family(node.module, alias.name)
                if name:
                    imported[alias.asname or alias.name] = name
                    found[name] += 1
                modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and (base := _dotted(node.value, modules)):
            name = _family(base, node.attr)
            found.update([name] if name else [])
        elif isinstance(node, ast.Name) and node.id in imported and isinstance(node.ctx, ast.Load):
            found[imported[node.id]] += 1
        elif isinstance(node, ast.keyword) and node.arg == "device_id_type":
            found["device_id_type="] += 1
    return found


def _family(module: str, name: str) -> str | None:
    """`module.name`'s label if it is a name of the family, else None."""
    if name == "DeviceIdType" and module.startswith(("jax.experimental.pallas", "jax.pallas", "jax._src.pallas")):
        return "pltpu.DeviceIdType" if module in TPU_MODULES else "DeviceIdType"
    if module in TPU_MODULES and (name in MOVED or name == "TPUMemorySpace"):
        return f"pltpu.{name}"
    if name == "ANY" and module.rpartition(".")[::2] in {(tpu, enum) for tpu in TPU_MODULES for enum in ENUMS}:
        return "pltpu.MemorySpace.ANY"
    return None


def _dotted(node: ast.expr, modules: dict[str, str]) -> str | None:
    """The module (or module attribute) an attribute chain of imported names spells, if any."""
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
    with_family: int = 0  # files reading a name of the family before
    before: Counter[str] = field(default_factory=Counter)  # references by name
    after: Counter[str] = field(default_factory=Counter)
    changed: int = 0
    left: list[str] = field(default_factory=list)  # what semfix reported, not fixed: "file:line: message"
    compile_failures: list[str] = field(default_factory=list)
    imports: Counter[str] = field(default_factory=Counter)  # before/after outcome pairs
    regressions: list[str] = field(default_factory=list)  # imported before, not after: why
    cannot_import: Counter[str] = field(default_factory=Counter)  # why, when not before


def _module_name(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import(python: str, root: Path, module: str, mode: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"JAX_PLATFORMS": "cpu"}
    run = subprocess.run(
        [python, "-c", _IMPORT, module, mode, str(TESTS)],
        capture_output=True, text=True, cwd=root, timeout=300, env=env,
    )  # fmt: skip
    return (run.stdout.strip().splitlines() or [f"crashed: {run.stderr.strip()[-160:]}"])[-1]


def measure(requirement: str, work: Path, imports: bool = True) -> Wheel:
    """One wheel: fetch, copy its Pallas files, migrate the copy at the floor, count and import."""
    source = fetch(work / requirement.replace("==", "-"), (requirement,))
    [unpacked] = [p for p in source.iterdir() if p.is_dir()]
    under = WHEELS.get(requirement, "")
    tag = requirement.replace("==", "-")  # a package's releases unpack to folders of one name
    before, after = work / "before" / tag, work / "migrated" / tag
    for copy in (before, after):
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(unpacked / under, copy / under)
    (after / "pyproject.toml").write_text(f'[project]\nname = "migrated"\ndependencies = ["jax>={FLOOR}"]\n')
    result = Wheel(requirement)
    pallas = sorted(p.relative_to(before) for p in before.rglob("*.py") if b"pallas" in p.read_bytes())
    result.files = len(pallas)
    semfix = [sys.executable, "-m", "semfix"]
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    paths = [str(after / p) for p in pallas]
    subprocess.run([*semfix, "fix", "--extend-select", "SEM1", "--quiet", *paths], capture_output=True, env=env)
    report = subprocess.run(
        [*semfix, "check", "--extend-select", "SEM1", "--output-format", "json", *paths],
        capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    left = [f for f in json.loads(report or "[]") if f["rule"].startswith("SEM1")]
    result.left = [f"{Path(f['path']).relative_to(after)}:{f['line']}: {f['message']}" for f in left]
    for relative in pallas:
        old, new = (before / relative).read_bytes(), (after / relative).read_bytes()
        found = family_references(ast.parse(old))
        result.before += found
        result.with_family += bool(found)
        result.changed += old != new
        try:
            compile(new, str(relative), "exec")
            result.after += family_references(ast.parse(new))
        except SyntaxError as error:
            result.compile_failures.append(f"{relative}: {error}")
    if imports:
        newest = jax_python(AFTER_JAX, lambda said: print(said, file=sys.stderr))

        def both(relative: Path) -> tuple[Path, str, str]:
            name = _module_name(relative)
            return relative, _import(sys.executable, before, name, "plain"), _import(newest, after, name, "strict")

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for relative, was, now in pool.map(both, pallas):
                result.imports[f"{_ok(was)} → {_ok(now)}"] += 1
                if was == "ok" and now != "ok":
                    result.regressions.append(f"{relative}: {now}")
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
        print(json.dumps([vars(r) for r in results], indent=2))  # not asdict: it makes a Counter of its items
        return
    import jax

    for r in results:
        print(
            f"{r.requirement}: {r.files} Pallas files, {r.with_family} read the family's names "
            f"({r.before.total()} references); {r.changed} changed; {r.after.total()} left; "
            f"{len(r.compile_failures)} do not compile; {len(r.regressions)} imported before and not after"
        )
        print(f"    before: {dict(r.before.most_common())}")
        print(f"    after:  {dict(r.after.most_common())}")
        for outcome, count in sorted(r.imports.items()):
            print(f"    {count} files: {outcome} (JAX {jax.__version__} → {AFTER_JAX}, strict)")
        for why, count in r.cannot_import.most_common():
            print(f"    cannot import before ({count}): {why}")
        for line in [*r.left, *r.compile_failures, *r.regressions]:
            print(f"    {line}")


if __name__ == "__main__":
    main()
