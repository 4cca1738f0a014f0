"""Notice what a JAX release removed without a deprecation: each release's public names of
`jax.experimental.pallas` and `.tpu` (their public enums' members too), read from its wheel
(tests/jax_names.py), against the previous release's.

`pltpu.MemorySpace.HOST` raises AttributeError from 0.10.2 on, and no `_deprecations` table ever
named it: only such a comparison sees it. Every removal must be in `catalog.REMOVED_FROM_PALLAS`,
and one of this family in `catalog.TPU_MIGRATIONS`, removed in the release that removed it. The
wheels are fetched with `pip download --no-deps` (`--python-version 3.12` for those that need it)
into pytest's cache, and read by a Python 3.12+ (0.12's sources use its syntax).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from jax_env import Unavailable, find_python

from semfix.catalog import REMOVED_FROM_PALLAS, TPU_MIGRATIONS
from semfix.jax_versions import RELEASES, parse

pytestmark = pytest.mark.network

READER = Path(__file__).with_name("jax_names.py")
TPU = "experimental.pallas.tpu."


@pytest.fixture(scope="module")
def removed(pytestconfig: pytest.Config) -> dict[str, str]:
    """Each name a release removed: the release."""
    try:
        python = find_python((3, 12))
    except Unavailable as error:
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":
            pytest.fail(f"SEMFIX_REQUIRE_JAX=1 but no Python 3.12 reads JAX 0.12's source: {error}", pytrace=False)
        pytest.skip(f"no Python 3.12 here: {error}")
    wheels = pytestconfig.cache.mkdir("jax-wheels")
    for release in RELEASES:
        if not (wheels / f"jax-{release}-py3-none-any.whl").exists():
            options = ["--python-version", "3.12", "--only-binary=:all:"]
            command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", *options, "-d", str(wheels)]
            subprocess.run([*command, f"jax=={release}"], check=True, timeout=300)
    paths = [str(wheels / f"jax-{release}-py3-none-any.whl") for release in RELEASES]
    read = subprocess.run([python, str(READER), *paths], capture_output=True, text=True, check=True, timeout=600)
    names = json.loads(read.stdout)
    found: dict[str, str] = {}
    for previous, release in zip(RELEASES, RELEASES[1:]):
        before, now = (set(names[f"jax-{r}-py3-none-any.whl"]) for r in (previous, release))
        owners = {name.rpartition(".")[0] for name in now}  # the enums whose members are read now
        for name in before - now:
            owner = name.rpartition(".")[0]
            member = owner not in ("experimental.pallas", TPU[:-1])
            if not member or owner in owners:  # a member of an enum now a deprecated alias: not read
                found[name] = release
    return found


def test_every_name_a_release_removed_is_known(removed: dict[str, str]) -> None:
    assert sorted(set(removed) - set(REMOVED_FROM_PALLAS)) == [], "removed by JAX, unknown to the catalog"
    assert sorted(set(REMOVED_FROM_PALLAS) - set(removed)) == [], "in the catalog, removed by no release"


def test_each_removal_of_the_family_is_migrated_from_its_release(removed: dict[str, str]) -> None:
    for name, ours in REMOVED_FROM_PALLAS.items():
        if ours:
            assert name.startswith(TPU) and name.removeprefix(TPU) in TPU_MIGRATIONS, name
            assert TPU_MIGRATIONS[name.removeprefix(TPU)].removed == parse(removed[name]), name
