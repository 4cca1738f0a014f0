"""The JAX releases semfix supports, and release numbers as comparable tuples.

`NEWEST` is the pin the newest runtime tier runs on and the network test reads JAX's facts
against: supporting the next JAX means moving it, once that test passes on it.
"""

from __future__ import annotations

import re

Version = tuple[int, ...]

#: The oldest JAX whose Pallas API the catalog was checked against (its wheel's source).
OLDEST: Version = (0, 4, 35)
#: The newest JAX semfix is tested on (the runtime tier, the network test's reference).
NEWEST: Version = (0, 12, 1)
#: Every JAX release from OLDEST to NEWEST, as PyPI lists them: a declared requirement's floor is
#: the oldest of these it admits, the oldest JAX pip could install for the project.
RELEASES: tuple[str, ...] = (
    *("0.4.35", "0.4.36", "0.4.37", "0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.6.1", "0.6.2"),
    *("0.7.0", "0.7.1", "0.7.2", "0.8.0", "0.8.1", "0.8.2", "0.8.3", "0.9.0", "0.9.0.1", "0.9.1", "0.9.2"),
    *("0.10.0", "0.10.1", "0.10.2", "0.11.0", "0.11.1", "0.11.2", "0.12.0", "0.12.0.1", "0.12.1"),
)


def parse(text: str) -> Version:
    """`"0.12.1"` -> `(0, 12, 1)`; a release's leading numbers (`"0.7rc1"` -> `(0, 7)`)."""
    match = re.match(r"\d+(?:\.\d+)*", text.strip())
    if match is None:
        raise ValueError(f"not a JAX release number: {text!r}")
    return tuple(int(part) for part in match.group().split("."))


def spelled(version: Version) -> str:
    """`(0, 12, 1)` -> `"0.12.1"`."""
    return ".".join(map(str, version))
