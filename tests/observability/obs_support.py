"""Helpers shared by the observability tests: captured log lines and the agent's tools."""

from __future__ import annotations

import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import BaseTool, tool

from pilothouse.tools.mcp_connect import ArtifactTool, ToolFailure


class JsonLogs:
    """Log lines written to a buffer by `configure_logging(json=True)`, parsed on demand."""

    def __init__(self) -> None:
        self.buffer = io.StringIO()

    @property
    def text(self) -> str:
        return self.buffer.getvalue()

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.text.splitlines() if line.strip()]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("event") == event]


@tool
def get_application(name: str, token: str = "") -> str:
    """Return one application's status."""
    return json.dumps({"name": name, "health": "Healthy", "sync": "Synced"})


@tool
def broken_tool(reason: str) -> str:
    """A tool that always fails."""
    raise RuntimeError(f"backend unavailable: {reason}")


async def _search(query: str) -> tuple[str, ToolFailure]:
    """Search resources; rejects an over-broad query like the Argo CD search does."""
    payload = {"error": f"Query {query!r} matched 4,321 resources, more than 1,000.",
               "kind": "SearchTooBroad", "suggestion": "Refine the search.", "query": query,
               "total_matches": 4321, "limit": 1000, "breakdown": {"applications": 4321}}
    return json.dumps(payload), ToolFailure(payload)


# The same tool type the MCP bridge builds: the refusal travels as the result's artifact.
search_resources = ArtifactTool.from_function(
    coroutine=_search, name="search_resources", response_format="content_and_artifact")


@tool
def dump_inventory() -> str:
    """Return a very large inventory (the output guard must cut it)."""
    return json.dumps([{"name": f"app-{i}", "project": "payments" * 4} for i in range(200)])


TOOLS: list[BaseTool] = [get_application, broken_tool, search_resources, dump_inventory]

RunAgent = Callable[..., Awaitable[dict[str, Any]]]


