"""The oracle's package cases (issue 43 §4), without JAX: the grammar lays a case out as the
package `kern` (the kernel in `ops.py`, its launch in a sibling `api.py`, `pl`/`pltpu` through
`_compat.py`), the judge gives semfix what the CLI's run over that package gives it, and the
kernel worker imports a package sent from memory.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from kernel_worker import run_one
from oracle.grammar import LAYOUTS, build, generate, modules, plan_for
from oracle.judge import SAFE, files, read_back, run_semfix, write_case

from semfix.cli.main import main

SEEDS = range(120)


@pytest.mark.parametrize("layout", sorted(set(LAYOUTS)))
def test_the_grammar_lays_cases_out_as_packages(layout: str) -> None:
    """Every case of a layout renders its modules, each compiling, its mutants too; the launch
    is where the layout says and the kernel module reads Pallas as it says."""
    cases = [build(replace(plan_for(seed), layout=layout)) for seed in SEEDS]
    for case in cases:
        texts = [case.correct(), *(case.mutant(n, site.mutants[0][1]) for n, site in enumerate(case.sites))]
        for text in texts:
            parts = modules(text) or {"kernel": text}
            for name, source in parts.items():
                compile(source, f"kern/{name}.py", "exec")
        parts = modules(case.correct())
        if layout == "module":
            assert not parts and "def run():" in case.correct()
            continue
        wanted = {"ops"} | ({"api"} if "sibling" in layout else set()) | ({"_compat"} if "compat" in layout else set())
        assert set(parts) == wanted
        assert ("def run():" in parts["ops"]) == ("sibling" not in layout)
        assert ("from ._compat import pl, pltpu" in parts["ops"]) == ("compat" in layout)
        assert ("compat-module" in case.features) == ("compat" in layout)
    launched = [case for case in cases if "sibling-launch" in case.features]
    assert bool(launched) == ("sibling" in layout)
    assert all("pl.pallas_call(" not in modules(c.correct())["ops"] for c in launched if c.plan.launch != "pl.kernel")
    vias = {case.plan.via for case in launched}
    assert vias <= {"from", "module"} and (not launched or len(vias) == 2)


def test_generated_seeds_hold_every_layout() -> None:
    assert {generate(seed).plan.layout for seed in SEEDS} == set(LAYOUTS)


def test_the_judge_gives_semfix_what_the_cli_run_gives_it(tmp_path: Path) -> None:
    """A mutant read out of an allocation the sibling launch makes: the judge's findings are the
    CLI's over the package folder, module by module."""
    checked = 0
    for seed in SEEDS:
        case = build(replace(plan_for(seed), layout="sibling+compat", imports="plain"))
        reads = [
            (n, t) for n, site in enumerate(case.sites) if site.role == "sem" for m, t in site.mutants if m == "read"
        ]
        if "sibling-launch" not in case.features or not reads:
            continue
        mutant = case.mutant(*reads[0])
        folder = tmp_path / f"s{seed}"
        package = write_case(folder, mutant)
        assert read_back(package, mutant) == mutant and set(files(package, mutant)) == set(package.glob("[!_]*.py")) | {
            package / "_compat.py"
        }
        judged = run_semfix(mutant, SAFE, (tmp_path / f"j{seed}").absolute, apply_fixes=False).findings
        result = CliRunner().invoke(
            main, ["check", str(package), "--no-cache", "--select", "ALL", "--output-format", "concise"]
        )
        said = sorted(line.split(": ")[0] for line in result.output.splitlines() if ": SEM" in line)
        assert said == sorted(f"{package / Path(name).name}:{f.line}:{f.column}" for name, _, f in judged), seed
        checked += bool(judged)
        if checked == 3:
            return
    raise AssertionError("no sibling-launch case with a finding in the seeds")


def test_the_worker_imports_a_package_from_memory(tmp_path: Path) -> None:
    """Relative imports between the modules sent, run() of the entry module, tracebacks naming
    the files of the folder given."""
    ops = "import numpy as np\n\n\ndef kernel():\n    return np.ones(2)\n"
    api = "import numpy as np\n\nfrom . import ops\nfrom .ops import kernel\n\n\n"
    api += "def run():\n    return kernel() + ops.kernel()\n"
    api += "\n\ndef expected():\n    return np.full(2, 2.0)\n"
    request = {"source": "", "check": True, "package": {"ops": ops, "api": api}, "entry": "api", "path": str(tmp_path)}
    assert "ok" in run_one(request, [])
    broken = run_one({**request, "package": {"ops": ops.replace("np.ones(2)", "1 / 0"), "api": api}}, [])
    assert broken["error"].startswith("ZeroDivisionError") and f'"{tmp_path}/ops.py", line 5' in broken["traceback"]
    assert not any(name == "kern" or name.startswith("kern.") for name in sys.modules)
