"""The `serve` command of an HTTP-API MCP server: stdio (how agents run it) or streamable HTTP.

Settings come from `Settings.from_env` (the only reader of the environment); a setting that does
not parse ends the command with the error and what to do, exit status 2. A server that lacks
its API's address or credentials still serves, and says so: its tools answer with the
configuration error until the setting is made.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Annotated, Any

import typer
from mcp.server.mcpserver import MCPServer
from rich.console import Console
from rich.markup import escape

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.tools.mcp_http import mcp_http
from pilothouse.tools.tool_filter import (
    ExcludeToolsOption,
    ReadOnlyOption,
    ToolsOption,
    with_cli_filters,
)


class Transport(enum.StrEnum):
    stdio = "stdio"
    http = "http"


def serve_app(name: str, *, title: str, help: str, default_port: int,
              build: Callable[[Settings], MCPServer[Any]],
              notice: Callable[[Settings], str | None]) -> typer.Typer:
    """A Typer app whose default command serves `build(settings)`.

`build` applies the tool filter of `settings` (`tools.tool_filter.filter_for`), into which
--read-only, --tools and --exclude-tools have been laid.

    `notice` says (on stderr) what the server will lack with these settings, or None.
    """
    app = typer.Typer(name=name, help=help, no_args_is_help=False,
                      pretty_exceptions_enable=False)

    @app.callback(invoke_without_command=True)
    def serve(
        transport: Annotated[Transport, typer.Option(help="stdio, or streamable HTTP.")] =
        Transport.stdio,
        port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --transport http.")]
        = default_port,
        host: Annotated[str, typer.Option(help="Interface for --transport http.")] =
        "127.0.0.1",
        read_only: ReadOnlyOption = False,
        tools: ToolsOption = None,
        exclude_tools: ExcludeToolsOption = None,
    ) -> None:
        """Serve the tools until the client disconnects (stdio) or Ctrl-C (http)."""
        err = Console(stderr=True)
        try:
            settings = with_cli_filters(Settings.from_env(), name, read_only=read_only,
                                        tools=tools, exclude_tools=exclude_tools)
            # `build` applies the filter: a name it does not know ends the command here.
            server = build(settings)
            http = (mcp_http(server, settings, host=host, port=port)
                    if transport is Transport.http else None)
        except PilothouseError as error:
            err.print(f"[bold red]Error:[/] {error.message}")
            if error.hint:
                err.print(f"[yellow]What to do:[/] {error.hint}")
            raise typer.Exit(2) from None
        lacking = notice(settings)
        if lacking:
            err.print(f"[yellow]{lacking}[/]")
        if http is None:
            server.run("stdio")
        else:
            err.print(f"{title} MCP server at {escape(http.summary())}", highlight=False)
            http.run(settings.log_level)

    return app
