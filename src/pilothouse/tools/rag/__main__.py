"""`python -m pilothouse.tools.rag`: the RAG MCP server on stdio (how agents launch it)."""

from pilothouse.tools.rag.cli import mcp_cli

mcp_cli(prog_name="python -m pilothouse.tools.rag")
