from semfix.cli import entry

entry()
