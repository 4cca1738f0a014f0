"""`semfix server`: the language server, apart from the CLI as ruff keeps `ruff_server` (its
handlers in `server`, pygls's session in `session`, findings as diagnostics and code actions in
`lsp`, a notebook's cells in `cells`). Needs the `server` extra (pygls)."""
