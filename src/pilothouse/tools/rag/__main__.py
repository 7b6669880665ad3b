"""`python -m pilothouse.tools.rag`: the RAG MCP server on stdio (how agents launch it)."""

from pilothouse.private_files import restrict_umask
from pilothouse.tools.rag.cli import mcp_cli

restrict_umask()  # the index quotes the code: its store is owner-only, as `pilothouse` makes it
mcp_cli(prog_name="python -m pilothouse.tools.rag")
