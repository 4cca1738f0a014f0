"""A migration keeps an import that another module of the same run imports by name (issue 31).

`from .sync import DeviceIdType` in a sibling reads the name from the fixed module: dropping
that import there would make the sibling fail on import, so the CLI tells each file the names
the run's other modules import from it (`Settings.imported_by_run`).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax_env import require_jax_python

from semfix.analysis.run_imports import (
    _CALLED_BACKWARDS,
    _IMPORTS,
    _READ_THROUGH,
    STAR,
    _imported_names,
    _imported_names_parsed,
    heads_read_through,
    import_statements,
    names_imported,
    names_read_through,
)
from semfix.jax_versions import NEWEST, spelled
from semfix.settings import ReadThrough

SYNC = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas.tpu import DeviceIdType, semaphore_signal


def signal(sem):
    semaphore_signal(sem, 1, device_id=0, device_id_type=DeviceIdType.MESH)
"""
USER = "from .sync import DeviceIdType\n\nKIND = DeviceIdType.LOGICAL\n"


def _package(root: Path, name: str = "mypkg", floor: str = "0.7", **modules: str) -> Path:
    """A package of `modules` (by default `sync.py` and `user.py`, which imports from it)."""
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    for module, text in (modules or {"sync": SYNC, "user": USER}).items():
        (package / f"{module}.py").write_text(text)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\ndependencies = ["jax>={floor}"]\n')
    return package


def _fix(root: Path, *paths: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "semfix", "fix", "--extend-select", "SEM1", *paths],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},  # this checkout's semfix
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_name_a_sibling_imports_stays_imported(tmp_path: Path) -> None:
    package = _package(tmp_path)
    _fix(tmp_path, "mypkg")
    fixed = (package / "sync.py").read_text()
    assert "pl.semaphore_signal(sem, 1, device_id=0)" in fixed  # the migration is made...
    # ...and the sibling's name kept, imported from where it stays (the TPU module's is gone in JAX 0.11)
    assert "from jax.experimental.pallas import DeviceIdType\n" in fixed
    assert "semaphore_signal," not in fixed  # what nobody imports still goes


@pytest.mark.jax
@pytest.mark.parametrize("jax", ["0.10.2", spelled(NEWEST)])
def test_the_sibling_still_imports_after_the_migration(
    tmp_path: Path, request: pytest.FixtureRequest, jax: str
) -> None:
    """On JAX 0.11+ too (issue 36 item 6): the name kept moves to `jax.experimental.pallas`."""
    python = sys.executable if jax == "0.10.2" else require_jax_python(jax, request.config)
    if jax == "0.10.2":
        pytest.importorskip("jax")
    _package(tmp_path)
    _fix(tmp_path, "mypkg")
    imported = subprocess.run(
        [python, "-W", "ignore", "-c", "import mypkg.user"], cwd=tmp_path, capture_output=True, text=True
    )
    assert imported.returncode == 0, imported.stderr


def test_alone_in_its_run_a_module_has_no_importers_to_keep_for(tmp_path: Path) -> None:
    """The names come from the run: a file fixed alone (a pre-commit run of one changed file)
    keeps only what it reads itself, as ruff's F401 fix would."""
    package = _package(tmp_path)
    _fix(tmp_path, "mypkg/sync.py")
    assert "DeviceIdType" not in (package / "sync.py").read_text()


def test_names_imported_resolves_relative_absolute_and_star_imports() -> None:
    modules = [
        ("pkg", True, b"from .sub.deep import a\nfrom pkg.sync import b as c\n"),
        ("pkg.sync", False, b"x = 1\n"),
        ("pkg.sub", True, b"from .. import sync\nfrom ..sync import *\n"),
        ("pkg.sub.deep", False, b"from ... import sync\n"),  # above the top: nothing
        ("pkg.user", False, b"from .sync import b, d\nfrom . import user\n"),
        ("pkg.broken", False, b"from .sync import (\n"),
    ]
    assert names_imported(modules) == {
        "pkg.sub.deep": frozenset({"a"}),
        "pkg.sync": frozenset({"b", "d", STAR}),
        "pkg": frozenset({"sync", "user"}),
    }


@pytest.mark.parametrize("layout", ["ringlib", "src/ringlib"])
def test_a_namespace_package_s_sibling_keeps_its_name(tmp_path: Path, layout: str) -> None:
    """A package without `__init__.py` (a namespace package, also under `src/`): the sibling's
    `from ringlib.sync import DeviceIdType` names the fixed module all the same."""
    (tmp_path / ".git").mkdir()
    package = tmp_path / layout
    package.mkdir(parents=True)
    (package / "sync.py").write_text(SYNC)
    (package / "user.py").write_text("from ringlib.sync import DeviceIdType\n")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "ringlib"\ndependencies = ["jax>=0.7"]\n')
    _fix(tmp_path, layout.partition("/")[0])
    fixed = (package / "sync.py").read_text()
    assert "pl.semaphore_signal(sem, 1, device_id=0)" in fixed
    assert "from jax.experimental.pallas import DeviceIdType\n" in fixed


COMPAT = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def wait(sem):
    pltpu.semaphore_wait(sem, 1)
"""
READERS = {  # a sibling that reads `pltpu` through the module, not by a from-import of the name
    "module_alias": "import ringlib.compat as compat\n\nREGULAR = compat.pltpu.SemaphoreType.REGULAR\n",
    "from_package": "from ringlib import compat\n\nREGULAR = compat.pltpu.SemaphoreType.REGULAR\n",
    "dotted": "import ringlib.compat\n\nREGULAR = ringlib.compat.pltpu.SemaphoreType.REGULAR\n",
}


@pytest.mark.parametrize("style", READERS)
def test_a_name_a_sibling_reads_through_the_module_stays_imported(tmp_path: Path, style: str) -> None:
    """Issue 36 item 2: `compat.pltpu` in a sibling reads compat's import as an attribute; dropping
    it would make the sibling fail with AttributeError on every JAX."""
    package = tmp_path / "ringlib"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "compat.py").write_text(COMPAT)
    (package / "kernels.py").write_text(READERS[style])
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "ringlib"\ndependencies = ["jax>=0.7"]\n')
    _fix(tmp_path, "ringlib")
    fixed = (package / "compat.py").read_text()
    assert "pl.semaphore_wait(sem, 1)" in fixed
    assert "from jax.experimental.pallas import tpu as pltpu\n" in fixed
    if importlib.util.find_spec("jax") is not None:
        run = [sys.executable, "-W", "ignore", "-c", "import ringlib.kernels"]
        imported = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True)
        assert imported.returncode == 0, imported.stderr


def test_reads_through_a_module_count_as_imports_of_the_name() -> None:
    modules = [
        ("pkg", True, b""),
        ("pkg.compat", False, b"x = 1\n"),
        ("pkg.a", False, b"from . import compat as c\nc.f(c.g.h)\n"),
        ("pkg.b", False, b"import pkg.compat\nimport os.path as compat\npkg.compat.i\ncompat.join\n"),
    ]
    assert names_imported(modules) == {"pkg.compat": frozenset({"f", "g", "i"}), "pkg": frozenset({"compat"})}


def test_an_import_names_a_module_by_its_trailing_names() -> None:
    """Above its regular packages a module's name runs up to the project root: an import names it
    by any trailing part of that name (the folder on `sys.path` may be any of them)."""
    modules = [
        ("src.ringlib.sync", False, b"x = 1\n"),
        ("src.ringlib.user", False, b"from ringlib.sync import a\nfrom .sync import b\nfrom sync import c\n"),
        ("tools.run", False, b"from lib.sync import d\nfrom ib.sync import e\n"),
    ]
    assert names_imported(modules) == {"src.ringlib.sync": frozenset({"a", "b", "c"})}


def test_only_the_wanted_modules_importers_are_read_and_none_is_missed() -> None:
    """`wanted`: the byte scan parses only what may name those modules, in every spelling the
    parse reads: comments and continuations inside an import, a relative import of the package
    itself, a read through a package, an import only a look-ahead past an unclosed bracket in a
    string finds, a non-ASCII name."""
    modules = [
        ("pkg", True, b""),
        ("pkg.sync", False, b"x = 1\n"),
        ("pkg.a", False, b"from pkg import (  # (see sync)\n    sync,\n)\nsync.A\n"),
        ("pkg.b", False, b"from pkg \\\n  .sync import B\n"),
        ("pkg.c", False, b"from . import sync as s\ns.C\n"),
        ("pkg.d", False, b"import pkg\npkg . sync . D\n"),
        ("pkg.e", False, b'x = "from q import ("\nimport pkg.sync as t\nt.E\n'),
        ("pkg.f", False, "é = 1\nfrom .sync import F\n".encode()),
        ("pkg.g", False, b"from jax._src import sync\nsync.G\n"),  # another module's `sync`
        ("pkg.h", False, b"# " + b"#" * 40 + b"\nfrom .sync import H\n"),
        ("pkg.i", False, b"import pkg as p\np.sync.I\n"),  # a read through the package, by its alias
        ("pkg.j", False, b"import os\nos.sync.J\n"),  # through a name bound to no package above `sync`
    ]
    expected = {"pkg.sync": frozenset({"A", "B", "C", "D", "E", "F", "H", "I"})}
    assert names_imported(modules, ["pkg.sync"]) == expected
    assert names_imported(modules)["pkg.sync"] == expected["pkg.sync"]


REEXPORTS = "import jax.experimental.pallas.tpu as pltpu\nfrom jax.experimental.pallas.tpu import semaphore_wait\n"
OPS = """\
import functools

from . import compat

wait_1 = functools.partial(compat.semaphore_wait, dec=1)


def kernel(sem):
    compat.pltpu.semaphore_signal(sem, 1)
    wait_1(sem)
"""


def test_names_read_through_a_sibling_are_jax_names() -> None:
    modules = [
        ("ringlib", True, b""),
        ("ringlib.compat", False, REEXPORTS.encode()),
        ("ringlib.ops", False, OPS.encode()),
    ]
    aliases = dict(names_read_through(modules, {"ringlib.ops"})["ringlib.ops"].aliases)
    assert aliases["..compat.semaphore_wait"] == "jax.experimental.pallas.tpu.semaphore_wait"
    assert aliases["..compat.pltpu"] == "jax.experimental.pallas.tpu"
    rebinds = [  # compat's own `semaphore_wait`, or perhaps: not JAX's
        "def semaphore_wait(sem, dec=1):\n    pass\n",
        "try:\n    pass\nexcept ImportError as semaphore_wait:\n    pass\n",
        "def reset():\n    global semaphore_wait\n",
        "if (semaphore_wait := None):\n    pass\n",
        "for semaphore_wait in ():\n    pass\n",
        "from ringlib.fallback import *\n",
    ]
    for rebind in rebinds:
        modules[1] = ("ringlib.compat", False, f"{REEXPORTS}\n{rebind}".encode())
        found = dict(names_read_through(modules, {"ringlib.ops"}).get("ringlib.ops", ReadThrough()).aliases)
        assert "..compat.semaphore_wait" not in found, rebind
    local = "def f():\n    semaphore_wait = None\n"  # another variable
    modules[1] = ("ringlib.compat", False, f"{REEXPORTS}\n{local}".encode())
    assert "..compat.semaphore_wait" in dict(names_read_through(modules, {"ringlib.ops"})["ringlib.ops"].aliases)


def test_a_call_through_a_sibling_is_fixed_as_the_jax_call(tmp_path: Path) -> None:
    """`partial(compat.semaphore_wait, dec=1)` is JAX's `semaphore_wait`, whose `dec=` JAX 0.7.2
    renamed: with the floor at 0.7.2 SEM102 passes it as `value=`."""
    package = _package(tmp_path, "ringlib", "0.7.2", compat=REEXPORTS, ops=OPS)
    _fix(tmp_path, "ringlib")
    assert "functools.partial(compat.semaphore_wait, value=1)" in (package / "ops.py").read_text()


COMPAT_TRY = """\
try:
    from jax.experimental.pallas import semaphore_wait
except ImportError:
    from jax.experimental.pallas.tpu import semaphore_wait
"""


@pytest.mark.parametrize(
    ("fallback", "read"),
    [
        ("from jax.experimental.pallas.tpu import semaphore_wait", True),
        ("from .fallback import semaphore_wait", False),
        ("semaphore_wait = print", False),
        ("semaphore_wait = None", True),  # a call of None fails: where it runs, the name is JAX's
    ],
)
def test_a_compat_modules_fallback_import_is_the_same_function(tmp_path: Path, fallback: str, read: bool) -> None:
    """`try: from pallas import semaphore_wait / except ImportError: from pallas.tpu import
    semaphore_wait`: JAX's function on every JAX, so the migration oracle's seed 400031's
    `semaphore_wait(sem, dec=2)` read through it is SEM102's (it failed on 0.12.1, unreported).
    So is one that binds None, as a module's own `except ImportError: pl = None` is read. A
    fallback that binds another thing leaves the name unread."""
    compat = COMPAT_TRY.replace("from jax.experimental.pallas.tpu import semaphore_wait", fallback)
    ops = "from . import compat\n\n\ndef kernel(sem):\n    compat.semaphore_wait(sem, dec=1)\n"
    package = _package(tmp_path, "ringlib", "0.7.2", compat=compat, ops=ops)
    _fix(tmp_path, "ringlib")
    assert ("compat.semaphore_wait(sem, value=1)" in (package / "ops.py").read_text()) is read
    assert (package / "compat.py").read_text() == compat


def test_a_star_import_of_a_run_module_binds_what_its_all_says(tmp_path: Path) -> None:
    """`from .compat import *` with `__all__ = ["semaphore_signal"]` binds that name alone: `pl`
    stays the pallas module, so SEM102 sees `pl.semaphore_wait(sem, dec=1)`."""
    compat = 'from jax.experimental.pallas.tpu import semaphore_signal\n\n__all__ = ["semaphore_signal"]\n'
    ops = "from .compat import *\nfrom jax.experimental import pallas as pl\n\n\ndef kernel(sem):\n"
    ops += "    semaphore_signal(sem)\n    pl.semaphore_wait(sem, dec=1)\n"
    modules = [("ringlib", True, b""), ("ringlib.compat", False, compat.encode()), ("ringlib.ops", False, ops.encode())]
    aliases, stars, _ = names_read_through(modules, {"ringlib.ops"})["ringlib.ops"]
    assert stars == ((".compat", ("semaphore_signal",)),)
    assert dict(aliases)[".compat.semaphore_signal"] == "jax.experimental.pallas.tpu.semaphore_signal"
    grown = compat + '__all__ += ["pl"]\n'  # what the star binds is no longer said
    modules[1] = ("ringlib.compat", False, grown.encode())
    assert names_read_through(modules, {"ringlib.ops"}).get("ringlib.ops", ReadThrough()).stars == ()
    package = _package(tmp_path, "ringlib", "0.7.2", compat=compat, ops=ops)
    _fix(tmp_path, "ringlib")
    assert "pl.semaphore_wait(sem, value=1)" in (package / "ops.py").read_text()


def test_a_known_star_beside_the_tpu_star_hides_none_of_its_names(tmp_path: Path) -> None:
    """`from .compat import *` whose `__all__` says `semaphore_read` gives no other name, so the
    `semaphore_signal` that only `from jax.experimental.pallas.tpu import *` gives (NameError
    from JAX 0.10) is still reported (soak seed 170135: it was silent)."""
    compat = 'from jax.experimental.pallas.tpu import semaphore_read\n\n__all__ = ["semaphore_read"]\n'
    ops = "from jax.experimental.pallas.tpu import *\nfrom .compat import *\n\n\ndef kernel(sem):\n"
    ops += "    semaphore_signal(sem)\n    return semaphore_read(sem)\n"
    _package(tmp_path, "ringlib", "0.7.2", compat=compat, ops=ops)
    run = subprocess.run(
        [sys.executable, "-m", "semfix", "check", "--extend-select", "SEM1", "--output-format", "concise", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    said = [line for line in run.stdout.splitlines() if line.startswith("ringlib/ops.py:")]
    assert len(said) == 1 and "`semaphore_signal` comes from `from jax.experimental.pallas.tpu import *`" in said[0]


_PIECES = [b"from", b"import", b" ", b"\\\n", b"\n", b"\r\n", b"\r", b"\\", b".", b"a", b"(", b")", b"#", b";", b","]
_PIECES += [b"as", b"\t", b"\f", b"\v", b"\xc3\xa9", b"fromimport", b"reimport", b"importx", b"'", b"*"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map(b"".join))
def test_the_imports_found_by_find_are_the_pattern_s_every_match(data: bytes) -> None:
    """`import_statements` tries the pattern only at a `from` or an `import` spelled: it finds what a
    search of every byte finds, in strings, comments and broken code too."""
    assert list(import_statements(data)) == [match.groups() for match in _IMPORTS.finditer(data)]


def test_the_imports_found_by_find_in_real_code() -> None:
    checkout = Path(__file__).resolve().parents[1]
    for path in [*checkout.glob("semfix/**/*.py"), *checkout.glob("tests/fixtures/**/*.py")]:
        data = path.read_bytes()
        assert list(import_statements(data)) == [match.groups() for match in _IMPORTS.finditer(data)], path
        assert list(heads_read_through(data)) == _READ_THROUGH.findall(data), path


_READS = [b"pl", b"pltpu", b".", b" ", b"\n", b"semaphore_wait", b"async_copy", b"make_async_copy", b"x", b"_"]
_READS += [b"(", b",", b"#", b"\t", b"pallas_call", b"SemaphoreType", b"9", b"\xc3", b" " * 300]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_READS), max_size=16).map(b"".join))
def test_the_heads_read_through_found_by_find_are_the_pattern_s(data: bytes) -> None:
    """`heads_read_through` searches only the stretches that spell a name: it finds what a
    search of every byte finds (a stretch longer than it looks back over too)."""
    assert list(heads_read_through(data)) == _READ_THROUGH.findall(data)


def test_the_names_read_from_the_text_hold_every_name_the_parse_finds() -> None:
    """`names_imported` reads imports and reads through a module from the text (a parse per
    importer was most of a run with every rule on): on semfix, its tests and its fixtures, it
    finds every name the parse finds, and perhaps more (strings, comments), never fewer."""
    checkout = Path(__file__).resolve().parents[1]
    prefixes = {"pkg", "pkg.compat", "semfix", "semfix.analysis", "semfix.analysis.nodes", "jax", "jax.experimental"}
    for path in [*checkout.glob("semfix/**/*.py"), *checkout.glob("tests/**/*.py")]:
        data = path.read_bytes()
        text = {(source, name) for source, names in _imported_names(data, "pkg", prefixes) for name in names}
        parsed = {(source, name) for source, names in _imported_names_parsed(data, "pkg", prefixes) for name in names}
        assert parsed <= text, (path, parsed - text)


@pytest.mark.parametrize(
    "source",
    [
        b"from . import compat\n\n# a test has to import compat first\nx = compat.pltpu\n",
        b"from . import compat\n\nx = \xef\xbd\x83ompat.pltpu  # the fullwidth c reads as c\n",
        b"from . import compat\n\nx = (compat  # the module\n     .pltpu)\n",
    ],
    ids=["a comment that seems to rebind", "an identifier NFKC reads as ASCII", "a comment inside the chain"],
)
def test_a_read_through_a_module_is_found_in_the_text_however_it_is_spelled(source: bytes) -> None:
    assert names_imported([("pkg", True, b""), ("pkg.compat", False, b""), ("pkg.user", False, source)]) == {
        "pkg": frozenset({"compat"}),
        "pkg.compat": frozenset({"pltpu"}),
    }


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(st.sampled_from([b"f", b"ab", b"_1", b"(", b" ", b"\n", b".", b")", b"\xc3\xa9"]), max_size=16).map(
        b"".join
    )
)
def test_the_names_called_found_backwards_are_the_forward_pattern_s(data: bytes) -> None:
    """`reading` finds the names called in the reversed bytes (`_CALLED_BACKWARDS`): the names
    `(\\w+)\\s*\\(` finds forwards."""
    backwards = {name[::-1] for name in _CALLED_BACKWARDS.findall(data[::-1])}
    assert backwards == set(re.findall(rb"(\w+)\s*\(", data))
