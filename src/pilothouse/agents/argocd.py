"""The Argo CD agent: the Argo CD MCP server's tools, the seed's prompt strategy, sync approval."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from pilothouse.agents.argocd_prompt import ARGOCD_SYSTEM_PROMPT
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.runtime.tool_first import ToolFirstMiddleware
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


class SyncApprovedMiddleware(AgentMiddleware):
    """Sets `approved` on sync calls from the approval gate, never from the model.

    It sits inside the human-in-the-loop gate, so a real sync reaches it only after a person
    approved; whatever `approved` the model wrote is replaced.
    """

    def _mark(self, request: ToolCallRequest) -> ToolCallRequest:
        call = request.tool_call
        if call["name"] != "sync_application":
            return request
        args = {**call["args"], "approved": _real_sync(request)}
        return request.override(tool_call={**call, "args": args})

    def wrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        return handler(self._mark(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        return await handler(self._mark(request))


@asynccontextmanager
async def open_argocd_toolkit(settings: Settings) -> AsyncIterator[Toolkit]:
    """Start the Argo CD tool server for `settings` and yield the agent's toolkit."""
    async with open_mcp_tools("argocd", stdio_parameters(settings)) as tools:
        yield Toolkit(
            name="argocd",
            prompt=ARGOCD_SYSTEM_PROMPT,
            tools=tools,
            approvals={"sync_application": SYNC_APPROVAL},
            after_approval=[SyncApprovedMiddleware()],
            extra_middleware=[ToolFirstMiddleware()],
        )
