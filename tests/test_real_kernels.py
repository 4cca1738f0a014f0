"""Real Pallas kernels from the installed JAX: the skim must be sound on them, and planted bugs
must come back out byte for byte. Nothing from JAX is stored here; it is read at test time."""

from __future__ import annotations

import ast
import importlib.util
import os
from pathlib import Path

import pytest

from semfix import fix_source
from semfix.catalog import MODULES, may_contain_calls
from semfix.engine.run import analyse
from semfix.engine.skim import clears
from semfix.findings import Finding
from semfix.selection import build_settings

NO_MIGRATIONS = build_settings(select=["SEM0"])
_POSITIONS: dict[str, set[int]] = {}
for _ops in MODULES.values():
    for _op in _ops.values():
        _POSITIONS.setdefault(_op.name, set()).update(p.position for p in _op.sem_params if p.position is not None)


def _kernel_files() -> list[Path]:
    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.submodule_search_locations:
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":
            raise RuntimeError("SEMFIX_REQUIRE_JAX=1 but JAX is not installed")
        pytest.skip("JAX is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    return sorted(p for p in root.rglob("*.py") if "pallas" in str(p) and may_contain_calls(p.read_bytes()))


def _findings(source: bytes) -> tuple[Finding, ...]:
    """Every finding, never skimmed."""
    return analyse(source, NO_MIGRATIONS, apply_fixes=False).findings


def _plant(source: bytes) -> tuple[bytes, int]:
    """Append `[...]` to every plain semaphore argument: a name, an attribute or an `.at` view."""
    tree = ast.parse(source)
    ends = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        for index in _POSITIONS.get(name, ()):  # type: ignore[arg-type]
            if index >= len(node.args) or any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
                continue
            argument = node.args[index]
            at = argument.value if isinstance(argument, ast.Subscript) else None
            view = isinstance(at, ast.Attribute) and at.attr == "at"
            if isinstance(argument, (ast.Name, ast.Attribute)) or view:
                ends.add((argument.end_lineno, argument.end_col_offset))
    lines = [bytearray(line) for line in source.splitlines(keepends=True)]
    for line, column in sorted(ends, reverse=True):
        lines[line - 1][column:column] = b"[...]"  # type: ignore[index]
    return b"".join(lines), len(ends)


def test_the_skim_is_sound_on_real_kernels_and_clears_most() -> None:
    files = _kernel_files()
    cleared = 0
    for path in files:
        source = path.read_bytes()
        if clears(source):
            cleared += 1
            assert _findings(source) == (), path
    assert len(files) >= 10 and cleared * 2 >= len(files)


def test_bugs_planted_in_real_kernels_are_found_and_fixed_back() -> None:
    fixed = restored = 0
    for path in _kernel_files():
        original = path.read_bytes()
        planted, count = _plant(original)  # some land on JAX's own helpers of the same name
        if not count:
            continue
        result = fix_source(planted)
        if result.applied:
            assert not clears(planted), path
        fixed += len(result.applied)
        if len(result.applied) == count:
            assert result.source == original, path
            restored += 1
        assert fix_source(result.source).applied == (), path
    assert fixed >= 50 and restored >= 5
