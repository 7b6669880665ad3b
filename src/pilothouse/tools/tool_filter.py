"""Read-only mode and tool filters, the same on every MCP tool server (argocd, github, shell, rag).

Each tool says once, where it is registered, whether it changes anything: its MCP annotations
(`readOnlyHint`, `destructiveHint`). A tool not marked `readOnlyHint=true` counts as one that
writes, so a forgotten annotation hides a tool rather than exposing a write.

- `--read-only` (or `PILOTHOUSE_MCP_READ_ONLY=true`; for Argo CD also `ARGOCD_READ_ONLY`, on by
  default) hides every tool that writes, whatever else is set. Naming a writing tool in
  `--tools` under read-only is refused at start-up: the two ask for opposite things, and
  guessing which one was meant would either expose a write or silently drop a tool.
- `--tools a,b` keeps only those tools; `--exclude-tools c` removes tools.
- A name the server does not have is refused at start-up, with the real names listed.

Hidden tools are removed from the server, so calling one is the one unknown-tool error of
`ToolServer` (naming the tools that remain).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError

# The CLI options, declared once for every server's command (there: importable without MCP).
from pilothouse.tools.filter_options import ExcludeToolsOption as ExcludeToolsOption
from pilothouse.tools.filter_options import ReadOnlyOption as ReadOnlyOption
from pilothouse.tools.filter_options import ToolsOption as ToolsOption
from pilothouse.tools.tool_server import ToolServer

#: How a tool that reads only is annotated, and how one that changes things is.
READS = ToolAnnotations(read_only_hint=True)
#: Changes something, but nothing is destroyed (re-indexing, a sync behind approval).
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
#: May destroy something (a shell command line).
DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True)


@dataclass(frozen=True)
class ToolFilter:
    """Which of a server's tools it serves."""

    read_only: bool = False
    #: Only these (empty: all).
    tools: tuple[str, ...] = ()
    exclude_tools: tuple[str, ...] = ()
    #: What turned read-only on, for the start-up error.
    read_only_source: str = "--read-only"


def writes(tool: Tool) -> bool:
    """Whether `tool` may change anything: only `readOnlyHint=true` says it does not."""
    annotations = tool.annotations
    return annotations is None or annotations.read_only_hint is not True


def _names(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


def with_cli_filters(settings: Settings, server: str, *, read_only: bool, tools: str | None,
                     exclude_tools: str | None) -> Settings:
    """`settings` with a command's --read-only/--tools/--exclude-tools laid over them."""
    changed = settings
    if read_only:
        changed = dataclasses.replace(changed, mcp_read_only=True)
    if tools is not None:
        changed = dataclasses.replace(
            changed, mcp_tools={**changed.mcp_tools, server: _names(tools)})
    if exclude_tools is not None:
        changed = dataclasses.replace(
            changed, mcp_exclude_tools={**changed.mcp_exclude_tools,
                                        server: _names(exclude_tools)})
    return changed


def filter_for(settings: Settings, server: str) -> ToolFilter:
    """The filter `settings` ask of `server` (argocd also honours ARGOCD_READ_ONLY)."""
    source = "--read-only / PILOTHOUSE_MCP_READ_ONLY"
    read_only = settings.mcp_read_only
    if server == "argocd" and settings.argocd_read_only and not read_only:
        read_only, source = True, "ARGOCD_READ_ONLY (true unless set to false)"
    return ToolFilter(read_only=read_only, tools=settings.mcp_tools.get(server, ()),
                      exclude_tools=settings.mcp_exclude_tools.get(server, ()),
                      read_only_source=source)


def cli_arguments(settings: Settings, server: str) -> list[str]:
    """The command-line options that reproduce `settings`' filter for `server` in a child."""
    args = ["--read-only"] if settings.mcp_read_only else []
    if server in settings.mcp_tools:
        args += ["--tools", ",".join(settings.mcp_tools[server])]
    if server in settings.mcp_exclude_tools:
        args += ["--exclude-tools", ",".join(settings.mcp_exclude_tools[server])]
    return args


def _check_known(kind: str, asked: Iterable[str], known: Sequence[str], server: str) -> None:
    unknown = sorted(set(asked) - set(known))
    if unknown:
        raise ConfigurationError(
            f"The {server} MCP server has no tool named {', '.join(map(repr, unknown))} "
            f"(in {kind}).",
            hint=f"Use names of its tools: {', '.join(sorted(known))}.")


def apply_tool_filter(server: ToolServer, chosen: ToolFilter) -> list[str]:
    """Remove the tools `chosen` hides from `server`; return their names.

    Raises `ConfigurationError` (before anything is served) for a name the server does not
    have, or a writing tool named in `tools` under read-only.
    """
    registered = server.registered_tools()
    known = [tool.name for tool in registered]
    _check_known("--tools / PILOTHOUSE_MCP_<SERVER>_TOOLS", chosen.tools, known, server.name)
    _check_known("--exclude-tools / PILOTHOUSE_MCP_<SERVER>_EXCLUDE_TOOLS",
                 chosen.exclude_tools, known, server.name)
    writing = sorted(tool.name for tool in registered if writes(tool))
    if chosen.read_only:
        conflict = sorted(set(chosen.tools) & set(writing))
        if conflict:
            raise ConfigurationError(
                f"{', '.join(conflict)} change{'s' if len(conflict) == 1 else ''} things, and "
                f"the {server.name} MCP server is read-only ({chosen.read_only_source}).",
                hint="Remove the writing tools from --tools, or turn read-only off.")
    hidden = [name for name in known
              if (chosen.read_only and name in writing)
              or (chosen.tools and name not in chosen.tools)
              or name in chosen.exclude_tools]
    for name in hidden:
        server.remove_tool(name)
    return hidden
