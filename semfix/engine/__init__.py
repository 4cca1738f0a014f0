"""The driver, above the rules: one file through the skim, the rules and the proof.

CPython's parser is two orders of magnitude faster than a concrete syntax tree with scope
metadata. skim.py first clears correct kernel files from their bytes, before any parse (each
rule with a text gate, `Gate.text_gate`, adds the spelling it needs). The analysis below the
rules (semfix/analysis/) resolves imports and scopes on `ast` and gathers the evidence about
Refs; the loop (loop.py) hands each catalog call's arguments to the rules' entry points
(semfix/rules/dispatch.py), which declare their fixes as text edits; run.py applies them and
proves each result (proof.py): the new text must compile, parse to exactly the tree the
fixes declare, and a second pass must find nothing to fix. What it cannot make sure of is
reported without a fix. The entry points are `run.analyse` and, with the byte scan and the skim
before it, `fix.fix_source` (and `fix.fix_notebook`); this package imports nothing itself.
"""
