from semfix.cli.main import entry

entry()
