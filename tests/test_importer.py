"""The importer service (semfix/analysis/importer.py): below the rules, usable by any migration."""

from __future__ import annotations

import ast
from pathlib import Path

from semfix.analysis import importer
from semfix.analysis.importer import ImportChanges, Request, Symbol, edit_imports
from semfix.analysis.nodes import Text
from semfix.analysis.scopes import Tracking
from semfix.rewrite.text import apply_edits


def test_the_importer_imports_no_rule() -> None:
    tree = ast.parse(Path(importer.__file__).read_text())
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    modules |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("semfix.rules") for m in modules)


def _edits(source: str, taken: str, symbol: Symbol, alias: str, loads: str) -> str:
    tree, scopes = ast.parse(source), Tracking()
    scopes.build(tree)
    reads = [a.name for a in scopes.accesses[taken] if a.steps == ("semaphore_wait",)]
    declared = ImportChanges()
    edits = edit_imports(tree, Text(source), scopes.accesses, Request(symbol, alias, True, reads, loads), declared)
    return apply_edits(source, 0, len(source), sorted(edits))


def test_an_import_left_unused_is_swapped_for_the_new_one_in_place() -> None:
    source = "import os\nfrom jax.experimental.pallas import tpu as pltpu\n\nx = pltpu.semaphore_wait\n"
    new = _edits(source, "pltpu", Symbol("jax.experimental", "pallas"), "pl", "jax.experimental.pallas.tpu")
    assert new == "import os\nfrom jax.experimental import pallas as pl\n\nx = pltpu.semaphore_wait\n"


def test_a_kept_import_gets_the_new_one_at_its_sorted_place() -> None:
    source = "import os\nfrom jax.experimental.pallas import tpu as pltpu\n\nx = pltpu.semaphore_wait\ny = pltpu.VMEM\n"
    new = _edits(source, "pltpu", Symbol("jax.experimental", "pallas"), "pl", "jax.experimental.pallas.tpu")
    added = "import os\nfrom jax.experimental import pallas as pl\n"
    assert new.startswith(added + "from jax.experimental.pallas import tpu")
