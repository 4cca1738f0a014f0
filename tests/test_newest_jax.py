"""Notice the next JAX: read the newest release's facts from JAX itself and hold semfix to them.

The newest JAX on the package index is installed in a Python 3.12+ environment
(tests/jax_env.py) and tests/jax_facts.py reads, from it, the Pallas modules' `_deprecations`
tables, the signatures of their public callables and of the catalog's private paths, and what
tiny kernels raise when given a value for each semaphore and buffer parameter. Every fact the
catalog (semfix/catalog.py) or the table of JAX's errors (semfix/explain/errors.py) does not
hold fails a test that names it. The day a new JAX ships, CI says what changed; supporting it
means updating those tables and moving `jax_versions.NEWEST`, the runtime tier's pin.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from jax_env import Unavailable, find_python, require_jax_python

from semfix.catalog import DEPRECATED_AT_NEWEST, KINDS_NEEDED, MODULES, MOVED_TO_PALLAS, NOT_REF_PARAMETERS, Operation
from semfix.explain.errors import recognise
from semfix.jax_versions import NEWEST, spelled

pytestmark = [pytest.mark.network, pytest.mark.jax]

FACTS = Path(__file__).with_name("jax_facts.py")
#: Read out of a value, no TPU operation but this one is let through at trace time: JAX checks
#: `semaphore_read`'s argument nowhere before lowering (on the CPU: no rule for it at all).
UNCHECKED = {("semaphore_read", "sem_or_view")}


def _newest_release(python: str) -> str:
    """The newest JAX release the package index offers that Python."""
    listed = subprocess.run(
        [python, "-m", "pip", "index", "versions", "jax"], capture_output=True, text=True, timeout=120
    ).stdout
    found = re.search(r"^jax \(([^)]+)\)", listed, re.MULTILINE)
    if found is None:
        raise Unavailable(f"`pip index versions jax` gave no release: {listed[-300:]!r}")
    return found.group(1)


@pytest.fixture(scope="module")
def facts(pytestconfig: pytest.Config) -> dict[str, Any]:
    try:
        newest = _newest_release(find_python((3, 12)))
    except Unavailable as error:
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":
            pytest.fail(f"SEMFIX_REQUIRE_JAX=1 but the newest JAX cannot be found: {error}", pytrace=False)
        pytest.skip(f"the newest JAX cannot be found here: {error}")
    python = require_jax_python(newest, pytestconfig)
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    run = subprocess.run([python, str(FACTS)], capture_output=True, text=True, timeout=900, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    read: dict[str, Any] = json.loads(run.stdout)
    return read


def test_semfix_is_tested_on_the_newest_jax(facts: dict[str, Any]) -> None:
    assert facts["jax"] == spelled(NEWEST), (
        f"JAX {facts['jax']} is out; semfix is tested up to {spelled(NEWEST)}: once the other tests here pass on it,"
        " move semfix.jax_versions.NEWEST (the runtime tier's pin) and the README's range"
    )


def test_every_deprecation_in_the_pallas_modules_is_known(facts: dict[str, Any]) -> None:
    seen = {
        f"{module.removeprefix('jax.')}.{name}"
        for module, table in facts["deprecations"].items()
        if not module.startswith("jax._src")
        for name in table
    }
    assert sorted(seen - set(DEPRECATED_AT_NEWEST)) == [], "deprecated by JAX, unknown to the catalog"
    assert sorted(set(DEPRECATED_AT_NEWEST) - seen) == [], "no longer in JAX's deprecation tables"
    family = {name.rpartition(".")[2] for name, ours in DEPRECATED_AT_NEWEST.items() if ours}
    assert family <= {*MOVED_TO_PALLAS, "DeviceIdType"}, "of this family, yet moved by no migration rule"


def _place(signature: list[list[str]], name: str) -> int | None | str:
    """Where a parameter is: its position, None for keyword-only, "missing"."""
    positional = [p for p, kind in signature if kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    if name in positional:
        return positional.index(name)
    return None if [name, "KEYWORD_ONLY"] in signature else "missing"


def _catalog_params(operation: Operation) -> dict[str, int | None]:
    return {p.name: p.position for p in operation.sem_params + operation.buffer_params}


def test_the_catalog_places_each_parameter_where_jax_does(facts: dict[str, Any]) -> None:
    wrong = [
        f"{module}.{name}: {param} is {place!r} in JAX, {position!r} in the catalog"
        for module, operations in MODULES.items()
        if module in facts["signatures"]
        for name, operation in operations.items()
        if (signature := facts["signatures"][module].get(name)) is not None
        for param, position in _catalog_params(operation).items()
        if (place := _place(signature, param)) != position
    ]
    assert wrong == []


_REF_NAMES = {"sem", "sems", "semaphore", "semaphores", "barrier", "barriers"}


def _takes_a_ref(function: str, parameter: str) -> bool:
    """Named like a semaphore or barrier, or a copy's buffer: a parameter the catalog must know."""
    words = parameter.split("_")
    return (
        words[-1] in _REF_NAMES
        or words[0] == "sem"
        or ("copy" in function and (parameter in ("src", "dst") or parameter.endswith("_ref")))
    )


def test_every_public_pallas_parameter_named_for_a_ref_is_in_the_catalog(facts: dict[str, Any]) -> None:
    missing = []
    for module, callables in facts["signatures"].items():
        if module.startswith("jax._src"):
            continue
        short = module.removeprefix("jax.experimental.").removeprefix("jax.").removeprefix("pallas").lstrip(".")
        for name, signature in callables.items():
            if f"{short}.{name}" in NOT_REF_PARAMETERS:
                continue
            known = _catalog_params(operation) if (operation := MODULES.get(module, {}).get(name)) else {}
            missing += [
                f"{module}.{name}({param})"
                for param, _ in signature
                if _takes_a_ref(name, param) and param not in known
            ]
    assert missing == []


def test_every_error_jax_raises_for_a_value_is_a_row_about_that_parameter(facts: dict[str, Any]) -> None:
    assert len(facts["errors"]) >= 20
    unknown = []
    for op, param, stage, raised in facts["errors"]:
        if (op, param) in UNCHECKED:
            assert not raised.startswith("ValueError"), f"JAX now checks {op}'s {param}: {raised}"
            continue
        found = recognise(raised)
        if found is None:
            unknown.append(f"{op}({param}) [{stage}]: {raised}")
            continue
        row = found[0]
        where = f"{op}({param}) [{stage}] raised {raised!r}: row {row.key}"
        assert row.until is None, f"{where} says the newest JAX no longer raises it"
        assert op in row.operations, where
        if stage == "kind":
            assert row.wrong_kind and (op, param) in KINDS_NEEDED, where
        elif stage == "shape":
            assert row.key == "shape", where
        else:
            assert not row.wrong_kind and row.key != "shape", where
            assert row.suspects is None or param in row.suspects, where
    assert unknown == [], "errors the table of JAX's errors does not know"
