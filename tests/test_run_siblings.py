"""What the run's other modules give a kernel's module (issue 43 §1 and §3): the run links them.

The kernel sits in one module (`before.py`), its `pallas_call` in another (`launch.py`, after
`from .before import kernel`), as real code lays kernels out. The run tells the kernel's module
what the launch allocates (`Settings.launched_by_run`), so SEM002 fixes what it proves and
SEM006 reports a regular semaphore given to a DMA there; what the run cannot link (a name
rebound, a star import, an import from outside the run, launches that disagree) proves nothing.
A kernel that reads `pl` and `pltpu` through a compat module (`from ._compat import pl, pltpu`)
has its catalog calls and allocations read through it (`Settings.read_through`).
The fixtures (tests/fixtures/*/<case>/ holding other modules) run in JAX 0.10.2 and 0.12.1
here, as a package: tests/test_runtime.py loads one file alone.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, Case
from jax_env import require_jax_python

from semfix import fix_source
from semfix.analysis import nodes
from semfix.api import launched_by_run
from semfix.cli.main import main
from semfix.selection import build_settings

SEM002 = Case(FIXTURES / "sem002" / "launched_by_a_sibling")
SEM006 = Case(FIXTURES / "sem006" / "regular_for_a_kernel_a_sibling_launches")
COMPAT = Case(FIXTURES / "sem002" / "pallas_through_a_compat_module")
HELPER = Case(FIXTURES / "sem002" / "dma_helper_of_a_sibling_module")
BODIES = Case(FIXTURES / "sem002" / "kernel_bodies_launched_by_a_sibling")
CHECKOUT = Path(__file__).resolve().parent.parent
ERRORS = {  # what JAX says of each buggy kernel
    SEM002.name: {"0.10.2": "DMA source/destination/semaphore arguments must be Refs", "0.12.1": "must be a Ref"},
    SEM006.name: {"0.10.2": "dma_wait requires a DMA semaphore", "0.12.1": "dma_wait requires a DMA semaphore"},
    COMPAT.name: {"0.10.2": "DMA source/destination/semaphore arguments must be Refs", "0.12.1": "must be a Ref"},
    HELPER.name: {"0.10.2": "DMA source/destination/semaphore arguments must be Refs", "0.12.1": "must be a Ref"},
    BODIES.name: {"0.10.2": "DMA source/destination/semaphore arguments must be Refs", "0.12.1": "must be a Ref"},
}


def _package(root: Path, case: Case, kernel: bytes | None = None) -> Path:
    """The case as the package `kern`: its before.py (or `kernel`) and its other modules."""
    package = root / "kern"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "before.py").write_bytes(case.before if kernel is None else kernel)
    for sibling in case.siblings:
        shutil.copy(sibling, package / sibling.name)
    return package


def _semfix(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "semfix", *arguments, "--no-cache", "--output-format", "concise", "kern"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(CHECKOUT)},  # this checkout's semfix
    )


def test_the_run_fixes_a_kernel_another_module_launches(tmp_path: Path) -> None:
    package = _package(tmp_path, SEM002)
    alone = fix_source(SEM002.before, settings=build_settings())  # the file alone proves no rank
    assert (
        not alone.applied and alone.findings and all(f.fix and f.fix.applicability == "unsafe" for f in alone.findings)
    )
    run = _semfix(tmp_path, "fix")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (package / "before.py").read_bytes() == SEM002.after


def test_the_run_reports_a_regular_semaphore_another_module_allocates(tmp_path: Path) -> None:
    """The kernel's file spells no allocation: the skim would clear it alone."""
    _package(tmp_path, SEM006)
    run = _semfix(tmp_path, "check")
    said = [line for line in run.stdout.splitlines() if line.startswith("kern/before.py:12:70: SEM006")]
    assert len(said) == 1 and "allocated at kern/launch.py:23" in said[0], run.stdout + run.stderr


@pytest.mark.jax
@pytest.mark.parametrize("jax", ["0.10.2", "0.12.1"])
@pytest.mark.parametrize("case", [SEM002, SEM006, COMPAT, HELPER, BODIES], ids=lambda c: c.name)
def test_the_kernels_run_in_jax(tmp_path: Path, request: pytest.FixtureRequest, jax: str, case: Case) -> None:
    """The buggy kernel fails as JAX says; the fixed one (SEM002's) computes what it should."""
    if jax == "0.10.2":
        pytest.importorskip("jax")
    python = sys.executable if jax == "0.10.2" else require_jax_python(jax, request.config)
    entry = "launch" if (case.folder / "launch.py").exists() else "before"  # the module that holds run()
    script = (
        f"import numpy as np\nfrom kern.{entry} import run, expected\nnp.testing.assert_allclose(run(), expected())"
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    buggy = tmp_path / "buggy"
    buggy.mkdir()
    _package(buggy, case)
    ran = subprocess.run([python, "-c", script], cwd=buggy, capture_output=True, text=True, env=env)
    assert ran.returncode != 0 and ERRORS[case.name][jax] in ran.stderr, ran.stderr[-2000:]
    if case.after == case.before:
        return
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    _package(fixed, case, case.fix(case.before).source)
    ran = subprocess.run([python, "-c", script], cwd=fixed, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]


def test_the_run_fixes_a_kernel_that_reads_pallas_through_a_compat_module(tmp_path: Path) -> None:
    """The kernel's module spells no "pallas": alone, nothing in it is a catalog call."""
    package = _package(tmp_path, COMPAT)
    assert b"pallas" not in COMPAT.before.replace(b"pallas_call", b"")
    assert fix_source(COMPAT.before, settings=build_settings()).findings == ()
    run = _semfix(tmp_path, "fix")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (package / "before.py").read_bytes() == COMPAT.after
    kernel_only = COMPAT.before.replace(b"pallas_call", b"launch")  # and so with no "pallas" at all
    (package / "before.py").write_bytes(kernel_only)
    run = _semfix(tmp_path, "check")
    assert "kern/before.py:13:65: SEM002" in run.stdout, run.stdout + run.stderr


def test_the_run_fixes_what_a_kernel_gives_a_helper_another_module_defines(tmp_path: Path) -> None:
    package = _package(tmp_path, HELPER)
    assert fix_source(HELPER.before, settings=build_settings()).findings == ()  # alone, `fetch` is no helper
    run = _semfix(tmp_path, "fix")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (package / "before.py").read_bytes() == HELPER.after


@pytest.mark.parametrize(
    "dma",
    [
        (HELPER.folder / "dma.py").read_bytes().replace(b"    copy.wait()\n", b"    copy.wait()\n    sem[0]\n"),
        (HELPER.folder / "dma.py").read_bytes() + b"\n\nfetch = None\n",
        (HELPER.folder / "dma.py").read_bytes().replace(b"\ndef fetch", b"\n@jax.jit\ndef fetch"),
    ],
    ids=["a use of its own", "rebound", "decorated"],
)
def test_a_helper_another_module_defines_counts_only_where_it_passes_its_parameter_on(
    tmp_path: Path, dma: bytes
) -> None:
    package = _package(tmp_path, HELPER)
    (package / "dma.py").write_bytes(dma)
    run = _semfix(tmp_path, "check")
    assert "kern/before.py" not in run.stdout, run.stdout


KERNEL = SEM002.before
LAUNCH = (SEM002.folder / "launch.py").read_text()
SCRATCH = "scratch_shapes=[pltpu.SemaphoreType.DMA((2,))]"


def _fixed(tmp_path: Path, launch: str, kernel: bytes = KERNEL, **modules: str) -> list[str]:
    """What a run of the package (`launch.py` and `modules` beside the kernel) proves of the
    kernel's `sems[i]`: each finding's fix, "safe" or "unsafe"."""
    package = tmp_path / "kern"
    package.mkdir(parents=True)
    files = {"__init__.py": "", "launch.py": launch, **modules}
    for name, text in files.items():
        (package / name).write_text(text)
    (package / "before.py").write_bytes(kernel)
    sources = {path: path.read_bytes() for path in sorted(package.glob("*.py"))}
    launched = launched_by_run(sources, [package / "before.py"]).get(package / "before.py", ())
    result = fix_source(kernel, settings=replace(build_settings(), launched_by_run=launched), apply_fixes=False)
    return [f.fix.applicability if f.fix else "none" for f in result.findings if f.rule == "SEM002"]


LINKED = {
    "a partial": LAUNCH.replace("        kernel,\n", "        functools.partial(kernel),\n").replace(
        "import jax\n", "import functools\n\nimport jax\n"
    ),
    "a lambda": LAUNCH.replace("        kernel,\n", "        lambda x, o, s: kernel(x, o, s),\n"),
    "a module imported as a name": LAUNCH.replace("from .before import kernel", "import kern.before as ops").replace(
        "        kernel,\n", "        ops.kernel,\n"
    ),
    "an absolute import": LAUNCH.replace("from .before import", "from kern.before import"),
    "two launches that agree": LAUNCH + "\n\ndef again(x):\n    return pl.pallas_call(kernel, out_shape=x, "
    f"{SCRATCH})(x)\n",
}


@pytest.mark.parametrize("launch", LINKED.values(), ids=LINKED.keys())
def test_a_launch_the_run_links_proves_the_rank(tmp_path: Path, launch: str) -> None:
    assert _fixed(tmp_path, launch) == ["safe", "safe"]


UNLINKED = {
    "the name rebound": LAUNCH.replace("\n\ndef run():", "\n\nkernel = kernel\n\n\ndef run():"),
    "a star import": LAUNCH.replace("from .before import kernel", "from .before import *"),
    "an import from outside the run": LAUNCH.replace("from .before import", "from elsewhere.before import"),
    "a one-name absolute import": LAUNCH.replace("from .before import", "from before import"),
    "launches that disagree": LAUNCH + "\n\ndef again(x):\n    return pl.pallas_call(kernel, out_shape=x, "
    "scratch_shapes=[pltpu.SemaphoreType.DMA((2, 2))])(x)\n",
    "a launch whose scratch is not known": LAUNCH + "\n\ndef again(x, shapes):\n    return pl.pallas_call("
    "kernel, out_shape=x, scratch_shapes=shapes)(x)\n",
    "a launch through a helper": LAUNCH.replace("        kernel,\n", "        wrapped(kernel),\n")
    + "\n\ndef wrapped(k):\n    return k\n",
}


@pytest.mark.parametrize("launch", UNLINKED.values(), ids=UNLINKED.keys())
def test_what_the_run_cannot_link_proves_nothing(tmp_path: Path, launch: str) -> None:
    assert _fixed(tmp_path, launch) == ["unsafe", "unsafe"]


def test_the_kernel_s_module_binds_a_launch_only_to_its_one_undecorated_def(tmp_path: Path) -> None:
    decorated = KERNEL.replace(b"\ndef kernel(", b"\n@staticmethod\ndef kernel(")
    assert _fixed(tmp_path / "decorated", LAUNCH, decorated) == ["unsafe", "unsafe"]
    rebound = KERNEL + b"\n\nkernel = None\n"
    assert _fixed(tmp_path / "rebound", LAUNCH, rebound) == ["unsafe", "unsafe"]
    local = KERNEL + (  # its own launch, of another rank: the two disagree
        b"\n\ndef own(x):\n    import jax.experimental.pallas as pl\n\n"
        b"    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.SemaphoreType.DMA((2, 2))])(x)\n"
    )
    assert _fixed(tmp_path / "local", LAUNCH, local) == ["unsafe", "unsafe"]


LIST_LAUNCH = '''"""A launch of `before.kernel` with a list of two DMA semaphores: `sems[0]` is a Ref there."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from . import before


def run_list():
    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128) - 100.0
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    kernel = before.kernel
    if pl is None:  # a name bound twice: the run cannot link this launch
        kernel = None
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[anywhere],
        out_specs=anywhere,
        scratch_shapes=[[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA]],
        interpret=True,
    )(x)
'''
REACHED = {
    "a launch of a list through a local bound twice": {"other.py": LIST_LAUNCH},
    "kept in a dict by another module": {"other.py": 'from .before import kernel\n\nKERNELS = {"copy": kernel}\n'},
    "read as before.kernel by another module": {"other.py": "from . import before\n\nKERNEL = before.kernel\n"},
    "re-exported by the package": {"__init__.py": "from .before import kernel\n"},
    "read by string by another module": {"other.py": 'from . import before\n\nKERNEL = getattr(before, "kernel")\n'},
    "its module handed on by another": {"other.py": "import kern.before as ops\n\nKERNELS = vars(ops)\n"},
    "read by a string spelled NFKC": {"other.py": 'from . import before\n\nKERNEL = \uff47etattr(before, "kernel")\n'},
}


@pytest.mark.parametrize("modules", REACHED.values(), ids=REACHED.keys())
def test_a_linked_kernel_the_run_reaches_another_way_proves_nothing(tmp_path: Path, modules: dict[str, str]) -> None:
    """A launch links the kernel, but another module may launch it with anything (a list of
    Refs, where `sems[0]` is right and `.at` fails): reported, never a safe fix."""
    assert _fixed(tmp_path, LAUNCH, **modules) == ["unsafe", "unsafe"]
    assert _fixed(tmp_path / "read in the launch", LAUNCH + "\n\nKERNELS = [kernel]\n") == ["unsafe", "unsafe"]


@pytest.mark.jax
@pytest.mark.parametrize("jax", ["0.10.2", "0.12.1"])
def test_the_launch_the_run_cannot_link_runs_the_kernel_as_written(
    tmp_path: Path, request: pytest.FixtureRequest, jax: str
) -> None:
    """`semfix fix` leaves the kernel alone; as written it computes the right result through the
    list launch, and the view `sems.at[0]` a safe fix would write fails there."""
    if jax == "0.10.2":
        pytest.importorskip("jax")
    python = sys.executable if jax == "0.10.2" else require_jax_python(jax, request.config)
    package = _package(tmp_path, SEM002)
    (package / "other.py").write_text(LIST_LAUNCH)
    run = _semfix(tmp_path, "fix")
    assert (package / "before.py").read_bytes() == SEM002.before, run.stdout + run.stderr
    script = "import numpy as np\nfrom kern.other import run_list\nfrom kern.launch import expected\n"
    script += "np.testing.assert_allclose(run_list(), expected())"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    ran = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    (package / "before.py").write_bytes(SEM002.after)
    ran = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert ran.returncode != 0 and "has no attribute 'at'" in ran.stderr, ran.stderr[-2000:]


THROUGH_COMPAT = '''"""A kernel's launch in a module that reads Pallas through the package's compat module."""

import jax
import jax.numpy as jnp

from ._compat import pl, pltpu
from .before import kernel


def run():
    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[SCRATCH],
        interpret=True,
    )(x)
'''
PAIR_KERNEL = b"""from ._compat import pl


def kernel(x_ref, o_ref, pair):
    pl.semaphore_signal(pair[1], 1)
    pl.semaphore_wait(pair[1], 1)
    o_ref[...] = x_ref[...]
"""


@pytest.mark.parametrize(
    ("scratch", "said"),
    [
        ("(pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR)", []),
        ("pltpu.SemaphoreType.REGULAR((2,))", ["[*]"] * 2),
    ],
    ids=["a tuple: pair[1] is a Ref", "an array: pair[1] is a value"],
)
def test_a_launch_that_reads_pallas_through_a_compat_module_is_linked(
    tmp_path: Path, scratch: str, said: list[str]
) -> None:
    """The launching module reads `pltpu` through `_compat.py` (the oracle's seed 930069): its
    tuple of semaphores was unread, so `pair[1]` was reported and `--unsafe-fixes` wrote
    `pair.at[1]`, an AttributeError on the tuple."""
    package = _package(tmp_path, COMPAT, PAIR_KERNEL)
    (package / "launch.py").write_text(THROUGH_COMPAT.replace("SCRATCH", scratch))
    run = _semfix(tmp_path, "check")
    found = [line for line in run.stdout.splitlines() if line.startswith("kern/before.py")]
    assert [line.split(" SEM002 ")[1][:3] for line in found] == said, run.stdout + run.stderr


TRIED_COMPAT = '''"""Pallas where it is installed; None on a machine without it (the kernels then never run)."""

try:
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
except ImportError:
    pl = pltpu = None
'''


def test_a_compat_module_that_tries_the_import_gives_pallas_to_the_run(tmp_path: Path) -> None:
    """`pl = pltpu = None` under `except ImportError:` is no second binding a call could go
    through (a call of None fails): the run reads `pl` and `pltpu` through the module as through
    one that imports them plainly (the oracle's package layout: everything in the kernel module
    was missed)."""
    package = _package(tmp_path, COMPAT)
    (package / "_compat.py").write_text(TRIED_COMPAT)
    run = _semfix(tmp_path, "fix")
    assert run.returncode == 0, run.stdout + run.stderr
    assert (package / "before.py").read_bytes() == COMPAT.after


BODIES_LAUNCH = (BODIES.folder / "launch.py").read_text()
BODIES_SCRATCH = """        scratch_types=dict(
            sems=pltpu.SemaphoreType.DMA((2,)) @ mesh,
            staging=pltpu.VMEM((4, 128), jnp.float32),
            done=pltpu.SemaphoreType.REGULAR @ mesh,
        ),
"""
BODIES_DICT = BODIES_SCRATCH.strip().removeprefix("scratch_types=").removesuffix(",")
BODIES_LINKED = {
    "a dict display": BODIES_LAUNCH.replace(
        BODIES_SCRATCH,
        '        scratch_types={"sems": pltpu.SemaphoreType.DMA((2,)),'
        ' "staging": pltpu.VMEM((4, 128), jnp.float32)},\n',
    ),
    "a dict in a local": BODIES_LAUNCH.replace(BODIES_SCRATCH, "        scratch_types=scratch,\n").replace(
        "    return pl.kernel(", "    scratch = " + BODIES_DICT + "\n    return pl.kernel("
    ),
    "bodies after a long comment": BODIES_LAUNCH.replace(
        "            # A CPU runs",
        "            # What each core does, and why, at length.\n" * 12 + "            # A CPU runs",
    ),
    "two bodies": BODIES_LAUNCH.replace(
        "            functools.partial(copy_body, rows=4),\n",
        "            functools.partial(copy_body, rows=4),\n            functools.partial(copy_body, rows=2),\n",
    ).replace("mesh=[mesh]", "mesh=[mesh, mesh]"),
}


@pytest.mark.parametrize("launch", [BODIES_LAUNCH, *BODIES_LINKED.values()], ids=["as written", *BODIES_LINKED])
def test_a_list_of_bodies_given_scratch_by_name_is_linked(tmp_path: Path, launch: str) -> None:
    """JAX calls each body of `pl.kernel(body=[...])` with the inputs, the outputs, then the
    scratch: a list's by position, a dict's by name (`body(*refs, **scratch)`, every release
    since `pl.kernel` came in 0.8.1); an allocation `@ mesh` is the allocation, on that mesh."""
    assert _fixed(tmp_path, launch, BODIES.before) == ["safe", "safe"]


BODIES_UNLINKED = {
    # `**extra` may give `sems` another shape: the dict's entries are not all written
    "a dict with a ** entry": BODIES_LAUNCH.replace(
        BODIES_SCRATCH, '        scratch_types={"sems": pltpu.SemaphoreType.DMA((2,)), **extra},\n'
    ).replace("def run():", "def run(extra={}):"),
    "a dict changed after it is made": BODIES_LAUNCH.replace(
        BODIES_SCRATCH, "        scratch_types=scratch,\n"
    ).replace(
        "    return pl.kernel(",
        "    scratch = " + BODIES_DICT + "\n"
        '    scratch["sems"] = pltpu.SemaphoreType.DMA((2, 2))\n    return pl.kernel(',
    ),
    # what `@` makes depends on the right side: JAX's `__matmul__` declines anything not a mesh
    "an allocation @ a mesh semfix cannot see": BODIES_LAUNCH.replace(
        "    if hasattr(", "    other = _mesh()\n    if hasattr("
    ).replace("DMA((2,)) @ mesh", "DMA((2,)) @ other")
    + "\n\ndef _mesh():\n    return pltpu.create_tensorcore_mesh('core', num_cores=1)\n",
    # pallas_call's dict of scratch shapes is not read: the releases were not all checked for how they pass it
    "a dict given to pallas_call": BODIES_LAUNCH.replace(
        BODIES_LAUNCH[BODIES_LAUNCH.index("    return pl.kernel(") : BODIES_LAUNCH.index("    )(x)")],
        "    return pl.pallas_call(\n        functools.partial(copy_body, rows=4),\n"
        "        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
        + BODIES_SCRATCH.replace("scratch_types=", "scratch_shapes=")
        + "        interpret=True,\n",
    ),
}


@pytest.mark.parametrize("launch", BODIES_UNLINKED.values(), ids=BODIES_UNLINKED.keys())
def test_scratch_by_name_that_cannot_be_matched_proves_nothing(tmp_path: Path, launch: str) -> None:
    assert _fixed(tmp_path, launch, BODIES.before) == ["unsafe", "unsafe"]


def _wrapped(kernel: bytes, wrapper: str) -> bytes:
    """The kernel's module with its kernel reached as `wrapper` says: a factory's nested def, a
    staticmethod of a class, a method of an instance."""
    head, _, body = kernel.partition(b"\ndef kernel(")
    lines = [b"    " + line if line else line for line in (b"def kernel(" + body).split(b"\n")]
    if wrapper == "factory":
        return head + b"\ndef make_kernel(slots):\n" + b"\n".join(lines) + b"\n    return kernel\n"
    if wrapper == "staticmethod":
        return head + b"\nclass Kernels:\n    @staticmethod\n" + b"\n".join(lines)
    self_kernel = b"\n".join(lines).replace(b"def kernel(", b"def kernel(self, ", 1)
    return head + b"\nclass Op:\n" + self_kernel


#: Each wrapper's launch from another module: by a from-import, and through the module's name.
OF_A_CLASS_OR_FACTORY = {
    ("factory", "from .before import make_kernel", "make_kernel(2)"),
    ("factory", "from . import before", "before.make_kernel(2)"),
    ("staticmethod", "from .before import Kernels", "Kernels.kernel"),
    ("staticmethod", "from . import before", "before.Kernels.kernel"),
    ("method", "from .before import Op", "Op().kernel"),
    ("method", "from . import before", "before.Op().kernel"),
}


@pytest.mark.parametrize(("wrapper", "imported", "called"), sorted(OF_A_CLASS_OR_FACTORY))
def test_a_factory_s_or_a_class_s_kernel_another_module_launches_is_linked(
    tmp_path: Path, wrapper: str, imported: str, called: str
) -> None:
    """The oracle's package cases (seeds 950033, 950317, 950090): a kernel made by a factory, or
    a method of a class, launched from a sibling was unlinked, so its correct `pair[0]` on a
    tuple was a false report. Linked, the array's `sems[0]` is fixed safely; launched another way
    too, nothing is proven."""
    kernel = _wrapped(KERNEL, wrapper)
    launch = LAUNCH.replace("from .before import kernel", imported).replace("        kernel,\n", f"        {called},\n")
    assert _fixed(tmp_path / "linked", launch, kernel) == ["safe", "safe"]
    listed = launch.replace(SCRATCH, "scratch_shapes=[[pltpu.SemaphoreType.DMA, pltpu.SemaphoreType.DMA]]")
    assert _fixed(tmp_path / "a list", listed, kernel) == []
    both = {"other.py": listed.replace("def run(", "def run_list(")}
    assert _fixed(tmp_path / "both", launch, kernel, **both) != ["safe", "safe"]
    escaped = {"other.py": f"{imported}\n\nKERNELS = [{called}]\n"}
    assert _fixed(tmp_path / "kept in a list", launch, kernel, **escaped) == ["unsafe", "unsafe"]


#: `launch.py`'s run, in the factory's own module, launching `make_kernel(1)` with its DMA((2,)).
FACTORY_LAUNCHED_HERE = (
    "\n\nimport jax\nimport jax.numpy as jnp\nfrom jax.experimental import pallas as pl\n"
    + LAUNCH[LAUNCH.index("\n\ndef run():") : LAUNCH.index("\n\ndef expected")].replace("kernel,", "make_kernel(1),")
    + "\n"
).encode()


@pytest.mark.jax
@pytest.mark.parametrize("jax", ["0.10.2", "0.12.1"])
def test_a_factory_launched_here_and_by_another_module_with_a_list_is_left_as_written(
    tmp_path: Path, request: pytest.FixtureRequest, jax: str
) -> None:
    """A wrong safe write before: the factory's own launch (a DMA((2,)) array) proved `sems[0]`
    a value, and `from .before import make_kernel` in another module, launching it with a list of
    semaphores, was not linked; `semfix fix` wrote `sems.at[0]`, which fails there."""
    if jax == "0.10.2":
        pytest.importorskip("jax")
    python = sys.executable if jax == "0.10.2" else require_jax_python(jax, request.config)
    kernel = _wrapped(SEM002.before, "factory") + FACTORY_LAUNCHED_HERE
    package = _package(tmp_path, SEM002, kernel)
    (package / "launch.py").unlink()  # it launches `kernel`, which the factory's module no longer binds
    listed = LIST_LAUNCH.replace("from . import before", "from .before import make_kernel")
    unlinked = "    kernel = before.kernel\n    if pl is None:  # a name bound twice: the run cannot link this launch\n"
    listed = listed.replace(unlinked + "        kernel = None\n", "")
    (package / "other.py").write_text(listed.replace("        kernel,\n", "        make_kernel(2),\n"))
    run = _semfix(tmp_path, "fix")
    assert (package / "before.py").read_bytes() == kernel, run.stdout + run.stderr
    script = "import numpy as np\nfrom kern.other import run_list\n"
    script += "np.testing.assert_allclose(run_list(), np.arange(8 * 128, dtype=np.float32).reshape(8, 128) - 100)"
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    ran = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    (package / "before.py").write_bytes(kernel.replace(b"sems[0]", b"sems.at[0]"))
    ran = subprocess.run([python, "-c", script], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert ran.returncode != 0 and "has no attribute 'at'" in ran.stderr, ran.stderr[-2000:]


def test_a_pl_kernel_launch_that_reads_pallas_through_a_compat_module_is_linked(tmp_path: Path) -> None:
    """The oracle's seed 951273: a module that launches with `pl.kernel` (no `pallas_call`, no
    catalog call spelled) through `from ._compat import pl, pltpu` was not read through it, so
    the kernel's correct `pair[1]` on a tuple was reported."""
    package = _package(tmp_path, COMPAT, PAIR_KERNEL)
    launch = THROUGH_COMPAT.replace("SCRATCH", "(pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR)")
    launch = launch.replace(
        "pl.pallas_call(\n        kernel,\n        out_shape=", "pl.kernel(\n        kernel,\n        out_type="
    )
    launch = launch.replace("scratch_shapes=", "mesh=pltpu.create_tensorcore_mesh('core'),\n        scratch_types=")
    (package / "launch.py").write_text(launch)
    assert "pl.kernel(" in launch and "pallas_call" not in launch
    run = _semfix(tmp_path, "check")
    assert "kern/before.py" not in run.stdout, run.stdout + run.stderr
    (package / "launch.py").write_text(
        launch.replace(
            "(pltpu.SemaphoreType.REGULAR, pltpu.SemaphoreType.REGULAR)", "pltpu.SemaphoreType.REGULAR((2,))"
        )
    )
    run = _semfix(tmp_path, "check")
    assert run.stdout.count("kern/before.py") == 2 and "[*]" in run.stdout, run.stdout + run.stderr


def test_each_file_is_parsed_once_a_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's questions of its modules parse the kernel's module (it reads Pallas through the
    compat module); its own analysis takes that tree rather than parsing the file again."""
    package = _package(tmp_path, COMPAT)
    parsed: list[bytes] = []
    real = ast.parse

    def parse(source: str | bytes, *arguments: Any, **keywords: Any) -> ast.Module:
        parsed.append(source if isinstance(source, bytes) else source.encode())
        return real(source, *arguments, **keywords)

    monkeypatch.setattr(ast, "parse", parse)
    monkeypatch.setattr(nodes, "_PARSED", {})  # no tree of an earlier test's run
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["check", "--no-cache", "--jobs", "1", "--exit-zero", "-q", "kern"])
    assert (package / "before.py").read_bytes() in parsed
    assert len(parsed) == len(set(parsed)), [p[:60] for p in parsed]
