"""Runs kernel modules sent one per line (JSON) on stdin; answers one JSON line each on stdout.

A subprocess so that a kernel that deadlocks (a wait on a semaphore nobody signals) can be
killed by the parent's watchdog, so that JAX is imported once for many kernels, and so that a
kernel can run on a JAX in another venv (tests/jax_env.py): this file imports neither semfix
nor pytest. A request is {"source", "check", "strict"} and an optional "path", the file the
source is on disk as (so that a traceback names it, as a user's does); each answer is {"ok":
digest of the result} or {"error": "Type: message"}, with the whole "traceback" for a "path".
A request with "package" ({module name: source}, the oracle's package cases) runs the package
`kern` of those modules instead, imported from memory (as files in the folder "path", for
tracebacks), and calls its "entry" module's run().
A semaphore left with a count at kernel exit (JAX's interpret mode only prints that) counts as
an error; so, with "check", does a result other than
the module's expected(), and, with "strict", a Pallas deprecation warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.abc
import importlib.util
import io
import json
import os
import re
import sys
import traceback
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType

# The Pallas modules whose `_deprecations` table (name -> (message, replacement)) lists what moved.
PALLAS = ["jax.experimental.pallas", "jax.experimental.pallas.tpu", "jax.experimental.pallas.mosaic_gpu"]
PALLAS += ["jax.experimental.pallas.triton", "jax.pallas", "jax.pallas.tpu", "jax.pallas.mosaic_gpu"]


def pallas_modules() -> list[ModuleType]:
    """This JAX's Pallas modules (an older JAX lacks some; a GPU one may not load here)."""
    modules = []
    for name in PALLAS:
        with contextlib.suppress(Exception):
            modules.append(importlib.import_module(name))
    return modules


def deprecation_messages(modules: list[ModuleType]) -> list[str]:
    """The messages of the Pallas modules' deprecations, and of the `device_id_type=` keyword's
    (warned by the operations, not by a table). Only these warnings are made errors under
    "strict": a DeprecationWarning from NumPy or another part of JAX says nothing of the kernel."""
    tables = [getattr(module, "_deprecations", {}) for module in modules]
    return ["device_id_type is deprecated", *(entry[0] for table in tables for entry in table.values())]


def fail_on_deprecations(modules: list[ModuleType]) -> None:
    """Make the Pallas family's deprecation warnings errors, and no other (inside a
    `warnings.catch_warnings()`, or for the rest of a process: benchmarks/migration.py's imports)."""
    for message in deprecation_messages(modules):
        warnings.filterwarnings("error", re.escape(message), DeprecationWarning)


class Package(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The package `kern` of the modules given ({name: source}), as files of the folder `path`."""

    def __init__(self, modules: dict[str, str], path: str) -> None:
        self.modules, self.path = modules, path

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        if name == "kern":
            return importlib.util.spec_from_loader(name, self, is_package=True)
        if name.startswith("kern.") and name[5:] in self.modules:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        if module.__name__ != "kern":
            source, filename = self.modules[module.__name__[5:]], f"{self.path}/{module.__name__[5:]}.py"
            exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the kernel under test


def run_one(request: dict[str, object], modules: list[ModuleType]) -> dict[str, str]:
    """Execute the module text and call its run(); never raises."""
    import numpy as np

    for module in modules:  # JAX caches a module's deprecated names: warned once per process, not per kernel
        getattr(getattr(module, "__getattr__", None), "cache_clear", lambda: None)()

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed), warnings.catch_warnings():
            if request.get("strict"):
                fail_on_deprecations(modules)
            if "package" in request:
                sys.meta_path.insert(0, Package(request["package"], str(request.get("path", "<generated>"))))  # type: ignore[arg-type]
                namespace = importlib.import_module(f"kern.{request['entry']}").__dict__
            else:
                kernel = ModuleType("generated_kernel")  # in sys.modules, as an imported one is: dataclasses look there
                sys.modules[kernel.__name__] = kernel
                namespace = kernel.__dict__
                filename = str(request.get("path", "<generated kernel>"))
                exec(compile(str(request["source"]), filename, "exec"), namespace)  # noqa: S102 - the kernel under test
            result = np.asarray(namespace["run"]())  # type: ignore[operator]
            if request.get("check"):
                np.testing.assert_allclose(result, namespace["expected"]())  # type: ignore[operator]
    except BaseException as error:  # noqa: BLE001 - every failure is an answer
        answer = {"error": f"{type(error).__name__}: {str(error)[:300]}"}
        if "path" in request:
            answer["traceback"] = traceback.format_exc()
        return answer
    finally:
        sys.modules.pop("generated_kernel", None)
        sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, Package)]
        for name in [name for name in sys.modules if name == "kern" or name.startswith("kern.")]:
            del sys.modules[name]
    if "non-zero count" in printed.getvalue():
        return {"error": "semaphore count left at kernel exit: " + printed.getvalue().strip()[:300]}
    return {"ok": hashlib.sha256(repr(result.shape).encode() + result.tobytes()).hexdigest()}


def main() -> None:
    answers = os.fdopen(os.dup(1), "w")  # JAX may print to stdout; answers go to a copy
    sys.stdout = sys.stderr
    import jax  # noqa: F401 - imported once, before the first kernel is timed

    modules = pallas_modules()
    answers.write("ready\n")
    answers.flush()
    for line in sys.stdin:
        answers.write(json.dumps(run_one(json.loads(line), modules)) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
