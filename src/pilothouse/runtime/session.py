"""A conversation with an agent graph, streamed as typed events every interface can render."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

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

from pilothouse.context.summarizer import INTERNAL_TAG
from pilothouse.errors import PilothouseError
from pilothouse.observability.logging import bind_request_context
from pilothouse.observability.metrics import track_conversation
from pilothouse.observability.tracing import turn_span
from pilothouse.runtime.errors import describe_failure

STREAM_MODES: list[StreamMode] = ["messages", "updates", "custom"]


@dataclass(frozen=True)
class Event:
    """One thing that happened during a turn; `kind` says which."""

    kind: str  # token | tool_call | tool_result | context | plan | answer | interrupt | error
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


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
    """One thread of an agent graph; `ask` streams a turn, `resume` answers an interrupt."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any], thread_id: str,
                 agent: str = "pilothouse") -> None:
        self.graph = graph
        self.thread_id = thread_id
        self.agent = agent
        self.config: RunnableConfig = {"configurable": {"thread_id": thread_id},
                                       "recursion_limit": 100}

    async def ask(self, question: str) -> AsyncIterator[Event]:
        """Stream the events of answering `question`."""
        async for event in self._stream({"messages": [HumanMessage(content=question)]}):
            yield event

    async def pending(self) -> list[Event]:
        """The approvals this conversation is waiting for (empty when none)."""
        snapshot = await self.graph.aget_state(self.config)
        return [Event("interrupt", "", {"value": item.value, "id": item.id})
                for task in snapshot.tasks for item in task.interrupts]

    async def decide(
        self, decision: dict[str, Any], interrupt_id: str | None = None
    ) -> AsyncIterator[Event]:
        """Answer a pending approval and continue the run.

        `decision` is `{"type": "approve"}`, `{"type": "reject", "message": "why"}` or
        `{"type": "edit", "edited_action": {...}}`; without `interrupt_id` it answers every
        pending approval.
        """
        ids = [interrupt_id] if interrupt_id else [e.data["id"] for e in await self.pending()]
        if not ids:
            yield Event("error", "Nothing is waiting for approval in this conversation.",
                        {"suggestion": "Ask a question first; approvals appear as they arise."})
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
                        yield Event("token", _text(message))
                elif mode == "custom" and isinstance(chunk, dict):
                    if chunk.get("type") == "context":
                        yield Event("context", chunk.get("detail", ""), dict(chunk))
                    elif chunk.get("type") == "plan":
                        yield Event("plan", str(chunk.get("action", "")), dict(chunk))
                elif mode == "updates":
                    for event in self._from_update(chunk, streamed_text):
                        yield event
        except PilothouseError as error:
            yield Event("error", error.message, error.to_payload())
        except Exception as error:
            failure = describe_failure(error)
            yield Event("error", failure.message, failure.to_payload())

    @staticmethod
    def _from_update(update: dict[str, Any], streamed_text: bool) -> list[Event]:
        events: list[Event] = []
        for node, value in update.items():
            if node == "__interrupt__":
                for item in value:
                    events.append(Event("interrupt", "", {"value": item.value, "id": item.id}))
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
                    for call in message.tool_calls:
                        events.append(Event(
                            "tool_call", call["name"],
                            {"id": call["id"], "name": call["name"], "args": call["args"]},
                        ))
                elif isinstance(message, AIMessage):
                    usage = dict(message.usage_metadata or {})
                    events.append(Event("answer", _text(message),
                                        {"streamed": streamed_text, "usage": usage}))
                elif isinstance(message, ToolMessage):
                    content = _text(message)
                    events.append(Event(
                        "tool_result", _preview(content),
                        {"name": message.name, "id": message.tool_call_id,
                         "status": message.status, "chars": len(content)},
                    ))
        return events


def event_as_json(event: Event) -> str:
    """One event as a JSON line (for `pilothouse ask --json` and logs), shaped as the API's.

    `data` stays nested: spread at the top, an error's `kind` (its class) replaced the event's.
    """
    return json.dumps({"kind": event.kind, "text": event.text, "data": event.data}, default=str)
