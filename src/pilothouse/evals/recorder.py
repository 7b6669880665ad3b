"""What the model did during a case: calls, tokens, and the tool calls it chose.

A LangChain callback handler on the one chat model every agent shares (supervisor,
specialists, summarizer), so a case's cost is counted wherever the call was made, including
inside sub-agents whose streams the harness never sees. Prompt tokens are the provider's own
count when it reports usage, else the model's token counter over the messages sent.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from pilothouse.context.summarizer import INTERNAL_TAG
from pilothouse.evals.checks import ToolCall
from pilothouse.models.tokens import TokenCounter


@dataclass
class Usage:
    """Model usage accumulated since the last `ModelRecorder.take`."""

    model_calls: int = 0
    internal_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_prompt_tokens: int = 0
    calls: list[ToolCall] = field(default_factory=list)


class ModelRecorder(BaseCallbackHandler):
    """Counts every call of the chat model it is attached to; thread-safe."""

    def __init__(self, counter: TokenCounter, tool_owner: Mapping[str, str]) -> None:
        self.counter = counter
        self.tool_owner = dict(tool_owner)
        self._estimates: dict[UUID, int] = {}
        self._internal: set[UUID] = set()
        self._usage = Usage()
        self._lock = threading.Lock()

    def attach(self, model: Any) -> None:
        """Add this handler to `model`'s own callbacks (kept by its tool-bound copies)."""
        model.callbacks = [*(model.callbacks or []), self]

    def detach(self, model: Any) -> None:
        """Remove this handler from `model` again."""
        model.callbacks = [c for c in (model.callbacks or []) if c is not self] or None

    def take(self) -> Usage:
        """The usage so far, resetting the tally for the next turn."""
        with self._lock:
            usage, self._usage = self._usage, Usage()
            return usage

    def on_chat_model_start(self, serialized: dict[str, Any],
                            messages: list[list[BaseMessage]], *, run_id: UUID,
                            tags: list[str] | None = None, **kwargs: Any) -> None:
        estimate = sum(self.counter.count_messages(batch) for batch in messages)
        with self._lock:
            self._estimates[run_id] = estimate
            if INTERNAL_TAG in (tags or []):
                self._internal.add(run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        message = _first_message(response)
        usage: Mapping[str, Any] = (message.usage_metadata or {}) if message else {}
        with self._lock:
            estimate = self._estimates.pop(run_id, 0)
            prompt = int(usage.get("input_tokens") or estimate)
            completion = int(usage.get("output_tokens") or 0)
            if not completion and message is not None:
                completion = self.counter.count_message(message)
            tally = self._usage
            tally.model_calls += 1
            tally.internal_calls += run_id in self._internal
            self._internal.discard(run_id)
            tally.prompt_tokens += prompt
            tally.completion_tokens += completion
            tally.peak_prompt_tokens = max(tally.peak_prompt_tokens, prompt)
            if message is not None:
                tally.calls.extend(self._tool_calls(message))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            self._estimates.pop(run_id, None)
            self._internal.discard(run_id)
            self._usage.model_calls += 1

    def _tool_calls(self, message: AIMessage) -> Sequence[ToolCall]:
        return [ToolCall(self._owner(call["name"]), call["name"], dict(call["args"] or {}))
                for call in message.tool_calls]

    def _owner(self, tool: str) -> str:
        if tool.startswith("ask_"):
            return "supervisor"
        return self.tool_owner.get(tool, "unknown")


def _first_message(response: LLMResult) -> AIMessage | None:
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration) and isinstance(generation.message,
                                                                     AIMessage):
                return generation.message
    return None
