"""A conversation with an agent graph, streamed as typed events every interface can render."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeAlias, cast

from langchain.agents.middleware.human_in_the_loop import (
    ApproveDecision,
    EditDecision,
    RejectDecision,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StreamMode

from pilothouse.context.events import ContextAction
from pilothouse.context.summarizer import INTERNAL_TAG
from pilothouse.errors import PilothouseError
from pilothouse.models.local_turn_queue import ModelQueued
from pilothouse.observability.logging import bind_request_context
from pilothouse.observability.metrics import track_conversation
from pilothouse.observability.tracing import turn_span
from pilothouse.runtime.errors import describe_failure
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

STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]
#: A person's answer to an approval: LangChain's gate reads exactly these shapes.
ApprovalDecision: TypeAlias = ApproveDecision | RejectDecision | EditDecision


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(
        part.get("text", "") if isinstance(part, dict) else str(part) for part in content
    )


def _preview(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + f" [... {len(text) - limit} more]"


class Conversation:
    """One thread of an agent graph; `ask` streams a turn, `resume` answers an interrupt.

    Sub-agents' tool calls and results always come along (nested: `parent_id`); their answers'
    tokens only with `subagent_tokens` (the TUI and web UI show them as drafts), since a
    consumer that reads every token as the answer would mix several agents' drafts into it.
    """

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str,
                 agent: str = "pilothouse", *, subagent_tokens: bool = False) -> None:
        self.graph = graph
        self.thread_id = thread_id
        self.agent = agent
        self.subagent_tokens = subagent_tokens
        self.config: RunnableConfig = {"configurable": {"thread_id": thread_id},
                                       "recursion_limit": 100}

    async def ask(self, question: str) -> AsyncIterator[Event]:
        """Stream the events of answering `question`."""
        async for event in self._stream({"messages": [HumanMessage(content=question)]}):
            yield event

    async def pending(self) -> list[ApprovalRequest]:
        """The approvals this conversation is waiting for (empty when none)."""
        snapshot = await self.graph.aget_state(self.config)
        return [ApprovalRequest(item.id, item.value)
                for task in snapshot.tasks for item in task.interrupts]

    async def decide(
        self, decision: ApprovalDecision, interrupt_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Answer a pending approval and continue the run.

        `decision` is `{"type": "approve"}`, `{"type": "reject", "message": "why"}` or
        `{"type": "edit", "edited_action": {...}}`; without `interrupt_id` it answers every
        pending approval.
        """
        ids = [interrupt_id] if interrupt_id else [e.id for e in await self.pending()]
        if not ids:
            yield TurnFailed("Nothing is waiting for approval in this conversation.",
                             {"suggestion": "Ask a question first; approvals appear as they "
                                            "arise."})
            return
        async for event in self._stream(Command(resume={i: decision for i in ids})):
            yield event

    async def history(self) -> list[BaseMessage]:
        """The stored messages of this thread."""
        snapshot = await self.graph.aget_state(self.config)
        return list(snapshot.values.get("messages", [])) if snapshot.values else []

    async def _stream(self, graph_input: Any) -> AsyncIterator[Event]:
        # One turn: its logs carry the ids, its model and tool spans share one trace.
        with bind_request_context(conversation_id=self.thread_id, agent=self.agent), \
                turn_span(self.agent, conversation_id=self.thread_id), track_conversation():
            async for event in self._events(graph_input):
                yield event

    async def _events(self, graph_input: Any) -> AsyncIterator[Event]:
        streamed_text = False
        try:
            async for part in self.graph.astream(
                graph_input, self.config, stream_mode=STREAM_MODES
            ):
                mode, chunk = cast("tuple[str, Any]", part)
                if mode == "messages":
                    message, metadata = chunk
                    if (
                        isinstance(message, AIMessageChunk)
                        and INTERNAL_TAG not in (metadata.get("tags") or [])
                        and _text(message)
                    ):
                        streamed_text = True
                        yield Token(_text(message))
                elif mode == "custom":
                    custom = _from_custom(chunk, self.subagent_tokens)
                    if custom is not None:
                        yield custom
                elif mode == "updates":
                    for event in self._from_update(chunk, streamed_text):
                        yield event
        except Exception as error:
            yield turn_failed(describe_failure(error))

    @staticmethod
    def _from_update(update: dict[str, Any], streamed_text: bool) -> list[Event]:
        events: list[Event] = []
        for node, value in update.items():
            if node == "__interrupt__":
                events.extend(ApprovalRequest(item.id, item.value) for item in value)
                continue
            # Only the model and tool nodes add messages; middleware nodes rewrite history
            # (summaries, repairs), which must not be replayed as new events. A node that
            # returned several updates (an answer plus a recovery rewrite) gives a list.
            if node not in ("model", "tools"):
                continue
            messages: list[Any] = []
            for part in value if isinstance(value, list) else [value]:
                added = list(part.get("messages", []) or []) if isinstance(part, dict) else []
                if not any(isinstance(m, RemoveMessage) for m in added):
                    messages.extend(added)
            for message in messages:
                if isinstance(message, AIMessage) and message.tool_calls:
                    events.extend(ToolCalled(call["id"], call["name"], call["args"])
                                  for call in message.tool_calls)
                elif isinstance(message, AIMessage):
                    events.append(Answer(_text(message), streamed_text,
                                         dict(message.usage_metadata or {})))
                elif isinstance(message, ToolMessage):
                    content = _text(message)
                    events.append(ToolResult(message.tool_call_id, message.name, message.status,
                                             _preview(content), len(content)))
        return events


def turn_failed(error: PilothouseError) -> TurnFailed:
    """The event of a turn that failed with `error` (its payload says what to do)."""
    return TurnFailed(error.message, error.to_payload())


def _from_custom(chunk: Any, subagent_tokens: bool = False) -> Event | None:
    """The event for what a layer wrote to the custom stream, if it is one we show."""
    if isinstance(chunk, ContextAction):
        return ContextNote(chunk)
    if isinstance(chunk, ModelQueued):  # the local model's queue (`models.local_turn_queue`)
        return ModelWaiting(chunk.ahead)
    # A sub-agent's activity, relayed by the supervisor's `ask_<agent>` tool.
    if isinstance(chunk, ToolCalled | ToolResult | ToolProgress) and chunk.parent_id is not None:
        return chunk
    # An MCP tool's progress (`tools.mcp_connect`): `{"type": "tool_progress", ...}`.
    if isinstance(chunk, dict) and chunk.get("type") == "tool_progress":
        total = chunk.get("total")
        return ToolProgress(str(chunk.get("tool", "")), float(chunk.get("done") or 0),
                            float(total) if total is not None else None,
                            str(chunk.get("message") or ""))
    if isinstance(chunk, Token) and chunk.parent_id is not None:
        return chunk if subagent_tokens else None
    # The planning tools write `{"type": "plan", "action": ..., "plan": ..., ...}`.
    if isinstance(chunk, dict) and chunk.get("type") == "plan":
        action = chunk.get("action")
        if action == "approved" or action == "step":
            return PlanUpdate(action, chunk.get("plan") or {}, chunk.get("step"),
                              chunk.get("status"), chunk.get("note", ""))
    return None

