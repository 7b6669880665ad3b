"""`python -m pilothouse.tools.argocd`: the Argo CD MCP server on stdio (how agents launch it)."""

from pilothouse.tools.argocd.cli import mcp_cli

mcp_cli(prog_name="python -m pilothouse.tools.argocd")
