"""`python -m pilothouse.sandbox.github [--port P] [--token T]`: the sandbox without the CLI."""

from pilothouse.sandbox.github.cli import sandbox_cli

sandbox_cli(prog_name="python -m pilothouse.sandbox.github")
