"""The `--read-only`, `--tools` and `--exclude-tools` options of every MCP server's command.

Declared once here, with nothing but Typer, so that a module defining a server's command can be
imported (to register it, or for `pilothouse --help`) without loading the MCP SDK; what the
options do is `tool_filter`'s.
"""

from __future__ import annotations

from typing import Annotated

import typer

ReadOnlyOption = Annotated[bool, typer.Option(
    "--read-only", help="Hide every tool that changes anything (also PILOTHOUSE_MCP_READ_ONLY).")]
ToolsOption = Annotated[str | None, typer.Option(
    "--tools", help="Serve only these tools, comma-separated.")]
ExcludeToolsOption = Annotated[str | None, typer.Option(
    "--exclude-tools", help="Do not serve these tools, comma-separated.")]
