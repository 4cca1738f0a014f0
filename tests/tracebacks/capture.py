"""Makes the stored JAX logs of a kernel package by running each kernel with a real JAX.

    python tests/tracebacks/capture.py PYTHON [PACKAGE] [PREFIX]

PYTHON is an interpreter with the JAX to record (for JAX 0.12.1, a Python 3.12 environment
such as the runtime tier's `.venv-jax-0.12.1`); PACKAGE is a folder here holding a package
of the same name with `run.py` and one `kernels.py` anywhere in it (default: dmalib12); each `*_kernel` it
defines is run as `python -m PACKAGE.run NAME` and its whole stderr, as the user saw it, is
written to `PREFIX_NAME.log` here (NAME without `_kernel`). The package runs from a copy in a
temporary folder, removed afterwards, so that the paths the logs print exist nowhere, as a
CI runner's do not on a developer's machine. Nothing is edited afterwards: the logs are the
evidence tests/test_explain.py reads.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent


def main(python: str, package: str = "dmalib12", prefix: str = "dma12") -> None:
    folder = HERE / package
    (kernels,) = (folder / package).rglob("kernels.py")
    tree = ast.parse(kernels.read_text())
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.endswith("_kernel")]
    with tempfile.TemporaryDirectory(prefix="semfix-capture-") as temporary:
        copy = Path(temporary) / package
        shutil.copytree(folder, copy)
        runs = [
            (name, subprocess.run([python, "-m", f"{package}.run", name], cwd=copy, capture_output=True, text=True))
            for name in names
        ]
    for name, run in runs:
        log = HERE / f"{prefix}_{name.removesuffix('_kernel')}.log"
        log.write_text(run.stderr)
        raised = [line for line in run.stderr.splitlines() if line.startswith(("ValueError", "AttributeError", "RuntimeError"))]
        print(f"{log.name}: exit {run.returncode}, {raised[-1:] or ['(no error)']}")


if __name__ == "__main__":
    main(*sys.argv[1:])
