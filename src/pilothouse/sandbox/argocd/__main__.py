"""`python -m pilothouse.sandbox.argocd [--apps N] [--port P]`: the sandbox without the CLI."""

from pilothouse.sandbox.argocd.cli import sandbox_cli

sandbox_cli(prog_name="python -m pilothouse.sandbox.argocd")
