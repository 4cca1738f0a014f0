"""semfix: pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels.

The public names are loaded on first use (PEP 562), so that `import semfix.catalog` or the
command line's start-up does not pay for the engine: `from semfix import fix_source` loads it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semfix.api import FixResult, fix_notebook, fix_source
    from semfix.errors import SafetyError, SourceError
    from semfix.findings import Finding, Fix
    from semfix.selection import build_settings
    from semfix.settings import Settings

__all__ = [
    "Finding",
    "Fix",
    "FixResult",
    "SafetyError",
    "Settings",
    "SourceError",
    "build_settings",
    "fix_notebook",
    "fix_source",
]
__version__ = "0.1.0"

#: Each public name and the module that holds it.
_HOMES = {
    "Finding": "semfix.findings",
    "Fix": "semfix.findings",
    "FixResult": "semfix.api",
    "SafetyError": "semfix.errors",
    "Settings": "semfix.settings",
    "SourceError": "semfix.errors",
    "build_settings": "semfix.selection",
    "fix_notebook": "semfix.api",
    "fix_source": "semfix.api",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'semfix' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value  # found once; later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
