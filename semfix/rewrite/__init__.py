"""Rewriting, below the analysis: decoding and text edits, import edits through libcst, and
whether CPython compiles a text. The proof every rewrite passes is the driver's (semfix/engine/proof.py).
"""
