"""What the API's handlers share: the opened agent, the conversation list, and busy threads."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import Request
from langgraph.graph.state import CompiledStateGraph

from pilothouse.interfaces.api.errors import ApiError
from pilothouse.interfaces.api.registry import THREAD_ID, ConversationRegistry
from pilothouse.interfaces.api.streaming import StreamObserver
from pilothouse.runtime.session import Conversation

#: A health check that takes longer than this means the store is not usable for a person.
HEALTH_TIMEOUT_SECONDS = 5.0
#: How long a new request waits for a run whose client left to finish winding down.
WIND_DOWN_SECONDS = 10.0


class RunLease:
    """A thread's claim on running; released when its stream ends."""

    def __init__(self, thread_id: str, runs: dict[str, RunLease]) -> None:
        self.thread_id = thread_id
        self.leaving = False
        self.released = asyncio.Event()
        self._runs = runs

    def client_left(self) -> None:
        """The client disconnected: the run is being cancelled and will release soon."""
        self.leaving = True

    def release(self) -> None:
        if self._runs.get(self.thread_id) is self:
            del self._runs[self.thread_id]
        self.released.set()


class AgentHandle(Protocol):
    """What `open_agent` must yield: an agent graph with a checkpointer.

    `name`, `model` (a `ModelSetup`) and `tools` are shown by `GET /agents` when present.
    """

    graph: CompiledStateGraph[Any, Any, Any, Any]


def describe_agent(agent: Any) -> dict[str, Any]:
    """Name, model, context window and tool names of an opened agent."""
    model = getattr(agent, "model", None)
    window = getattr(getattr(model, "window", None), "tokens", None)
    return {
        "name": getattr(agent, "name", None) or getattr(agent.graph, "name", "agent"),
        "model": getattr(model, "name", None),
        "window": window,
        "tools": [getattr(t, "name", str(t)) for t in getattr(agent, "tools", []) or []],
    }


@dataclass
class ApiRuntime:
    """The state every request handler needs; one per app, built in its lifespan."""

    agent: Any
    registry: ConversationRegistry
    observer: StreamObserver | None = None
    runs: dict[str, RunLease] = field(default_factory=dict)

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        graph: CompiledStateGraph[Any, Any, Any, Any] = self.agent.graph
        return graph

    def conversation(self, thread_id: str) -> Conversation:
        return Conversation(self.graph, thread_id)

    async def claim(self, thread_id: str) -> RunLease:
        """Mark a thread as running; a second run at once would interleave its history.

        A run whose client just left is still being cancelled: wait for it rather than
        refuse, so a client that reconnects and asks again is not told to wait.
        """
        current = self.runs.get(thread_id)
        if current is not None and current.leaving:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(WIND_DOWN_SECONDS):
                    await current.released.wait()
        if thread_id in self.runs:
            raise ApiError(409, f"Conversation {thread_id} is still answering.",
                           "Wait for the current answer to finish (or close its stream).")
        lease = self.runs[thread_id] = RunLease(thread_id, self.runs)
        return lease

    async def known(self, thread_id: str) -> bool:
        """True when the thread is listed or has stored messages."""
        if await self.registry.get(thread_id) is not None:
            return True
        return bool(await self.conversation(thread_id).history())

    async def health(self) -> dict[str, Any]:
        """`{status, detail}`: can the agent's checkpointer and the conversation list be read?"""
        checkpointer = getattr(self.graph, "checkpointer", None)
        if checkpointer is None or checkpointer is True:
            return {"status": "degraded",
                    "detail": "The agent has no checkpointer; conversations are not kept."}
        try:
            async with asyncio.timeout(HEALTH_TIMEOUT_SECONDS):
                await checkpointer.aget_tuple({"configurable": {"thread_id": "__health__"}})
                await self.registry.ping()
        except Exception as error:
            return {"status": "unavailable",
                    "detail": f"The conversation store failed: {type(error).__name__}: {error}"}
        return {"status": "ok", "detail": "The agent and its conversation store answer."}


def get_runtime(request: Request) -> ApiRuntime:
    """A FastAPI dependency: the app's runtime (present once the lifespan has started)."""
    runtime: ApiRuntime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        raise ApiError(503, "The agent is still starting.", "Retry in a few seconds.")
    return runtime


def valid_thread_id(thread_id: str) -> str:
    """The path's thread id, or a 400 that says what an id looks like."""
    if not THREAD_ID.match(thread_id):
        raise ApiError(400, f"{thread_id[:80]!r} is not a valid conversation id.",
                       "Use the id from POST /conversations: letters, digits, '-', '_', '.', "
                       "':', at most 64 characters.")
    return thread_id
