"""`python -m pilothouse`: the same as the `pilothouse` command (used to launch tool servers)."""

from pilothouse.interfaces.cli import main

main()
