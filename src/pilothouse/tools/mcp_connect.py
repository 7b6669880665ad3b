"""Use an MCP tool server's tools through the real MCP client, over one long-lived session.

`MultiServerMCPClient.get_tools()` opens a new session (for stdio: a new process) per tool
call; an agent keeps one session per server instead, closed when the agent closes.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools

from pilothouse.errors import ConfigurationError


@asynccontextmanager
async def open_mcp_tools(server: str, connection: dict[str, Any]) -> AsyncIterator[list[BaseTool]]:
    """Connect to `server` (a langchain-mcp-adapters connection dict) and yield its tools."""
    client = MultiServerMCPClient({server: connection})  # type: ignore[dict-item]
    async with AsyncExitStack() as stack:
        try:
            session = await stack.enter_async_context(client.session(server))
            tools = await load_mcp_tools(session, server_name=server)
        except Exception as error:  # startup only: errors while in use propagate as they are
            raise ConfigurationError(
                f"Could not start the {server} tool server: {error}"[:400],
                hint="Run `pilothouse doctor`; reinstall with ./scripts/run.sh.",
            ) from error
        yield tools
