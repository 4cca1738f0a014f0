"""Makes the stored logs of pastelib (issue 44) by running its kernels with a real JAX.

    python tests/tracebacks/capture_paste.py PYTHON_0_10 PYTHON_0_12 [LOG ...]

PYTHON_0_10 is an interpreter with JAX 0.10.2 and pytest (the project's `.venv`), PYTHON_0_12
one with JAX 0.12.1 (the runtime tier's `.venv-jax-0.12.1`). As capture.py does, each run uses
a copy of pastelib in a temporary folder, removed afterwards, so that the paths the logs print
exist nowhere (kernelkit's among them: an installed package whose source is not on this
machine). Nothing is edited afterwards. With LOGs named, only those are made. `paste_*` logs
are 0.10.2's, `paste12_*` 0.12.1's:

- `paste{,12}_NAME.log`: `python -m pastelib.run NAME_kernel`, its stderr;
- `paste_old.log`: the same for `old_kernel` under `-W error::DeprecationWarning`;
- `paste{,12}_{handed,keyword}.log`: a kernel handing `flags[1]` to an installed helper
  (kernelkit's `signal_wait`) by position, then by keyword;
- `paste{,12}_{pick,handed,copied}_long.log`: `pytest --tb=long -k NAME pastelib/test_kernels.py`, its stdout
  (for 0.12.1, pytest 9.2.0 installed as IPython is, below);
- `paste{,12}_sigwait_line.log`: `pytest --tb=line -k sigwait pastelib/test_kernels.py`, its stdout;
- `paste{,12}_repeat.log`: `python -m pastelib.run sigwait_kernel 400`: one traceback 400 times;
- `paste{,12}_notebook.log`: IPython 9.19.1 (installed with pip into a temporary folder put on
  PYTHONPATH, as capture_formats.py does, one for each Python) runs the code cells of
  pastelib/notebook.ipynb in turn, as a kernel does; its helper cell begins with a blank line,
  which IPython drops;
- `paste{,12}_followup.log`: the same for pastelib/followup.ipynb (a kernel that signals, then waits).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import capture_formats

HERE = Path(__file__).parent
CELLS = capture_formats.CELLS  # runs a notebook's code cells in IPython, as a kernel does
PYTEST = ["-m", "pytest", "-p", "no:cacheprovider", "pastelib/test_kernels.py"]
RUNS = {  # log: (which Python, the command after it, which stream is the log)
    **{
        f"paste_{n}.log": (0, ["-m", "pastelib.run", f"{n}_kernel"], "stderr")
        for n in ("kit", "sigwait", "noqa", "when", "listed", "ctx", "whole", "loops", "unpacked", "handed", "keyword")
    },
    **{
        f"paste12_{n}.log": (1, ["-m", "pastelib.run", f"{n}_kernel"], "stderr")
        for n in (
            "kit",
            "sigwait",
            "when",
            "listed",
            "old",
            "loops",
            "unpacked",
            "handed",
            "keyword",
            "ctx",
            "whole",
            "noqa",
        )
    },
    "paste_old.log": (0, ["-W", "error::DeprecationWarning", "-m", "pastelib.run", "old_kernel"], "stderr"),
    "paste_pick_long.log": (0, [*PYTEST, "--tb=long", "-k", "pick"], "stdout"),
    "paste12_pick_long.log": (1, [*PYTEST, "--tb=long", "-k", "pick"], "stdout"),
    **{f"paste_{n}_long.log": (0, [*PYTEST, "--tb=long", "-k", n], "stdout") for n in ("handed", "copied")},
    **{f"paste12_{n}_long.log": (1, [*PYTEST, "--tb=long", "-k", n], "stdout") for n in ("handed", "copied")},
    "paste_sigwait_line.log": (0, [*PYTEST, "--tb=line", "-k", "sigwait"], "stdout"),
    "paste12_sigwait_line.log": (1, [*PYTEST, "--tb=line", "-k", "sigwait"], "stdout"),
    "paste_repeat.log": (0, ["-m", "pastelib.run", "sigwait_kernel", "400"], "stderr"),
    "paste12_repeat.log": (1, ["-m", "pastelib.run", "sigwait_kernel", "400"], "stderr"),
    **{f"paste{v}_notebook.log": (p, ["-c", CELLS, "notebook.ipynb"], "stdout") for p, v in ((0, ""), (1, "12"))},
    **{f"paste{v}_followup.log": (p, ["-c", CELLS, "followup.ipynb"], "stdout") for p, v in ((0, ""), (1, "12"))},
}


def main(python_0_10: str, python_0_12: str, *only: str) -> None:
    pythons = (python_0_10, python_0_12)
    with tempfile.TemporaryDirectory(prefix="semfix-capture-") as temporary:
        copy = Path(temporary) / "pastelib"
        shutil.copytree(HERE / "pastelib", copy)
        tools = [f"{temporary}/ipython-0.10", f"{temporary}/ipython"]  # each Python's own: IPython, pytest
        for python, tool, packages in zip(pythons, tools, (["ipython==9.19.1"], ["ipython==9.19.1", "pytest==9.2.0"])):
            subprocess.run([python, "-m", "pip", "install", "-q", "--target", tool, *packages], check=True)
        for log, (python, command, stream) in RUNS.items():
            if only and log not in only:
                continue
            env = {**os.environ, "PYTHONPATH": tools[python]}
            run = subprocess.run([pythons[python], *command], cwd=copy, env=env, capture_output=True, text=True)
            (HERE / log).write_text(getattr(run, stream))
            print(f"{log}: exit {run.returncode}, {getattr(run, stream).splitlines()[-1:]}")


if __name__ == "__main__":
    main(*sys.argv[1:])
