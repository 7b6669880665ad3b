"""`python -m pilothouse.tools.github`: the GitHub MCP server on stdio (how agents launch it)."""

from pilothouse.tools.github.cli import mcp_cli

mcp_cli(prog_name="python -m pilothouse.tools.github")
