"""semfix: pass the semaphore Ref, not a value read out of it, in JAX Pallas kernels."""

from semfix.api import FixResult, SafetyError, SourceError, fix_notebook, fix_source
from semfix.findings import Finding, Fix

__all__ = ["Finding", "Fix", "FixResult", "SafetyError", "SourceError", "fix_notebook", "fix_source"]
__version__ = "0.1.0"
