"""The engine: the rules on CPython's `ast`, each fix proven before it is kept.

libcst with scope metadata runs at a few thousand lines a second; CPython's own parser is two
orders of magnitude faster. This engine resolves imports and scopes on `ast` (scopes.py),
gathers the evidence about Refs (evidence.py), applies the rules as text edits (analysis.py,
carried.py for SEM003, migrations.py for SEM101), and proves each result (proof.py): the new
text must parse to exactly the tree the rewrites declare, and a second pass must find nothing
to fix. Whenever a file holds anything it does not model (rare placements of SEM101's import
edits, star imports), it raises `Defer` and the libcst engine takes the file. Syntax this
Python cannot parse is refused with a SourceError (semfix/syntax.py). Its output must equal
the libcst engine's byte for byte, findings included; the tests hold it to that.
"""

from semfix.engine.nodes import Defer
from semfix.engine.proof import QuickSafetyError
from semfix.engine.run import QuickResult, analyse

__all__ = ["Defer", "QuickResult", "QuickSafetyError", "analyse"]
