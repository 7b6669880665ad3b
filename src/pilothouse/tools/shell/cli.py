"""`pilothouse mcp shell`: serve the shell tools over stdio or streamable HTTP.

The lead CLI mounts `mcp_cli` with `app.add_typer(mcp_cli, name="mcp")`; `python -m
pilothouse.tools.shell` runs the same `shell` command on its own (tests launch it that way).
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from pilothouse.config import Settings
from pilothouse.errors import PilothouseError
from pilothouse.tools.mcp_http import mcp_http
from pilothouse.tools.shell.server import build_shell_server
from pilothouse.tools.tool_filter import (
    ExcludeToolsOption,
    ReadOnlyOption,
    ToolsOption,
    apply_tool_filter,
    filter_for,
    with_cli_filters,
)

mcp_cli = typer.Typer(
    name="mcp",
    help="Run Pilothouse MCP tool servers.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


@mcp_cli.command("shell")
def shell(
    workspace: Annotated[
        Path,
        typer.Option(
            help="Directory commands run in and may write to.",
            file_okay=False,
            exists=True,
            resolve_path=True,
        ),
    ] = Path("."),
    transport: Annotated[Transport, typer.Option(help="stdio, or streamable HTTP.")] = (
        Transport.stdio
    ),
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    policy_file: Annotated[
        Path | None,
        typer.Option(help="TOML/YAML rules merged over the defaults.", exists=True, dir_okay=False),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Default per-command timeout (s).")] = 30.0,
    max_timeout: Annotated[float, typer.Option(help="Largest timeout a call may ask.")] = 600.0,
    output_limit: Annotated[int, typer.Option(help="Bytes of stdout/stderr kept.")] = 64_000,
    read_only: ReadOnlyOption = False,
    tools: ToolsOption = None,
    exclude_tools: ExcludeToolsOption = None,
) -> None:
    """Serve run_command for WORKSPACE (approval secret: $PILOTHOUSE_APPROVAL_SECRET)."""
    server = build_shell_server(
        workspace,
        policy_file=policy_file,
        timeout_seconds=timeout,
        max_timeout_seconds=max_timeout,
        output_limit_bytes=output_limit,
    )
    err = Console(stderr=True)
    try:
        settings = with_cli_filters(Settings.from_env(), "shell", read_only=read_only,
                                    tools=tools, exclude_tools=exclude_tools)
        apply_tool_filter(server, filter_for(settings, "shell"))
        http = (mcp_http(server, settings, host=host, port=port)
                if transport is Transport.http else None)
    except PilothouseError as error:
        err.print(f"[bold red]Error:[/] {error.message}", highlight=False)
        if error.hint:
            err.print(f"[yellow]What to do:[/] {error.hint}", highlight=False)
        raise typer.Exit(2) from None
    if http is not None:
        err.print(f"Shell MCP server at {escape(http.summary())}", highlight=False)
        http.run(settings.log_level)
    else:
        server.run("stdio")
