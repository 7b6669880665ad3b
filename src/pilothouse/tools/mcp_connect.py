"""Open an MCP tool server as a child process and use its tools through the real MCP client.

One long-lived session per server (not a new process per tool call, which is what
`MultiServerMCPClient.get_tools()` does by default), closed when the agent closes.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager

from langchain_core.tools import BaseTool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.client.stdio import get_default_environment

from pilothouse.errors import ConfigurationError


@asynccontextmanager
async def open_mcp_tools(
    server: str, args: list[str], env: Mapping[str, str]
) -> AsyncIterator[list[BaseTool]]:
    """Start `python -m pilothouse mcp <server> ...` over stdio and yield its tools.

    The child gets the MCP SDK's safe default environment plus `env`: secrets reach a tool
    server only when its settings name them.
    """
    client = MultiServerMCPClient({
        server: {
            "transport": "stdio",
            "command": sys.executable,
            "args": ["-m", "pilothouse", "mcp", server, *args],
            "env": {**get_default_environment(), **env},
        }
    })
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
