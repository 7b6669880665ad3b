"""The GitHub MCP server: a memory-bounded client, paged tools in minimal shapes, run logs.

Entry points: `build_github_server(api_url, token, ...)` (an `MCPServer`), `GitHubClient`,
`stdio_parameters(connection)` (how an agent launches it over stdio), and the Typer app
`mcp_cli` in `cli.py` (`pilothouse mcp github`).
"""

from pilothouse.tools.github.client import DEFAULT_API_URL, GitHubClient
from pilothouse.tools.github.connection import (
    GitHubConnection,
    github_connection,
    stdio_parameters,
)
from pilothouse.tools.github.errors import RateLimitError
from pilothouse.tools.github.server import TOOLS, build_github_server

__all__ = [
    "DEFAULT_API_URL",
    "TOOLS",
    "GitHubClient",
    "GitHubConnection",
    "RateLimitError",
    "build_github_server",
    "github_connection",
    "stdio_parameters",
]
