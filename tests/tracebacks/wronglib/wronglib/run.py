"""Runs one kernel of wronglib.kernels in interpret mode: `python -m wronglib.run scaled_kernel`.

The folder `site-packages` beside the package stands for an installed package's (ringhelp)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "site-packages"))

from wronglib import kernels  # noqa: E402

print(getattr(kernels, sys.argv[1])(kernels.X)[0, 0])
