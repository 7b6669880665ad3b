"""Overflow recovery: a provider's "input too long" error compresses harder and retries once.

Estimates can be wrong (an unknown tokenizer, a provider that counts images or tool schemas its
own way). When the provider refuses the prompt, the history is compressed to a lower target,
written back atomically together with the answer, and the call is retried once; if that fails
too, the user gets a clear answer instead of an exception, and the conversation stays usable.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from pilothouse.context.compression import CompressionResult, Compressor
from pilothouse.context.events import ContextAction, report
from pilothouse.context.preflight import Budget, report_compression, request_overhead
from pilothouse.models.tokens import TokenCounter

# What each provider says when the prompt is too long.
OVERFLOW_PATTERNS = re.compile(
    "|".join([
        r"context_length_exceeded",  # OpenAI / Azure error code
        r"maximum context length",  # OpenAI message
        r"prompt is too long",  # Anthropic
        r"input is too long",  # Bedrock ValidationException
        r"input token count.*exceeds the maximum",  # Google Gemini
        r"exceeds the available context size",  # llama.cpp server
        r"exceeds the context window",  # our local model adapter
        r"context window.*exceeded|too many (input )?tokens",  # Ollama, vLLM and others
    ]),
    re.IGNORECASE | re.DOTALL,
)


def is_context_overflow(error: BaseException) -> bool:
    """True when `error` (or its cause) is a provider's prompt-too-long refusal."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ContextOverflowError) or OVERFLOW_PATTERNS.search(str(seen)):
            return True
        seen = seen.__cause__
    return False


def _with_id(message: BaseMessage) -> BaseMessage:
    return message if message.id else message.model_copy(update={"id": f"ai-{uuid.uuid4().hex}"})


class OverflowRecoveryMiddleware(AgentMiddleware):
    """Catches prompt-too-long errors, compresses to `hard_ratio` of the window, retries once."""

    def __init__(
        self, budget: Budget, counter: TokenCounter, compressor: Compressor, hard_ratio: float = 0.3
    ) -> None:
        super().__init__()
        self.budget = budget
        self.counter = counter
        self.compressor = compressor
        self.hard_ratio = hard_ratio

    def _target(self, request: ModelRequest) -> int:
        # The provider counted more than we did, so our estimate is no guide: aim for the
        # smaller of a hard share of the window and half of what we just sent.
        overhead = request_overhead(request, self.counter)
        sent = self.counter.count_messages(request.messages)
        room = min(int(self.budget.window * self.hard_ratio) - overhead, sent // 2)
        return max(room, self.budget.window // 20)

    def _failure(self, error: BaseException, result: CompressionResult) -> ExtendedModelResponse:
        report(ContextAction("overflow_recovered", f"retry failed: {error}"[:300],
                             layer="overflow_recovery", numbers={"succeeded": 0}))
        answer = AIMessage(
            content=(
                "This conversation is too large for the model even after compressing it, so "
                "I could not answer. Ask again with a narrower question, start a new "
                "conversation, or use a model with a larger window (MAX_CONTEXT_TOKENS)."
            ),
            id=f"ai-{uuid.uuid4().hex}",
        )
        # Keep the compressed history even so: the next question starts from a smaller base.
        return self._rewrite(ModelResponse(result=[answer]), result)

    @staticmethod
    def _rewrite(response: ModelResponse, result: CompressionResult) -> ExtendedModelResponse:
        answer = [_with_id(m) for m in response.result]
        response = ModelResponse(result=answer, structured_response=response.structured_response)
        # The command runs after the answer is appended: clear, then the compressed history and
        # the answer again (same id, so it is not duplicated).
        command: Command = Command(update={"messages": [
            RemoveMessage(id=REMOVE_ALL_MESSAGES), *result.messages, *answer]})
        return ExtendedModelResponse(model_response=response, command=command)

    def _success(self, response: ModelResponse, result: CompressionResult) -> ExtendedModelResponse:
        report_compression(result, "overflow_recovery")
        report(ContextAction("overflow_recovered", "compressed and retried once",
                             layer="overflow_recovery", numbers={"succeeded": 1}))
        return self._rewrite(response, result)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        try:
            return handler(request)
        except Exception as error:
            if not is_context_overflow(error):
                raise
        result = self.compressor.compress(request.messages, self._target(request))
        try:
            response = handler(request.override(messages=result.messages))
        except Exception as error:
            if not is_context_overflow(error):
                raise
            return self._failure(error, result)
        return self._success(response, result)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        try:
            return await handler(request)
        except Exception as error:
            if not is_context_overflow(error):
                raise
        result = await self.compressor.acompress(request.messages, self._target(request))
        try:
            response = await handler(request.override(messages=result.messages))
        except Exception as error:
            if not is_context_overflow(error):
                raise
            return self._failure(error, result)
        return self._success(response, result)

