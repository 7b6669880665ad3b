"""Pre-flight budget: no request to the model exceeds its window, ever.

Two checks per model call. Before the model node runs, the stored history plus the system
prompt, the tool schemas (their real JSON) and the reserved output are estimated; at the trigger
(80%) the history is compressed to the target (50%) and written back in one atomic update, so the
work is done once, not on every later turn. Then, around the call itself, the exact request is
measured again (other middleware may have added tools or context); if it still would not fit,
the request alone is cut without a model call. Provider-reported prompt sizes calibrate the
counter after each call.

One middleware instance serves every conversation of its graph at once, so nothing about a
request is kept on it: a request's figures are local to the call, and the overhead last
measured for a conversation (what the next pre-model check assumes) is kept in that
conversation's own state.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, PrivateStateAttr
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from pilothouse.context.compression import CompressionResult, Compressor
from pilothouse.context.events import ActionName, ContextAction, report
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
    actions: dict[str, ActionName] = {"summary": "summarized", "deletion": "deleted",
                                      "shrink": "shrunk"}
    action = actions[result.method]
    report(ContextAction(
        action,
        f"{result.note}: {result.tokens_before:,} -> {result.tokens_after:,} tokens",
        layer=layer,
        numbers={"messages": result.removed, "shrunk": result.shrunk,
                 "tokens_before": result.tokens_before, "tokens_after": result.tokens_after},
    ))


OVERHEAD_KEY = "preflight_overhead"


class PreflightState(AgentState[Any]):
    """The tokens of the system prompt and tool schemas in this conversation's last request."""

    preflight_overhead: NotRequired[Annotated[int, PrivateStateAttr]]


@dataclass(frozen=True)
class FittedRequest:
    """One request as it will be sent, with its own budget figures."""

    request: ModelRequest
    overhead: int
    prompt_tokens: int
    room: int


class PreflightBudgetMiddleware(AgentMiddleware[PreflightState, Any, Any]):
    """Compresses history at the trigger and guarantees every request fits the window."""

    state_schema = PreflightState

    def __init__(
        self, budget: Budget, counter: TokenCounter, compressor: Compressor, overhead: int
    ) -> None:
        super().__init__()
        self.budget = budget
        self.counter = counter
        self.compressor = compressor
        # Measured from the real system prompt and tool schemas at build time: what a
        # conversation's first check assumes, until its own requests have been measured.
        self.build_overhead = overhead

    def _overhead(self, state: AgentState[Any]) -> int:
        measured = state.get(OVERHEAD_KEY)
        return measured if isinstance(measured, int) else self.build_overhead

    def _message_target(self, overhead: int) -> int:
        room = self.budget.target - overhead - self.budget.reserved_output
        return max(room, self.budget.window // 10)

    def _needs_compression(self, messages: Sequence[BaseMessage], overhead: int) -> bool:
        total = self.counter.count_messages(messages) + overhead + self.budget.reserved_output
        return total >= self.budget.trigger

    @staticmethod
    def _rewrite(result: CompressionResult) -> dict[str, Any]:
        return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *result.messages]}

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        messages, overhead = list(state["messages"]), self._overhead(state)
        if not self._needs_compression(messages, overhead):
            return None
        result = self.compressor.compress(messages, self._message_target(overhead))
        report_compression(result, "preflight")
        return self._rewrite(result) if result.method != "none" else None

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        messages, overhead = list(state["messages"]), self._overhead(state)
        if not self._needs_compression(messages, overhead):
            return None
        result = await self.compressor.acompress(messages, self._message_target(overhead))
        report_compression(result, "preflight")
        return self._rewrite(result) if result.method != "none" else None

    def fit_request(self, request: ModelRequest) -> FittedRequest:
        """The request cut to fit the window if needed, with its own measured figures."""
        overhead = request_overhead(request, self.counter)
        room = self.budget.hard_limit - overhead
        if room < self.budget.window // 20:
            raise ContextBudgetError(
                f"The system prompt and tool schemas alone take {overhead:,} of the "
                f"model's {self.budget.window:,} tokens.",
                hint="Use a model with a larger window (MAX_CONTEXT_TOKENS) or fewer tools.",
            )
        size = self.counter.count_messages(request.messages)
        if size <= room:
            return FittedRequest(request, overhead, size + overhead, room)
        result = self.compressor.delete_only(request.messages, room)
        report_compression(result, "preflight_guard")
        return FittedRequest(request.override(messages=result.messages), overhead,
                             result.tokens_after + overhead, room)

    def _calibrate(self, response: Any, estimated: int) -> None:
        messages = getattr(response, "result", None) or [response]
        for message in messages:
            usage = getattr(message, "usage_metadata", None) if isinstance(
                message, AIMessage) else None
            if usage and usage.get("input_tokens"):
                self.counter.observe_usage(estimated, int(usage["input_tokens"]))

    def _finish(self, fitted: FittedRequest, response: ModelResponse,
                sent_from: ModelRequest) -> ModelResponse | ExtendedModelResponse[Any]:
        """The response, plus a state update when this conversation's overhead changed."""
        self._calibrate(response, fitted.prompt_tokens)
        if sent_from.state.get(OVERHEAD_KEY) == fitted.overhead:
            return response
        return ExtendedModelResponse(model_response=response,
                                     command=Command(update={OVERHEAD_KEY: fitted.overhead}))

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | ExtendedModelResponse[Any]:
        fitted = self.fit_request(request)
        return self._finish(fitted, handler(fitted.request), request)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | ExtendedModelResponse[Any]:
        fitted = self.fit_request(request)
        return self._finish(fitted, await handler(fitted.request), request)
