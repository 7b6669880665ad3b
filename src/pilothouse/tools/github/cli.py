"""`pilothouse mcp github`: run the GitHub MCP server over stdio or streamable HTTP."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from pilothouse.config import Settings
from pilothouse.tools.github.connection import github_connection
from pilothouse.tools.github.server import build_github_server
from pilothouse.tools.http_api.cli import serve_app
from pilothouse.tools.tool_filter import apply_tool_filter, filter_for


def _build(settings: Settings) -> MCPServer[Any]:
    connection = github_connection(settings)
    server = build_github_server(
        connection.api_url, connection.token, timeout=connection.timeout_seconds,
        max_rate_limit_wait=connection.rate_limit_max_wait_seconds,
        max_output_chars=settings.max_tool_output_size, log_level=settings.log_level)
    apply_tool_filter(server, filter_for(settings, "github"))
    return server


def _lacking(settings: Settings) -> str | None:
    # Still served: public repositories work, and errors say that a token is missing.
    if settings.github_token:
        return None
    return ("GITHUB_TOKEN is not set: only public repositories are visible and GitHub allows "
            "60 requests an hour.")


mcp_cli = serve_app(
    "github", title="GitHub", default_port=8766, build=_build, notice=_lacking,
    help="Run the GitHub MCP server (reads GITHUB_TOKEN and GITHUB_API_URL from the "
         "environment).")
