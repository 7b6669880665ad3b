"""Agent middleware that traces, counts and logs every model call and tool call.

Placed innermost (in `build_agent(extra_middleware=...)`), it sees the request the provider
actually receives, after compression, and each retry of overflow recovery as its own call; tool
exceptions reach it before the resilience layer turns them into error results. It records sizes
and token counts, never message contents: a span or a log line may leave the machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ModelCallResult
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, use_span

from pilothouse.observability import metrics
from pilothouse.observability.tracing import get_tracer, mark_failed
from pilothouse.redaction import scrub

logger = logging.getLogger("pilothouse.calls")

_ARGS_LOG_LIMIT = 300
#: The `kind` of the Argo CD search's refusal (`tools.argocd.search.SearchTooBroad`), named
#: here because observability sits below the tools and may not import them.
SEARCH_TOO_BROAD = "SearchTooBroad"


def _chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    return len(json.dumps(content, default=str))


def model_label(model: Any) -> str:
    """A readable name for a chat model object (its model id when it exposes one)."""
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    llm_type = getattr(model, "_llm_type", None)
    return llm_type if isinstance(llm_type, str) else type(model).__name__


def _ai_message(response: ModelCallResult[Any]) -> AIMessage | None:
    if isinstance(response, AIMessage):
        return response
    if isinstance(response, ExtendedModelResponse):
        response = response.model_response
    if isinstance(response, ModelResponse):
        return next((m for m in reversed(response.result) if isinstance(m, AIMessage)), None)
    return None


def _outcome(error: BaseException) -> str:
    if isinstance(error, GraphBubbleUp):
        return "interrupted"  # an approval pause, not a failure
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    return "error"


def is_search_rejection(message: ToolMessage) -> bool:
    """Whether a tool result is the search cap's refusal, read from its structured artifact."""
    artifact = message.artifact
    return (message.status == "error" and isinstance(artifact, Mapping)
            and artifact.get("kind") == SEARCH_TOO_BROAD)


class _Call(ABC):
    """One call being observed: its span and timer; subclasses add what they record."""

    span: Span
    started: float

    def _begin(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> None:
        self.span = get_tracer().start_span(name, kind=kind, attributes=attributes)
        self.started = time.perf_counter()

    @contextmanager
    def running(self) -> Iterator[None]:
        """Make the span current (an A2A hop inside a tool nests under it); record a failure."""
        try:
            with use_span(self.span, end_on_exit=False, record_exception=False,
                          set_status_on_exception=False):
                yield
        except BaseException as error:
            status = _outcome(error)
            self.span.set_attribute("pilothouse.status", status)
            if status == "error":
                mark_failed(self.span, error)
            self._finish(status, error=type(error).__name__)
            raise

    def _elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _ids(self) -> dict[str, str]:
        """The call's own trace and span ids: its log line is written after the span closed."""
        context = self.span.get_span_context()
        if not context.is_valid:
            return {}
        return {"trace_id": format(context.trace_id, "032x"),
                "span_id": format(context.span_id, "016x")}

    @abstractmethod
    def _finish(self, status: str, **fields: Any) -> None:
        """End the span, update the metrics and write the call's log line."""


class _ModelCall(_Call):
    """The bookkeeping of one model call."""

    def __init__(self, agent: str, model: str, request: ModelRequest[Any]) -> None:
        self.agent, self.model = agent, model
        self.messages = len(request.messages)
        self.request_chars = sum(_chars(m.content) for m in request.messages)
        self._begin(f"chat {model}", SpanKind.CLIENT, {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": model,
            "gen_ai.agent.name": agent, "pilothouse.request.messages": self.messages,
            "pilothouse.request.chars": self.request_chars,
            "pilothouse.request.tools": len(request.tools),
        })

    def succeeded(self, response: ModelCallResult[Any]) -> None:
        message = _ai_message(response)
        usage = message.usage_metadata if message is not None else None
        tokens_in = usage["input_tokens"] if usage else 0
        tokens_out = usage["output_tokens"] if usage else 0
        served_by = (message.response_metadata.get("model_name") if message else None) or ""
        calls = len(message.tool_calls) if message is not None else 0
        self.span.set_attributes({
            "gen_ai.usage.input_tokens": tokens_in, "gen_ai.usage.output_tokens": tokens_out,
            "pilothouse.response.tool_calls": calls, "pilothouse.status": "ok",
        })
        if served_by:
            self.span.set_attribute("gen_ai.response.model", served_by)
        self.span.set_status(Status(StatusCode.OK))
        self._finish("ok", input_tokens=tokens_in, output_tokens=tokens_out, tool_calls=calls)

    def _finish(self, status: str, **fields: Any) -> None:
        seconds = self._elapsed()
        self.span.end()
        metrics.record_model_call(self.model, status, seconds,
                                  fields.get("input_tokens", 0), fields.get("output_tokens", 0))
        logger.info("model call", extra={
            "call": "model", "agent": self.agent, "model": self.model, "status": status,
            "seconds": round(seconds, 4), "messages": self.messages,
            "request_chars": self.request_chars, **self._ids(), **fields,
        })


class _ToolCall(_Call):
    """The bookkeeping of one tool call."""

    def __init__(self, agent: str, request: ToolCallRequest) -> None:
        call = request.tool_call
        self.agent, self.tool = agent, call["name"]
        self.args = call.get("args") or {}
        self.args_chars = _chars(self.args)
        self._begin(f"execute_tool {self.tool}", SpanKind.INTERNAL, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": self.tool,
            "gen_ai.tool.call.id": call.get("id") or "", "gen_ai.agent.name": agent,
            "pilothouse.tool.args_chars": self.args_chars,
        })

    def succeeded(self, result: ToolMessage | Command[Any]) -> None:
        fields: dict[str, Any] = {}
        status = "ok"
        if isinstance(result, ToolMessage):
            fields["result_chars"] = _chars(result.content)
            if result.status == "error":
                status = "error"
            if is_search_rejection(result):
                status = "rejected"
                metrics.record_search_rejection(self.tool)
        if status == "error":
            self.span.set_status(Status(StatusCode.ERROR, "the tool returned an error result"))
        else:
            self.span.set_status(Status(StatusCode.OK))
        self.span.set_attributes({"pilothouse.status": status,
                                  "pilothouse.tool.result_chars": fields.get("result_chars", 0)})
        self._finish(status, **fields)

    def _finish(self, status: str, **fields: Any) -> None:
        seconds = self._elapsed()
        self.span.end()
        metrics.record_tool_call(self.tool, seconds, error=status == "error")
        args = scrub(self.args) if isinstance(self.args, Mapping) else {}
        shown = json.dumps(args, default=str)
        logger.info("tool call", extra={
            "call": "tool", "agent": self.agent, "tool": self.tool, "status": status,
            "seconds": round(seconds, 4), "args_chars": self.args_chars,
            "tool_args": shown if len(shown) <= _ARGS_LOG_LIMIT
            else shown[:_ARGS_LOG_LIMIT] + "...",
            **self._ids(), **fields,
        })


class ObservabilityMiddleware(AgentMiddleware):
    """Wraps each model and tool call of `agent_name` in a span, metrics and one log line.

    `model_name` labels model metrics (e.g. `settings.model`); without it the label comes from
    the chat model object.
    """

    def __init__(self, agent_name: str, *, model_name: str | None = None) -> None:
        super().__init__()
        self.agent_name = agent_name
        self.model_name = model_name

    def _model_call(self, request: ModelRequest[Any]) -> _ModelCall:
        return _ModelCall(self.agent_name, self.model_name or model_label(request.model), request)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelCallResult[Any]],
    ) -> ModelCallResult[Any]:
        call = self._model_call(request)
        with call.running():
            response = handler(request)
        call.succeeded(response)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelCallResult[Any]]],
    ) -> ModelCallResult[Any]:
        call = self._model_call(request)
        with call.running():
            response = await handler(request)
        call.succeeded(response)
        return response

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = _ToolCall(self.agent_name, request)
        with call.running():
            result = handler(request)
        call.succeeded(result)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = _ToolCall(self.agent_name, request)
        with call.running():
            result = await handler(request)
        call.succeeded(result)
        return result
