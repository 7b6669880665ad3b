"""`python -m pilothouse.tools.shell [--workspace DIR] [--transport stdio|http]`."""

import typer

from pilothouse.tools.shell.cli import shell

if __name__ == "__main__":
    typer.run(shell)
