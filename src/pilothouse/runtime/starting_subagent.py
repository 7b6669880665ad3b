"""A specialist whose tool servers are still starting when the supervisor is ready.

The supervisor's first model call needs only each specialist's name and description (its
`ask_<name>` tool); the specialist's graph is needed when it is asked. Its tool servers are
processes that take most of a second each to start, so waiting for all of them before the
supervisor may call its model put them all on the path to the first token (measured: 3.8 s of a
warm command against 2.8 s for one agent). `StartingSubAgent` is asked at once, and each call
waits until the specialist is ready. One that failed to start answers every call as unavailable,
with the reason, so the supervisor answers the rest and says why that part is missing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from pilothouse.runtime.session import ApprovalDecision
from pilothouse.runtime.subagent import InProcessSubAgent, SubAgentReply, unavailable

#: What a starting specialist becomes: its graph, or the reason it could not start.
Started = Callable[[], Awaitable["CompiledStateGraph[Any, Any, Any, Any] | str"]]


class StartingSubAgent:
    """An in-process sub-agent built from `started` on its first use; see the module."""

    def __init__(self, name: str, description: str, started: Started, *,
                 timeout_seconds: float = 180.0) -> None:
        self.name = name
        self.description = description
        self.timeout_seconds = timeout_seconds
        self._started = started
        self._agent: InProcessSubAgent | None = None

    async def _ready(self) -> InProcessSubAgent | str:
        if self._agent is None:
            graph = await self._started()
            if isinstance(graph, str):
                return graph
            self._agent = InProcessSubAgent(self.name, self.description, graph,
                                            timeout_seconds=self.timeout_seconds)
        return self._agent

    async def ask(self, question: str, thread_id: str, *,
                  budget_tokens: int | None = None) -> SubAgentReply:
        agent = await self._ready()
        if isinstance(agent, str):
            return unavailable(self.name, f"it could not start ({agent})")
        return await agent.ask(question, thread_id, budget_tokens=budget_tokens)

    async def waiting(self, thread_id: str) -> str | None:
        agent = await self._ready()
        return None if isinstance(agent, str) else await agent.waiting(thread_id)

    async def pending_requests(self, thread_id: str) -> tuple[Any, ...]:
        agent = await self._ready()
        return () if isinstance(agent, str) else await agent.pending_requests(thread_id)

    async def decide(self, thread_id: str, decision: ApprovalDecision) -> SubAgentReply:
        agent = await self._ready()
        if isinstance(agent, str):
            return unavailable(self.name, f"it could not start ({agent})")
        return await agent.decide(thread_id, decision)

    async def aclose(self) -> None:
        return None
