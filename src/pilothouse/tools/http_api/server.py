"""Run the tools of an HTTP-API MCP server: one client, compact JSON answers, one error shape.

A tool body is `work(client) -> payload`; `ToolRunner` hands it the client of the current event
loop, fits the payload into `MAX_TOOL_OUTPUT_SIZE`, and answers with the payload's rendered view
as text plus the payload as structured content. Failures are raised, never returned:
`ToolServer` turns them into the one tool-error shape with `is_error` set. The runner's
lifespan closes the client with the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Annotated, Any, Generic

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from pilothouse.tools.mcp_support import ClientHolder, ClientT, tool_result, without_titles
from pilothouse.tools.tool_server import ToolServer

Payload = dict[str, Any]
#: Shortens an answer to at most the given number of characters of JSON.
Fit = Callable[[Payload, int], Payload]
ToolFunction = Callable[..., Awaitable[CallToolResult]]
#: Renders a payload as the text the model reads and the person sees (`tools.views`).
View = Callable[[Payload], str]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=True)
#: The paging arguments of list tools, described once: every description costs schema tokens.
Page = Annotated[int, Field(description="1-based page")]
PageSize = Annotated[int, Field(description="items per page, max 100")]


class ToolRunner(Generic[ClientT]):
    """Runs tool bodies against the API client and renders their answers."""

    def __init__(self, client_factory: Callable[[], ClientT], *, fit: Fit,
                 max_output_chars: int) -> None:
        self._clients = ClientHolder(client_factory)
        self._fit = fit
        self._max_output_chars = max_output_chars

    async def __call__(self, work: Callable[[ClientT], Awaitable[Payload]],
                       view: View | None = None) -> CallToolResult:
        """Run `work`; answer with its fitted payload and, as text, its `view`."""
        payload = await work(self._clients.get())
        return tool_result(self._fit(payload, self._max_output_chars), is_error=False,
                           view=view)

    @asynccontextmanager
    async def lifespan(self, _: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        try:
            yield {}
        finally:
            await self._clients.aclose()


def tool(fn: ToolFunction, description: str, *, annotations: ToolAnnotations) -> Tool:
    """`fn` as an MCP tool named after it, with a short description and a title-free schema.

    `annotations` has no default on purpose: every tool says whether it reads or writes
    (`tool_filter.READS` / `WRITES` / `DESTROYS`), so a new writing tool cannot slip past the
    read-only filter by being registered without a word.
    """
    made = Tool.from_function(fn, name=fn.__name__, description=description,
                              annotations=annotations)
    made.parameters = without_titles(made.parameters)
    return made


def http_tool_server(name: str, instructions: str, runner: ToolRunner[Any],
                     tools: Sequence[Tool], *, log_level: str) -> ToolServer:
    """The MCP server of `tools`, closing `runner`'s client when it stops."""
    return ToolServer(name, instructions=instructions, lifespan=runner.lifespan,
                      log_level=log_level,  # type: ignore[arg-type]
                      tools=list(tools))
