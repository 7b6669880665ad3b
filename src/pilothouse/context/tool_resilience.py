"""Tool failures, timeouts and repeated calls come back to the model as error results.

A tool that raises, hangs or is called again with the same arguments must not end the run or
leave its call without a result: the model gets an error result that says what happened and what
to do, and decides how to go on. Interrupts (approvals) pass through untouched.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from pilothouse.context.events import ContextAction, report
from pilothouse.errors import PilothouseError


def _error_result(request: ToolCallRequest, text: str) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error")


def _signature(name: str, args: Mapping[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True, default=str)


def count_identical_calls(
    state: Any, name: str, args: Mapping[str, Any], call_id: str | None
) -> int:
    """Earlier calls of `name` with the same arguments since the user's last message."""
    messages = state.get("messages", []) if isinstance(state, Mapping) else []
    wanted = _signature(name, args)
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += sum(
                1 for c in message.tool_calls
                if c.get("id") != call_id and _signature(c["name"], c["args"]) == wanted
            )
    return count


class ToolResilienceMiddleware(AgentMiddleware):
    """Per-tool timeouts, failures as results, and a guard against the same call repeated."""

    def __init__(
        self,
        *,
        timeout: float,
        repeat_limit: int,
        per_tool_timeouts: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__()
        self.timeout = timeout
        self.repeat_limit = repeat_limit
        self.per_tool_timeouts = dict(per_tool_timeouts or {})

    def _repeated(self, request: ToolCallRequest) -> ToolMessage | None:
        call = request.tool_call
        seen = count_identical_calls(request.state, call["name"], call["args"], call["id"])
        if seen < self.repeat_limit:
            return None
        report(ContextAction("repeat_blocked", f"{call['name']} called {seen + 1} times with "
                             "the same arguments", layer="tool_resilience"))
        return _error_result(request, (
            f"'{call['name']}' was already called {seen} times with these exact arguments in "
            "this request. Use the earlier result, change the arguments, or answer with what "
            "you have."
        ))

    def _failure(self, request: ToolCallRequest, error: BaseException) -> ToolMessage:
        name = request.tool_call["name"]
        if isinstance(error, PilothouseError):
            detail = error.message + (f" Suggestion: {error.hint}" if error.hint else "")
        else:
            detail = f"{type(error).__name__}: {error}"[:500]
        report(ContextAction("tool_failed", f"{name}: {detail}"[:200], layer="tool_resilience"))
        return _error_result(request, (
            f"Tool '{name}' failed: {detail} Check the arguments or try another tool; tell the "
            "user if the failure blocks the answer."
        ))

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command],
    ) -> ToolMessage | Command:
        blocked = self._repeated(request)
        if blocked is not None:
            return blocked
        try:
            return handler(request)
        except GraphBubbleUp:
            raise
        except Exception as error:
            return self._failure(request, error)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        blocked = self._repeated(request)
        if blocked is not None:
            return blocked
        name = request.tool_call["name"]
        limit = self.per_tool_timeouts.get(name, self.timeout)
        try:
            return await asyncio.wait_for(handler(request), timeout=limit)
        except GraphBubbleUp:
            raise
        except TimeoutError:
            report(ContextAction("tool_timeout", f"{name} stopped after {limit:g} s",
                                 layer="tool_resilience", numbers={"seconds": int(limit)}))
            return _error_result(request, (
                f"Tool '{name}' did not answer within {limit:g} s and was stopped. Try a "
                "narrower request (a filter, a smaller page) or tell the user the system is slow."
            ))
        except Exception as error:
            return self._failure(request, error)
