"""Use an MCP tool server's tools from LangChain, through the official MCP client.

We would use `langchain-mcp-adapters`, but its releases (0.3.x) require `mcp<2` and import
names the 2.x SDK removed, so this is the small part of it we need, on `mcp.Client` 2.x: one
long-lived session per server (the adapters' default opens a session, for stdio a whole
process, per tool call), each MCP tool as a `StructuredTool` with the server's own JSON schema,
and tool errors (`is_error`) returned to the model as error results rather than raised.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from mcp import Client, StdioServerParameters

from pilothouse.errors import ConfigurationError
from pilothouse.tools.mcp_support import stdio_server

__all__ = ["as_langchain_tool", "open_mcp_tools", "result_text", "stdio_server"]


def result_text(result: Any) -> str:
    """The text a model should see for a `CallToolResult`."""
    parts = [getattr(block, "text", None) for block in result.content]
    texts = [p for p in parts if isinstance(p, str)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, default=str)
    return ""


def as_langchain_tool(client: Client, name: str, description: str,
                      schema: dict[str, Any]) -> BaseTool:
    """One MCP tool as a LangChain tool that calls it over `client`'s session."""

    async def call(**arguments: Any) -> str:
        result = await client.call_tool(name, arguments)
        text = result_text(result)
        if result.is_error:
            raise ToolException(text or f"{name} failed without a message")
        return text

    def call_sync(**arguments: Any) -> str:
        raise NotImplementedError("MCP tools are asynchronous; run the agent with ainvoke")

    return StructuredTool(
        name=name,
        description=description or name,
        args_schema=schema,
        func=call_sync,
        coroutine=call,
        handle_tool_error=True,  # ToolException -> an error result the model can act on
    )


@asynccontextmanager
async def open_mcp_tools(
    server: str, target: StdioServerParameters | str
) -> AsyncIterator[list[BaseTool]]:
    """Connect to an MCP server (stdio parameters or a streamable-HTTP URL); yield its tools."""
    async with AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(Client(target, mode="legacy"))
            listing = await client.list_tools()
        except Exception as error:  # startup only: errors while in use propagate as they are
            raise ConfigurationError(
                f"Could not start the {server} tool server: {error}"[:400],
                hint="Run `pilothouse doctor`; reinstall with ./scripts/run.sh.",
            ) from error
        yield [as_langchain_tool(client, t.name, t.description or "", t.input_schema)
               for t in listing.tools]
