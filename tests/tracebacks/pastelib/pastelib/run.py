"""Runs one kernel of pastelib.kernels in interpret mode: `python -m pastelib.run kit_kernel`
(with a count after the name, runs it that many times, printing each traceback as a sweep
that goes on after a failure does).

The folder `site-packages` beside the package stands for an installed package's (kernelkit)."""

import os
import sys
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "site-packages"))

from pastelib import kernels  # noqa: E402

if len(sys.argv) > 2:
    for _ in range(int(sys.argv[2])):
        try:
            getattr(kernels, sys.argv[1])(kernels.X)
        except ValueError:
            traceback.print_exc()
else:
    print(getattr(kernels, sys.argv[1])(kernels.X)[0, 0])
