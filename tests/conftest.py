"""Shared test helpers: the fixture cases under tests/fixtures/<group>/<case>/.

A group is a rule's code in lower case (`sem002/`) for the cases about that rule, or `general/`
for what cuts across rules (encodings, line endings, decoys, import styles, syntax). A case
whose kernel runs in JAX (case.json "runtime") is named `rt_...`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from semfix import FixResult, fix_source
from semfix.api import launched_by_run, read_through_run
from semfix.selection import build_settings
from semfix.settings import ReadThrough, Settings

FIXTURES = Path(__file__).parent / "fixtures"
# Every run analyses every file, unless a test asks for the cache (tests/test_cache.py): a result
# kept by one test must not answer for another that changes semfix in-process (a planted crash).
os.environ["SEMFIX_NO_CACHE"] = "1"

# Bounded in CI (a few hundred examples across the property tests, under a minute); the long
# profile, for a thorough run by hand: --hypothesis-profile=long or SEMFIX_HYPOTHESIS_PROFILE=long.
hypothesis_settings.register_profile("ci", max_examples=120, deadline=None)
hypothesis_settings.register_profile("long", max_examples=3000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("SEMFIX_HYPOTHESIS_PROFILE", "ci"))


@dataclass(frozen=True)
class Case:
    """One fixture folder: before.py, an optional after.py (absent: must stay unchanged)."""

    folder: Path

    @property
    def name(self) -> str:
        """`group/case`, as the test ids read: `sem002/proof_in_shadowing_scopes`."""
        return f"{self.folder.parent.name}/{self.folder.name}"

    @property
    def slug(self) -> str:
        """The name as one identifier (`sem002_proof_in_shadowing_scopes`), for module and file names."""
        return self.name.replace("/", "_")

    @property
    def before(self) -> bytes:
        return (self.folder / "before.py").read_bytes()

    @property
    def after(self) -> bytes:
        after = self.folder / "after.py"
        return after.read_bytes() if after.exists() else self.before

    @property
    def spec(self) -> dict:
        path = self.folder / "case.json"
        return json.loads(path.read_text()) if path.exists() else {}

    @property
    def siblings(self) -> list[Path]:
        """The other modules of the case's run, beside before.py (`launch.py`, which launches its
        kernel after `from .before import kernel`; `_compat.py`, which gives it `pltpu`): the
        folder is their package."""
        return [path for path in sorted(self.folder.glob("*.py")) if path.name not in ("before.py", "after.py")]

    @property
    def settings(self) -> Settings:
        """case.json "settings" (select, unsafe_fixes...), with what the run's other modules
        give before.py, as the CLI's run gives it (`launched_by_run`, `read_through_run`)."""
        settings = build_settings(**self.spec.get("settings", {}))
        if not self.siblings:
            return settings
        kernel = self.folder / "before.py"
        sources = {path: path.read_bytes() for path in [kernel, *self.siblings]}
        launched = launched_by_run(sources, [kernel]).get(kernel, ())
        return replace(
            settings,
            launched_by_run=launched,
            read_through=read_through_run(sources, [kernel]).get(kernel, ReadThrough()),
        )

    def fix(self, source: bytes) -> FixResult:
        """fix_source with the case's own settings (`settings`)."""
        return fix_source(source, settings=self.settings)


def _parses_here(case: Case) -> bool:
    """case.json "python": the oldest Python whose parser reads the fixture."""
    return sys.version_info >= tuple(int(part) for part in case.spec.get("python", "3").split("."))


def fixture_cases(*, newer: bool = False) -> list[Case]:
    """The fixtures this Python parses; with `newer`, those it cannot (semfix refuses them)."""
    folders = sorted(FIXTURES.glob("*/*/before.py"))
    cases = [Case(before.parent) for before in folders]
    return [case for case in cases if _parses_here(case) != newer]


def require_jax() -> None:
    """The runtime tier needs JAX: skip its module without it, unless SEMFIX_REQUIRE_JAX=1 (CI)."""
    try:
        import jax  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the environment
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":
            raise RuntimeError("SEMFIX_REQUIRE_JAX=1 but JAX is not installed: the runtime tier cannot run") from None
        pytest.skip(
            "JAX is not installed: pip install -e '.[test,jax]' to run the runtime tier", allow_module_level=True
        )
