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
from pilothouse.interfaces.api.registry import ConversationRecord, ConversationStore
from pilothouse.interfaces.api.streaming import StreamObserver
from pilothouse.redaction import redact
from pilothouse.runtime.database import outage
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.input_limits import MAX_ID_CHARS, id_problem
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
                   read: bool = False) -> ConversationRecord:
        """The conversation `thread_id` as `caller` may use it, or the one 404 of `not_found`.

        "Not yours" and "not there" get the same status and body (and the same single lookup
        of the conversation list), so ids cannot be probed: another identity's conversation,
        an id nobody used, a thread of an A2A caller or of a sub-agent all answer alike. An
        admin may read another's (`read=True`) but not act on it. A conversation exists once
        `POST /conversations` created it (with a random id); asking on an id it did not
        create is this 404 too, never a new conversation under a name the caller chose.

        One exception: the anonymous local caller takes over a thread that has messages but
        is not listed (started by `pilothouse ask --thread`, or an older version). That is no
        oracle: the anonymous caller exists only while no key is configured, when it is the
        only identity and requests come from this machine alone; such a thread was written
        by this machine's CLI into the same store; a listed thread of a named identity (from
        a run with keys) stays a 404; reserved threads are never taken. Callers with a key
        never look past the list, so an unlisted thread is a plain 404 for them.
        """
        valid_thread_id(thread_id)
        if is_reserved(thread_id):
            raise not_found(thread_id)
        record = await self.registry.get(thread_id)
        if record is not None:
            if record.owner == caller.name or (read and caller.admin):
                return record
            raise not_found(thread_id)
        if caller.anonymous and await self.conversation(thread_id).history():
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
    """The one answer for a conversation the caller may not use, whether or not it exists."""
    return ApiError(404, f"There is no conversation {thread_id[:MAX_ID_CHARS]}.",
                    "List your conversations with GET /conversations, or start a new one "
                    "with POST /conversations and use the id it returns.")


def valid_thread_id(thread_id: str) -> str:
    """The path's thread id, or a 400 that says what an id looks like (the same for anyone)."""
    problem = id_problem(thread_id, "conversation id")
    if problem is not None:
        raise ApiError(400, problem, "Use the id from POST /conversations.")
    return thread_id
