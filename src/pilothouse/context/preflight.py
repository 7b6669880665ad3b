"""Pre-flight budget: no request to the model exceeds its window, ever.

Two checks per model call. Before the model node runs, the stored history plus the system
prompt, the tool schemas (their real JSON) and the reserved output are estimated; at the trigger
(80%) the history is compressed to the target (50%) and written back in one atomic update, so the
work is done once, not on every later turn. Then, around the call itself, the exact request is
measured again (other middleware may have added tools or context); if it still would not fit,
the request alone is cut without a model call. Provider-reported prompt sizes calibrate the
counter after each call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime

from pilothouse.context.compression import CompressionResult, Compressor
from pilothouse.context.events import ContextAction, report
from pilothouse.errors import ContextBudgetError
from pilothouse.models.tokens import TokenCounter


@dataclass(frozen=True)
class Budget:
    """Token thresholds derived from a model's window."""

    window: int
    reserved_output: int
    trigger_ratio: float = 0.8
    target_ratio: float = 0.5

    @property
    def trigger(self) -> int:
        return int(self.window * self.trigger_ratio)

    @property
    def target(self) -> int:
        return int(self.window * self.target_ratio)

    @property
    def hard_limit(self) -> int:
        """The most prompt tokens a request may carry and still leave room for the answer."""
        return self.window - self.reserved_output


def request_overhead(request: ModelRequest, counter: TokenCounter) -> int:
    """Tokens of everything in a request besides the history: system prompt and tool schemas."""
    system = counter.count_message(request.system_message) if request.system_message else 0
    return system + counter.count_tools(request.tools)


def report_compression(result: CompressionResult, layer: str) -> None:
    """Tell the user what a compression did (summaries and deletions name their counts)."""
    if result.method == "none":
        return
    action = {"summary": "summarized", "deletion": "deleted", "shrink": "shrunk"}[result.method]
    report(ContextAction(
        action,
        f"{result.note}: {result.tokens_before:,} -> {result.tokens_after:,} tokens",
        layer=layer,
        numbers={"messages": result.removed, "shrunk": result.shrunk,
                 "tokens_before": result.tokens_before, "tokens_after": result.tokens_after},
    ))


class PreflightBudgetMiddleware(AgentMiddleware):
    """Compresses history at the trigger and guarantees every request fits the window."""

    def __init__(
        self, budget: Budget, counter: TokenCounter, compressor: Compressor, overhead: int
    ) -> None:
        super().__init__()
        self.budget = budget
        self.counter = counter
        self.compressor = compressor
        # Measured from the real system prompt and tool schemas at build time, then refreshed
        # from every actual request (tools can change per call).
        self.overhead = overhead

    def _message_target(self) -> int:
        room = self.budget.target - self.overhead - self.budget.reserved_output
        return max(room, self.budget.window // 10)

    def _needs_compression(self, messages: Sequence[BaseMessage]) -> bool:
        total = self.counter.count_messages(messages) + self.overhead + self.budget.reserved_output
        return total >= self.budget.trigger

    @staticmethod
    def _rewrite(result: CompressionResult) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *result.messages]}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages = list(state["messages"])
        if not self._needs_compression(messages):
            return None
        result = self.compressor.compress(messages, self._message_target())
        report_compression(result, "preflight")
        return self._rewrite(result) if result.method != "none" else None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        messages = list(state["messages"])
        if not self._needs_compression(messages):
            return None
        result = await self.compressor.acompress(messages, self._message_target())
        report_compression(result, "preflight")
        return self._rewrite(result) if result.method != "none" else None

    def fit_request(self, request: ModelRequest) -> tuple[ModelRequest, int]:
        """The request cut to fit the window if needed, and its estimated prompt tokens."""
        self.overhead = request_overhead(request, self.counter)
        room = self.budget.hard_limit - self.overhead
        if room < self.budget.window // 20:
            raise ContextBudgetError(
                f"The system prompt and tool schemas alone take {self.overhead:,} of the "
                f"model's {self.budget.window:,} tokens.",
                hint="Use a model with a larger window (MAX_CONTEXT_TOKENS) or fewer tools.",
            )
        size = self.counter.count_messages(request.messages)
        if size <= room:
            return request, size + self.overhead
        result = self.compressor.delete_only(request.messages, room)
        report_compression(result, "preflight_guard")
        return request.override(messages=result.messages), result.tokens_after + self.overhead

    def _calibrate(self, response: Any, estimated: int) -> None:
        messages = getattr(response, "result", None) or [response]
        for message in messages:
            usage = getattr(message, "usage_metadata", None) if isinstance(
                message, AIMessage) else None
            if usage and usage.get("input_tokens"):
                self.counter.observe_usage(estimated, int(usage["input_tokens"]))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        request, estimated = self.fit_request(request)
        response = handler(request)
        self._calibrate(response, estimated)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        request, estimated = self.fit_request(request)
        response = await handler(request)
        self._calibrate(response, estimated)
        return response
