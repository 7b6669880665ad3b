"""The Argo CD MCP server: a memory-bounded client, paginated tools and search.

Entry points: `build_argocd_server(settings)` (an `MCPServer`), `stdio_parameters(settings)`
(how an agent launches it over stdio), and the Typer app `mcp_cli` in `cli.py`
(`pilothouse mcp argocd`).
"""

from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.connection import stdio_parameters
from pilothouse.tools.argocd.server import READ_TOOLS, WRITE_TOOLS, build_argocd_server

__all__ = [
    "READ_TOOLS",
    "WRITE_TOOLS",
    "ArgoCDClient",
    "build_argocd_server",
    "stdio_parameters",
]
