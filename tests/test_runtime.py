"""The JAX runtime tier: buggy kernels fail in JAX the way the rule says, fixed ones compute.

Every fixture with a "runtime" entry in case.json is run on the CPU in interpret mode.
Without JAX these tests skip, unless SEMFIX_REQUIRE_JAX=1 (set by .ci/run) turns that into a
failure, so CI cannot pass without having run them.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import Case, fixture_cases, require_jax

from semfix.explain.errors import recognise
from semfix.jax_versions import parse

require_jax()
import numpy as np  # noqa: E402 (JAX brings NumPy)

pytestmark = pytest.mark.jax

CASES = [case for case in fixture_cases() if "runtime" in case.spec]


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module


def test_there_are_enough_runtime_kernels() -> None:
    assert len(BUGGY) >= 6 and CORRECT
    changes = [change for case in BUGGY for change in case.spec.get("changes", [])]
    assert {"SEM001", "SEM002", "SEM003", "SEM005"} <= {change.split()[1] for change in changes}


BUGGY = [case for case in CASES if "error" in case.spec["runtime"]]
CORRECT = [case for case in CASES if case.spec["runtime"].get("runs_as_written")]


# A kernel that reads a name this JAX no longer has fails with AttributeError, one that passes a
# keyword it no longer takes with TypeError (its "error" starts with the type: "AttributeError: ...");
# every other one with the ValueError of the bug its rule finds.
NAMED_TYPE = re.compile(r"(AttributeError|TypeError): ")


@pytest.mark.parametrize("case", BUGGY, ids=[c.name for c in BUGGY])
def test_buggy_kernel_raises_the_jax_error(case: Case) -> None:
    module = _load(case.folder / "before.py", f"semfix_rt_before_{case.slug}")
    error = case.spec["runtime"]["error"]
    named = NAMED_TYPE.match(error)
    kind = {"AttributeError": AttributeError, "TypeError": TypeError}[named.group(1)] if named else ValueError
    with pytest.raises(kind, match=error[named.end() if named else 0 :]):
        module.run()


@pytest.mark.parametrize("case", CORRECT, ids=[c.name for c in CORRECT])
def test_correct_kernel_runs_as_written_and_is_left_alone(case: Case) -> None:
    assert case.fix(case.before).source == case.before
    assert case.fix(case.before).findings == ()
    module = _load(case.folder / "before.py", f"semfix_rt_asis_{case.slug}")
    np.testing.assert_allclose(np.asarray(module.run()), module.expected())


# A kernel whose findings are all report-only (SEM006's) is left as it is: it still fails.
REPORTED = [case for case in BUGGY if not case.spec.get("changes")]
FIXED = [case for case in CASES if case not in REPORTED]


@pytest.mark.parametrize("case", REPORTED, ids=[c.name for c in REPORTED])
def test_report_only_kernel_is_left_as_it_is_and_reported(case: Case) -> None:
    result = case.fix(case.before)
    assert result.source == case.before
    assert result.findings and not any(f.applied for f in result.findings)


@pytest.mark.parametrize("case", FIXED, ids=[c.name for c in FIXED])
def test_fixed_kernel_runs_and_computes(case: Case, tmp_path: Path) -> None:
    fixed = tmp_path / "fixed.py"
    fixed.write_bytes(case.fix(case.before).source)
    module = _load(fixed, f"semfix_rt_fixed_{case.slug}")
    np.testing.assert_allclose(np.asarray(module.run()), module.expected())


MIGRATED = [case for case in CASES if "SEM101" in case.spec.get("settings", {}).get("extend_select", ())]


@pytest.mark.parametrize("case", MIGRATED, ids=[c.name for c in MIGRATED])
def test_migrated_kernel_runs_with_the_deprecated_tpu_names_removed(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JAX 0.11 removes the names 0.10's `pltpu._deprecations` lists: emulated on 0.10 (its
    warning is given once per process, so it cannot tell), the migrated kernel still runs."""
    from jax.experimental.pallas import tpu as pltpu

    def removed(name: str) -> object:
        raise AttributeError(f"module 'jax.experimental.pallas.tpu' has no attribute {name!r}")

    assert {"semaphore_wait", "DeviceIdType"} <= set(pltpu._deprecations)
    monkeypatch.setattr(pltpu, "__getattr__", removed)
    fixed = tmp_path / "fixed.py"
    fixed.write_bytes(case.fix(case.before).source)
    module = _load(fixed, f"semfix_rt_migrated_{case.slug}")
    np.testing.assert_allclose(np.asarray(module.run()), module.expected())


def test_error_texts_are_in_the_table_of_jax_errors_with_the_rules_that_find_them() -> None:
    """Each buggy kernel's error, on every JAX it records one for (0.10.2's `error`, and each
    release's own text in `errors` where it differs), is a row of semfix/explain/errors.py whose
    rules include the case's and whose releases include that one. A name JAX removed
    (AttributeError) is SEM101's to migrate, a keyword it renamed (TypeError) SEM102's: not
    errors explain reads (jnp's `.at` of a value given as an argument, a TypeError too, is one)."""
    for case in BUGGY:
        rules = {item.split()[1] for item in case.spec.get("changes", []) + case.spec.get("reported", [])}
        texts = {"0.10.2": case.spec["runtime"]["error"], **case.spec["runtime"].get("errors", {})}
        for release, text in texts.items():
            if text.startswith(("AttributeError", "TypeError")) and "as a JAX value" not in text:
                assert rules & {"SEM101", "SEM102"}, case.name
                continue
            recognised = recognise(text.replace("\\", ""))
            assert recognised is not None, (case.name, release)
            row = recognised[0]
            assert rules & set(row.rules), (case.name, release)
            assert row.since <= parse(release) <= (row.until or parse(release)), (case.name, release, row.key)
