"""JAX as the oracle of semfix's fixes (issue 35): generated kernels, planted mistakes, the judgement.

`python -m tests.oracle --minutes N` soaks; tests/test_oracle.py runs a fixed set of seeds.
"""

from __future__ import annotations

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
if str(TESTS) not in sys.path:  # jax_env and kernel_worker are imported as the other tests do
    sys.path.insert(0, str(TESTS))
