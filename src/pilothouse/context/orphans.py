"""Orphan repair: every tool call gets a result, every result has its call.

An interrupted run (killed process, cancelled client, crashed tool) can leave an AI message whose
tool calls have no results; every provider then rejects the whole conversation. The repair scans
the whole history (not just the current stream), places a tagged synthetic error result right
after the call, drops results whose call is gone, and is idempotent: a repaired history repairs
to itself, so running it before every model call and on every load is safe.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage, ToolMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from pilothouse.context.events import ContextAction, report

SYNTHETIC_TAG = "synthetic_result"


def synthetic_result(call: dict[str, Any]) -> ToolMessage:
    """The stand-in result for a call that never returned (deterministic id: idempotent)."""
    name = call.get("name") or "tool"
    return ToolMessage(
        content=(
            f"Tool call '{name}' was interrupted before it returned a result (the run was "
            "stopped, the tool failed or timed out). Do not assume it ran; call it again if "
            "the answer still needs it."
        ),
        tool_call_id=call["id"],
        name=name,
        status="error",
        id=f"repair-{call['id']}",
        additional_kwargs={"pilothouse": SYNTHETIC_TAG},
    )


def repair_tool_pairs(messages: Sequence[BaseMessage]) -> tuple[list[BaseMessage], int, int]:
    """Return (repaired history, synthetic results added, stray results dropped)."""
    results: dict[str, ToolMessage] = {}
    for message in messages:
        if isinstance(message, ToolMessage) and message.tool_call_id not in results:
            results[message.tool_call_id] = message
    repaired: list[BaseMessage] = []
    placed: set[str] = set()
    added = 0
    for message in messages:
        if isinstance(message, ToolMessage):
            continue  # placed right after its call below
        repaired.append(message)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                call_id = call.get("id")
                if not call_id or call_id in placed:
                    continue
                placed.add(call_id)
                existing = results.get(call_id)
                if existing is None:
                    repaired.append(synthetic_result(dict(call)))
                    added += 1
                else:
                    repaired.append(existing)
    tool_messages = sum(1 for m in messages if isinstance(m, ToolMessage))
    dropped = tool_messages - (len(placed) - added)
    return repaired, added, dropped


def _same_order(a: Sequence[BaseMessage], b: Sequence[BaseMessage]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class OrphanRepairMiddleware(AgentMiddleware):
    """Repairs the history when a conversation is loaded and before every model call."""

    def _repair(self, state: AgentState[Any]) -> dict[str, Any] | None:
        messages = list(state["messages"])
        repaired, added, dropped = repair_tool_pairs(messages)
        if _same_order(messages, repaired):
            return None
        report(ContextAction(
            "repaired",
            f"added {added} result(s) for interrupted tool calls, dropped {dropped} stray",
            layer="orphan_repair",
            numbers={"added": added, "dropped": dropped},
        ))
        # One atomic rewrite: clear, then the repaired history in order.
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *repaired]}

    def before_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self._repair(state)

    async def abefore_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self._repair(state)

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self._repair(state)

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return self._repair(state)
