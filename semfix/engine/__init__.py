"""The engine: one analysis on CPython's `ast`, which every rule reads.

CPython's parser is two orders of magnitude faster than a concrete syntax tree with scope
metadata. skim.py first clears correct kernel files from their bytes, before any parse. The
engine resolves imports and scopes on `ast` (scopes.py) and gathers the evidence about Refs
(evidence.py); `Context` (context.py) is what the rules see of that, with reporting,
suppression and the comment-aware cutting of subscripts; the loop (analysis.py) hands each
catalog call's arguments to the rules, which live in semfix/rules/ and declare their fixes as
text edits (the import edits a migration needs come from importer.py, which edits each import
statement with libcst); run.py applies
them and semfix/rewrite/proof.py proves each result: the new text must compile, parse to
exactly the tree the rewrites declare, and a second pass must find nothing to fix. What it
cannot make sure of is reported without a fix; names a star import may bind resolve to
nothing. Syntax this Python cannot parse is refused with a SourceError (syntax.py). The entry
point is `run.analyse`; this package imports nothing itself, so that the rules can import the
engine's services.
"""
