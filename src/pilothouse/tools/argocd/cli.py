"""`pilothouse mcp argocd`: run the Argo CD MCP server over stdio or streamable HTTP."""

from __future__ import annotations

import enum
from typing import Annotated

import typer
from rich.console import Console

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.tools.argocd.server import build_argocd_server


class Transport(enum.StrEnum):
    stdio = "stdio"
    http = "http"


mcp_cli = typer.Typer(
    name="argocd",
    help="Run the Argo CD MCP server (reads ARGOCD_URL, ARGOCD_TOKEN, ... from the environment).",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
)


@mcp_cli.callback(invoke_without_command=True)
def serve(
    transport: Annotated[Transport, typer.Option(help="stdio, or streamable HTTP.")] =
    Transport.stdio,
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --transport http.")] = 8765,
    host: Annotated[str, typer.Option(help="Interface for --transport http.")] = "127.0.0.1",
) -> None:
    """Serve the Argo CD tools until the client disconnects (stdio) or Ctrl-C (http)."""
    err = Console(stderr=True)
    try:
        settings = Settings.from_env()
    except PilothouseError as error:
        err.print(f"[bold red]Error:[/] {error.message}")
        if error.hint:
            err.print(f"[yellow]What to do:[/] {error.hint}")
        raise typer.Exit(2) from None
    if not settings.argocd_url:
        # Still serve: every tool then answers with a clear "ARGOCD_URL is not set" payload.
        err.print("[yellow]ARGOCD_URL is not set; tools will say so until it is.[/]")
    server = build_argocd_server(settings)
    if transport is Transport.stdio:
        server.run("stdio")
    else:
        err.print(f"Argo CD MCP server at http://{host}:{port}/mcp")
        server.run("streamable-http", host=host, port=port)
