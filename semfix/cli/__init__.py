"""The click commands, and only they: options, runs over files, reports and formats. They know
files and text and ask `semfix.api` for every analysis and fix (explain's search included); the
files themselves are read, found and written through semfix/files.py, which the server and
explain share.
"""
