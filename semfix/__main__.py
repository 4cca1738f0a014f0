from semfix.cli import main

main(prog_name="semfix")
