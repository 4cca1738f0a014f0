"""The engine: the rules on CPython's `ast`, each fix proven before it is kept.

CPython's parser is two orders of magnitude faster than a concrete syntax tree with scope
metadata. This engine resolves imports and scopes on `ast` (scopes.py), gathers the evidence
about Refs (evidence.py), applies the rules as text edits (analysis.py, carried.py for SEM003,
migrations.py for SEM101, whose import statements libcst edits one at a time), and proves each
result (proof.py): the new text must parse to exactly the tree the rewrites declare, and a
second pass must find nothing to fix. What it cannot make sure of (rare placements of SEM101's
import edits, nested semaphore calls, unusual subscripts) is reported without a fix; names a
star import may bind resolve to nothing. Syntax this Python cannot parse is refused with a
SourceError (semfix/syntax.py).
"""

from semfix.engine.proof import QuickSafetyError
from semfix.engine.run import QuickResult, analyse

__all__ = ["QuickResult", "QuickSafetyError", "analyse"]
