"""A real editor: Neovim (Debian's, 0.7.2 or later), started headless with the README's Neovim
0.7 set-up as its init.lua, drives `semfix server` through its own LSP client
(tests/neovim/drive.lua): the diagnostics come, a quick fix and fix all are chosen from its
code action menu and applied, and marks placed beside and below the fixes stay where they were
(the server sends only the changed spans). .ci/run installs Neovim; elsewhere the test skips
without it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from semfix.api import fix_source
from tests.lsp_client import ROOT

KERNEL = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref, sem):
    pltpu.semaphore_signal(sem[...], 1)
    pltpu.semaphore_wait(sem[...])
    o_ref[0] = x_ref[0]
"""


def _nvim() -> str:
    found = shutil.which("nvim")
    if found is None:
        if os.environ.get("SEMFIX_REQUIRE_JAX") == "1":  # CI (.ci/run), which installs it
            pytest.fail("nvim not found: .ci/run installs Debian's neovim (apt-get install neovim)")
        pytest.skip("Neovim is not installed (Debian: apt-get install neovim)")
    return found


def readme_snippet() -> str:
    """The README's set-up for Neovim 0.7 (the Lua block after its heading), run as given."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"\*\*Neovim\*\* 0\.7 .*?```lua\n(.*?)```", readme, re.DOTALL)
    assert found, "README.md has no Lua block after **Neovim** 0.7"
    return found.group(1)


def test_neovim_applies_a_quick_fix_and_fix_all_keeping_its_marks(tmp_path: Path) -> None:
    nvim = _nvim()
    (tmp_path / "kernel.py").write_text(KERNEL)
    (tmp_path / "init.lua").write_text(readme_snippet())
    bin_folder = tmp_path / "bin"  # `semfix` as the README's snippet calls it: this checkout's
    bin_folder.mkdir()
    (bin_folder / "semfix").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m semfix "$@"\n')
    (bin_folder / "semfix").chmod(0o755)
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        "PATH": os.pathsep.join([str(bin_folder), os.environ.get("PATH", "")]),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SEMFIX_NVIM_OUT": str(out),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # none of the user's own configuration
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    drive = ROOT / "tests" / "neovim" / "drive.lua"
    command = [nvim, "--headless", "-n", "-u", "init.lua", "-c", f"luafile {drive}", "kernel.py"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90, check=False)
    assert out.exists(), f"Neovim wrote nothing (exit {done.returncode}): {done.stdout}{done.stderr}"
    seen = json.loads(out.read_text())
    assert seen.get("error") is None, seen
    assert seen["steps"] == [
        "diagnostics",
        "chose semfix (SEM001): replace `sem[...]` with `sem`",
        "the quick fix",
        "one diagnostic left",
        "chose semfix: fix all",
        "fix all",
        "no diagnostics",
    ]
    assert seen["lines"] == fix_source(KERNEL).source.splitlines()
    assert seen["mark"] == [8, 4]  # `o_ref[0]`: (1-based line, column) as placed
    assert seen["extmarks"] == [[1, 5, 4], [2, 6, 26]]  # beside each fix: (id, 0-based line, column) as placed
