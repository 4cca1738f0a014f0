"""Rewriting and its proof: text edits, SEM101's import edits through libcst, and the proof
(compiles, parses to the declared tree, settles) that every rewrite passes before a write.
"""
