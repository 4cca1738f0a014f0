"""Files and commands: the click CLI, discovery and atomic writes, git, notebooks, reports and
`explain`. This layer knows files and text; it asks `semfix.api` for every analysis and fix.
"""
