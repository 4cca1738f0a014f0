"""Runs kernel modules sent one per line (JSON) on stdin; answers one JSON line each on stdout.

A subprocess so that a kernel that deadlocks (a wait on a semaphore nobody signals) can be
killed by the parent's watchdog, and so that JAX is imported once for many kernels. Each
answer is {"ok": digest of the result} or {"error": "Type: message"}; a semaphore left with a
count at kernel exit (JAX's interpret mode only prints that) counts as an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import sys


def run_one(source: str) -> dict[str, str]:
    """Execute the module text and call its run(); never raises."""
    import numpy as np

    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            namespace: dict[str, object] = {"__name__": "generated_kernel"}
            exec(compile(source, "<generated kernel>", "exec"), namespace)  # noqa: S102 - the kernel under test
            result = np.asarray(namespace["run"]())  # type: ignore[operator]
    except BaseException as error:  # noqa: BLE001 - every failure is an answer
        return {"error": f"{type(error).__name__}: {str(error)[:300]}"}
    if "non-zero count" in printed.getvalue():
        return {"error": "semaphore count left at kernel exit: " + printed.getvalue().strip()[:300]}
    return {"ok": hashlib.sha256(repr(result.shape).encode() + result.tobytes()).hexdigest()}


def main() -> None:
    answers = os.fdopen(os.dup(1), "w")  # JAX may print to stdout; answers go to a copy
    sys.stdout = sys.stderr
    import jax  # noqa: F401 - imported once, before the first kernel is timed

    answers.write("ready\n")
    answers.flush()
    for line in sys.stdin:
        answers.write(json.dumps(run_one(json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
