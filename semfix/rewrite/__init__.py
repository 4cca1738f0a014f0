"""Rewriting and its proof: text edits and the proof
(compiles, parses to the declared tree, settles) that every rewrite passes before a write.
"""
