"""A sub-agent as the supervisor sees it: ask a question, answer its approvals; in process or not.

One interface, two implementations: `InProcessSubAgent` (here) runs the agent's own graph in
this process; `RemoteSubAgent` (`pilothouse.a2a.remote`) talks A2A to a URL. The supervisor
cannot tell them apart, so the same supervisor runs on one machine or across many. Neither
raises for an agent that fails, hangs or is down: the reply says so (`state="failed"`), and the
supervisor answers the rest of the question. A call cancelled by its caller stops the agent's
run (its open tool calls resolved) before the cancellation reaches the caller. Both
implementations pass one conformance suite (tests/a2a/test_subagent_conformance.py), reply for
reply; the reply texts are built here (`unavailable`, `run_failed`, `not_waiting`,
`describe_interrupt`) for both.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol, assert_never, runtime_checkable

from langchain_core.messages import RemoveMessage
from langgraph.config import get_stream_writer
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.graph.state import CompiledStateGraph

from pilothouse.context.orphans import repair_tool_pairs
from pilothouse.runtime.answer_budget import with_answer_budget
from pilothouse.runtime.events import (
    Answer,
    ApprovalRequest,
    ContextNote,
    Event,
    ModelWaiting,
    PlanUpdate,
    Token,
    ToolCalled,
    ToolProgress,
    ToolResult,
    TurnFailed,
)
from pilothouse.runtime.session import ApprovalDecision, Conversation
from pilothouse.runtime.turn_locks import TurnLocks

ReplyState = Literal["completed", "input_required", "failed"]
#: Threads a supervisor holds with its in-process sub-agents; no caller can address them.
SUBAGENT_PREFIX = "sub:"


@dataclass(frozen=True)
class SubAgentReply:
    """What a sub-agent said: an answer, a request for approval, or why there is none.

    `requests` are the raw interrupt values behind an `input_required` reply (the real pending
    calls: name, args, description), when the implementation has them; `text` says the same.
    """

    agent: str
    state: ReplyState
    text: str
    requests: tuple[Any, ...] = ()


class SubAgent(Protocol):
    """The supervisor's handle on one specialist agent."""

    name: str
    description: str

    async def ask(self, question: str, thread_id: str, *,
                  budget_tokens: int | None = None) -> SubAgentReply:
        """Ask in the sub-agent's conversation `thread_id`; never raises for agent failures."""
        ...

    async def waiting(self, thread_id: str) -> str | None:
        """The approval the sub-agent is waiting for in `thread_id`, as text, or None."""
        ...

    async def decide(self, thread_id: str, decision: ApprovalDecision) -> SubAgentReply:
        """Answer the pending approval ({"type": "approve"} or reject with a message)."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class ExplainsApprovals(Protocol):
    """A sub-agent that can show its pending approvals as the calls they are."""

    async def pending_requests(self, thread_id: str) -> tuple[Any, ...]:
        """The interrupt values the sub-agent waits on in `thread_id` (empty when none)."""
        ...


#: Where a sub-agent's tool activity goes while an `ask_<agent>` call runs (see below).
ActivityRelay = Callable[[Token | ToolCalled | ToolResult | ToolProgress], None]
_RELAY: ContextVar[ActivityRelay | None] = ContextVar("pilothouse_subagent_relay", default=None)


@contextmanager
def relaying_activity(agent: str, parent_call_id: str | None) -> Iterator[None]:
    """Inside, the tool calls and results of sub-agent `agent` reach the calling graph's stream.

    Entered by the supervisor's tool call `parent_call_id`: each relayed event names that call
    and the agent, so interfaces show a sub-agent's work nested under the call it serves, and
    its answer as it is written (tokens). The writer is taken here, in the supervisor's tool,
    before the sub-agent's graph runs.
    """
    try:
        write = get_stream_writer()
    except RuntimeError:  # not inside a graph run: nobody to tell
        yield
        return

    def relay(event: Token | ToolCalled | ToolResult | ToolProgress) -> None:
        write(replace(event, parent_id=parent_call_id, agent=agent))

    token = _RELAY.set(relay if parent_call_id else None)
    try:
        yield
    finally:
        _RELAY.reset(token)


def unavailable(agent: str, reason: str) -> SubAgentReply:
    """The reply for an agent that gave no answer: which agent, why, what the user can do."""
    return SubAgentReply(agent, "failed", (
        f"The {agent} agent is unavailable: {reason}. Its part of the answer is missing; "
        f"answer the rest and tell the user to ask again about {agent} later."))


def run_failed(agent: str, message: str, suggestion: str | None = None) -> SubAgentReply:
    """The reply for an agent whose run failed: its error, and what to do about it."""
    return unavailable(agent, message + (f" ({suggestion})" if suggestion else ""))


def not_waiting(agent: str) -> SubAgentReply:
    """The reply to a decision when the agent has no approval pending."""
    return SubAgentReply(agent, "failed", f"The {agent} agent is not waiting for an approval.")


def subagent_thread(agent: str, parent_thread: str) -> str:
    """The thread of sub-agent `agent` working for the supervisor thread `parent_thread`."""
    return f"{SUBAGENT_PREFIX}{agent}:{parent_thread}"


def describe_interrupt(value: Any) -> str:
    """One line per action awaiting approval, from a human-in-the-loop interrupt value.

    Reads both shapes of LangChain's gate: one action per interrupt (`interrupt_mode=
    "per_call"`: name, args, description) and a batch (`action_requests`).
    """
    requests: list[dict[str, Any]] | None = None
    if isinstance(value, dict) and "name" in value and "args" in value:
        requests = [value]
    elif isinstance(value, dict):
        requests = value.get("action_requests")
    if not requests:
        return f"Approval needed: {json.dumps(value, default=str)[:400]}"
    lines = []
    for request in requests:
        args = json.dumps(request.get("args", {}), default=str)
        if len(args) > 300:
            args = args[:297] + "..."
        description = request.get("description") or "Run this action?"
        lines.append(f"{description} {request.get('name', 'action')}({args})")
    return "\n".join(lines)


async def resolve_open_tool_calls(conversation: Conversation) -> int:
    """Give every tool call without a result its synthetic result; return how many."""
    history = await conversation.history()
    repaired, added, _ = repair_tool_pairs(history)
    if added:
        await conversation.graph.aupdate_state(
            conversation.config, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]})
    return added


@asynccontextmanager
async def resolved_when_stopped(conversation: Conversation) -> AsyncIterator[None]:
    """A turn stopped from outside (a timeout, the caller's cancellation) leaves no tool call
    without its result; held inside the turn lock, so the next turn finds the repair done."""
    try:
        yield
    except asyncio.CancelledError:
        # Shielded: a second cancellation must not leave the calls open.
        await asyncio.shield(resolve_open_tool_calls(conversation))
        raise


class InProcessSubAgent:
    """A sub-agent whose graph runs in this process (threads `sub:<name>:<supervisor thread>`,
    which no caller can address from outside).

    Two calls for one supervisor thread at once (parallel tool calls) take turns: their
    messages would otherwise interleave in the sub-agent's conversation.
    """

    def __init__(self, name: str, description: str,
                 graph: CompiledStateGraph[Any, Any, Any, Any], *,
                 timeout_seconds: float = 180.0) -> None:
        self.name = name
        self.description = description
        self.graph = graph
        self.timeout_seconds = timeout_seconds
        self._turns = TurnLocks()

    def _conversation(self, thread_id: str) -> Conversation:
        return Conversation(self.graph, subagent_thread(self.name, thread_id))

    async def ask(self, question: str, thread_id: str, *,
                  budget_tokens: int | None = None) -> SubAgentReply:
        conversation = self._conversation(thread_id)
        return await self._collect(conversation,
                                   conversation.ask(with_answer_budget(question, budget_tokens)))

    async def waiting(self, thread_id: str) -> str | None:
        pending = await self._conversation(thread_id).pending()
        return "\n".join(describe_interrupt(e.value) for e in pending) or None

    async def pending_requests(self, thread_id: str) -> tuple[Any, ...]:
        return tuple(e.value for e in await self._conversation(thread_id).pending())

    async def decide(self, thread_id: str, decision: ApprovalDecision) -> SubAgentReply:
        conversation = self._conversation(thread_id)
        if not await conversation.pending():
            return not_waiting(self.name)
        return await self._collect(conversation, conversation.decide(decision))

    async def aclose(self) -> None:
        return None

    async def _collect(self, conversation: Conversation,
                       events: AsyncIterator[Event]) -> SubAgentReply:
        answer, approvals, error = "", [], None
        relay = _RELAY.get()
        try:
            async with asyncio.timeout(self.timeout_seconds), \
                    self._turns.queued(conversation.thread_id), \
                    resolved_when_stopped(conversation):
                async for event in events:
                    match event:
                        case Answer(text=text):
                            answer = text
                        case ApprovalRequest(value=value):
                            approvals.append(value)
                        case TurnFailed():
                            error = event
                        case Token() | ToolCalled() | ToolResult() | ToolProgress():
                            # The supervisor's model reads the answer, not the work behind it;
                            # the person watching sees that work (relayed, when asked for).
                            if relay is not None:
                                relay(event)
                        case ContextNote() | PlanUpdate() | ModelWaiting():
                            pass
                        case _:
                            assert_never(event)
        except TimeoutError:
            return unavailable(self.name, f"it did not answer within {self.timeout_seconds:g} s")
        if error is not None:
            return run_failed(self.name, error.message, error.suggestion)
        if approvals:
            return SubAgentReply(self.name, "input_required",
                                 "\n".join(describe_interrupt(v) for v in approvals),
                                 tuple(approvals))
        return SubAgentReply(self.name, "completed", answer)
