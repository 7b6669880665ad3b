"""What the API's handlers share: the opened agent, the conversation list, and busy threads."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from fastapi import Request
from langgraph.graph.state import CompiledStateGraph

from pilothouse.a2a.namespaces import is_reserved
from pilothouse.interfaces.api.errors import ApiError
from pilothouse.interfaces.api.identity import Identity
from pilothouse.interfaces.api.registry import THREAD_ID, ConversationRecord, ConversationStore
from pilothouse.interfaces.api.streaming import StreamObserver
from pilothouse.redaction import redact
from pilothouse.runtime.database import outage
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.turn_locks import ConversationBusy, TurnLease, TurnLocks

#: A health check that takes longer than this means the store is not usable for a person.
HEALTH_TIMEOUT_SECONDS = 5.0


def describe_agent(agent: AgentHandle) -> dict[str, Any]:
    """Name, model, context window and tool names of an opened agent."""
    return {"name": agent.name, "model": agent.model.name, "window": agent.model.window.tokens,
            "tools": [t.name for t in agent.tools]}


@dataclass
class ApiRuntime:
    """The state every request handler needs; one per app, built in its lifespan."""

    agent: AgentHandle
    registry: ConversationStore
    observer: StreamObserver | None = None
    locks: TurnLocks = field(default_factory=TurnLocks)

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        return self.agent.graph

    def conversation(self, thread_id: str) -> Conversation:
        # Sub-agents' answers stream too (token frames with `data.parent_id`): the web UI
        # shows them as drafts under their ask_<agent> call.
        return Conversation(self.graph, thread_id, subagent_tokens=True)

    async def claim(self, thread_id: str) -> TurnLease:
        """Claim the thread for one turn (or a delete); 409 while another turn runs on it."""
        try:
            return await self.locks.claim(thread_id)
        except ConversationBusy:
            raise ApiError(409, f"Conversation {thread_id} is still answering.",
                           "Wait for the current answer to finish (or close its stream), "
                           "then retry.") from None

    async def find(self, thread_id: str, caller: Identity, *,
                   read: bool = False) -> ConversationRecord | None:
        """The conversation `thread_id` as `caller` may use it, None when it does not exist.

        Another identity's conversation is a 404, as if it did not exist, so ids do not leak
        (an admin may read, with `read=True`, but not act). Threads of A2A callers and of
        sub-agents are never reachable here. A thread with messages but not listed was started
        elsewhere (`pilothouse ask --thread`, an older version): the anonymous local caller
        takes it over; an identity with a key cannot claim what it did not start.
        """
        valid_thread_id(thread_id)
        if is_reserved(thread_id):
            raise not_found(thread_id)
        record = await self.registry.get(thread_id)
        if record is not None:
            if record.owner == caller.name or (read and caller.admin):
                return record
            raise not_found(thread_id)
        if not await self.conversation(thread_id).history():
            return None
        if caller.anonymous:
            return await self.registry.touch(thread_id, owner=caller.name)
        raise not_found(thread_id)

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
        except TimeoutError:
            return {"status": "unavailable", "detail": "The conversation store did not answer "
                                                       f"within {HEALTH_TIMEOUT_SECONDS:g} s."}
        except Exception as error:
            down = outage(error)
            detail = down.message if down is not None else f"{type(error).__name__}: {error}"
            return {"status": "unavailable",
                    "detail": redact(f"The conversation store failed: {detail}")}
        return {"status": "ok", "detail": "The agent and its conversation store answer."}


def get_runtime(request: Request) -> ApiRuntime:
    """A FastAPI dependency: the app's runtime (present once the lifespan has started)."""
    runtime: ApiRuntime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        raise ApiError(503, "The agent is still starting.", "Retry in a few seconds.")
    return runtime


def not_found(thread_id: str) -> ApiError:
    return ApiError(404, f"There is no conversation {thread_id[:80]}.",
                    "List your conversations with GET /conversations, or create one.")


def valid_thread_id(thread_id: str) -> str:
    """The path's thread id, or a 400 that says what an id looks like."""
    if not THREAD_ID.match(thread_id):
        raise ApiError(400, f"{thread_id[:80]!r} is not a valid conversation id.",
                       "Use the id from POST /conversations: letters, digits, '-', '_', '.', "
                       "':', at most 64 characters.")
    return thread_id
