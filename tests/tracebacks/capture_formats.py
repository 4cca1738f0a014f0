"""Makes the stored logs of the formats tracebacks reach people in, each from a real run.

    python tests/tracebacks/capture_formats.py PYTHON

PYTHON is an interpreter with JAX 0.12.1 (the runtime tier's `.venv-jax-0.12.1`). The tools
that print the tracebacks are installed with that Python's pip into a temporary folder put on
PYTHONPATH, never into an environment (none of them is a semfix dependency), and each run
uses a copy of its package in a temporary folder, so that the paths the logs print exist
nowhere, as with capture.py. Nothing is edited afterwards. The logs:

- `colab.log`: IPython 7.34 (Colab's) runs the code cells of ringnb/ring.ipynb in turn;
- `xmode_plain.log`: IPython 9.19 the same, after `%xmode Plain` (how a notebook run in CI
  is often set to print);
- `rich_array.log`: `python -m dmalib12.run array_kernel` after `rich.traceback.install()`
  (rich 15.0.0; stderr is no terminal, so the box is 80 columns wide, as in CI);
- `group_sweep.log`: `python -m dmalib12.sweep array_kernel remote_kernel`, whose failures
  Python 3.12 prints as one ExceptionGroup;
- `pytest_summary.log`: `pytest --tb=no -rA -k "ping or drain" ptlib/check_kernels.py`
  (pytest 9.2.0): the summary lines alone.

The prefixes CI systems and launchers put before each line are added to these logs by
tests/tracebacks/prefixes.py, which says how each tool writes them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
TOOLS = {"ipython7": "ipython==7.34.0", "ipython": "ipython==9.19.1", "rich": "rich==15.0.0", "pytest": "pytest==9.2.0"}
#: Runs a notebook's code cells in turn in IPython, as a kernel does: `-c NOTEBOOK [MAGIC ...]`.
CELLS = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance(colors="NoColor")
for magic in sys.argv[2:]:
    shell.run_line_magic(*magic.split(" ", 1))
for cell in json.load(open(sys.argv[1]))["cells"]:
    if cell["cell_type"] == "code":
        shell.run_cell("".join(cell["source"]), store_history=True)
"""
RICH = "import runpy, sys, rich.traceback; rich.traceback.install(); sys.argv[0] = 'run'; runpy.run_module('dmalib12.run', run_name='__main__')"
RUNS = {  # log: (package, tool, the command after PYTHON, which stream is the log)
    "colab.log": ("ringnb", "ipython7", ["-c", CELLS, "ring.ipynb"], "stdout"),
    "xmode_plain.log": ("ringnb", "ipython", ["-c", CELLS, "ring.ipynb", "xmode Plain"], "stdout"),
    "rich_array.log": ("dmalib12", "rich", ["-c", RICH, "array_kernel"], "stderr"),
    "group_sweep.log": ("dmalib12", None, ["-m", "dmalib12.sweep", "array_kernel", "remote_kernel"], "stderr"),
    "pytest_summary.log": (
        "ptlib",
        "pytest",
        ["-m", "pytest", "-p", "no:cacheprovider", "--tb=no", "-rA", "-k", "ping or drain", "ptlib/check_kernels.py"],
        "stdout",
    ),
}


def main(python: str) -> None:
    with tempfile.TemporaryDirectory(prefix="semfix-capture-") as temporary:
        for tool, requirement in TOOLS.items():
            subprocess.run(
                [python, "-m", "pip", "install", "-q", "--target", f"{temporary}/{tool}", requirement], check=True
            )
        for log, (package, tool, command, stream) in RUNS.items():
            folder = Path(temporary) / "run" / package
            shutil.copytree(HERE / package, folder / package if package == "ptlib" else folder)
            env = {**os.environ, "PYTHONPATH": f"{temporary}/{tool}" if tool else ""}
            run = subprocess.run([python, *command], cwd=folder, env=env, capture_output=True, text=True)
            (HERE / log).write_text(getattr(run, stream))
            print(f"{log}: exit {run.returncode}, {getattr(run, stream).splitlines()[-1:]}")
            shutil.rmtree(Path(temporary) / "run")


if __name__ == "__main__":
    main(*sys.argv[1:])
