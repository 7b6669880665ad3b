"""The Argo CD agent: the Argo CD MCP server's tools, the seed's prompt strategy, sync approval."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langgraph.prebuilt.tool_node import ToolCallRequest

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.tools.argocd.connection import stdio_parameters
from pilothouse.tools.mcp_connect import open_mcp_tools


def _real_sync(request: ToolCallRequest) -> bool:
    """A sync that changes the cluster (not a dry run) needs a person's approval."""
    return request.tool_call["args"].get("dry_run", True) is False


SYNC_APPROVAL = InterruptOnConfig(
    allowed_decisions=["approve", "reject"],
    description="Sync this application to its target revision on the cluster?",
    when=_real_sync,
)


@asynccontextmanager
async def open_argocd_toolkit(settings: Settings) -> AsyncIterator[Toolkit]:
    """Start the Argo CD tool server for `settings` and yield the agent's toolkit."""
    async with open_mcp_tools("argocd", stdio_parameters(settings)) as tools:
        yield Toolkit(
            name="argocd",
            prompt=ARGOCD_SYSTEM_PROMPT,
            tools=tools,
            approvals={"sync_application": SYNC_APPROVAL},
        )
