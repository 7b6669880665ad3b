"""`pilothouse mcp github`: run the GitHub MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated

import typer
from rich.console import Console

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.tools.github.connection import GitHubConnection
from pilothouse.tools.github.server import build_github_server


class Transport(enum.StrEnum):
    stdio = "stdio"
    http = "http"


def github_connection(settings: Settings) -> GitHubConnection:
    """The GitHub connection described by `settings` (GITHUB_TOKEN, GITHUB_API_URL, ...)."""
    return GitHubConnection(api_url=settings.github_api_url, token=settings.github_token,
                            timeout_seconds=settings.github_timeout_seconds,
                            rate_limit_max_wait_seconds=settings.github_rate_limit_max_wait)


def github_connection_from_env(env: Mapping[str, str] | None = None) -> GitHubConnection:
    """The GitHub connection from the environment (through `Settings`, its only reader)."""
    return github_connection(Settings.from_env(env))


mcp_cli = typer.Typer(
    name="github",
    help="Run the GitHub MCP server (reads GITHUB_TOKEN and GITHUB_API_URL from the "
         "environment).",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)


@mcp_cli.callback(invoke_without_command=True)
def serve(
    transport: Annotated[Transport, typer.Option(help="stdio, or streamable HTTP.")] =
    Transport.stdio,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --transport http.")] = 8766,
    host: Annotated[str, typer.Option(help="Interface for --transport http.")] = "127.0.0.1",
) -> None:
    """Serve the GitHub tools until the client disconnects (stdio) or Ctrl-C (http)."""
    err = Console(stderr=True)
    try:
        settings = Settings.from_env()
        connection = github_connection_from_env()
    except PilothouseError as error:
        err.print(f"[bold red]Error:[/] {error.message}")
        if error.hint:
            err.print(f"[yellow]What to do:[/] {error.hint}")
        raise typer.Exit(2) from None
    if connection.token is None:
        # Still serve: public repositories work, and errors say that a token is missing.
        err.print("[yellow]GITHUB_TOKEN is not set: only public repositories are visible and "
                  "GitHub allows 60 requests an hour.[/]")
    server = build_github_server(
        connection.api_url, connection.token, timeout=connection.timeout_seconds,
        max_rate_limit_wait=connection.rate_limit_max_wait_seconds,
        max_output_chars=settings.max_tool_output_size, log_level=settings.log_level)
    if transport is Transport.stdio:
        server.run("stdio")
    else:
        err.print(f"GitHub MCP server at http://{host}:{port}/mcp")
        server.run("streamable-http", host=host, port=port)
