"""What the model did during a case: its calls, their tokens and seconds.

A LangChain callback handler on the one chat model every agent shares (supervisor,
specialists, summarizer), so a case's cost is counted wherever the call was made, including
inside sub-agents whose streams the harness never sees. Prompt tokens are the provider's own
count when it reports usage, else the model's token counter over the messages sent.

The handler is shared; the usage is not. `recording()` binds a fresh `Usage` to the runs started
inside it (a context variable, inherited by their tasks and threads), and each call is counted
in the usage of the run that made it, so turns answered at once never mix their figures.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from pilothouse.context.summarizer import INTERNAL_TAG
from pilothouse.models.local_turn import READ_TOKENS_KEY
from pilothouse.models.tokens import TokenCounter


@dataclass
class Usage:
    """Model usage of the runs inside one `ModelRecorder.recording()` block."""

    model_calls: int = 0
    internal_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    peak_prompt_tokens: int = 0
    #: Prompt tokens the model evaluated (local model only): the rest came from its cache.
    read_tokens: int = 0
    #: Each model call in the order it ended: where a case's seconds went.
    steps: list[ModelStep] = field(default_factory=list)


@dataclass(frozen=True)
class ModelStep:
    """One model call: its wall time, tokens, and the tools it called (none: it answered)."""

    seconds: float
    prompt_tokens: int
    read_tokens: int
    completion_tokens: int
    tools: tuple[str, ...]
    #: The local model's generations of the call: tokens, time to first token, seconds.
    generations: tuple[str, ...] = ()


@dataclass
class _Call:
    """A model call in flight: its estimated prompt, start, and the usage it counts in."""

    estimate: int
    internal: bool
    usage: Usage
    started: float = field(default_factory=time.monotonic)


class ModelRecorder(BaseCallbackHandler):
    """Counts every call of the chat model it is attached to in its run's usage; thread-safe."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._calls: dict[UUID, _Call] = {}
        self._lock = threading.Lock()
        self._run_usage: ContextVar[Usage | None] = ContextVar(
            f"pilothouse_eval_usage_{id(self)}", default=None)

    def attach(self, model: Any) -> None:
        """Add this handler to `model`'s own callbacks (kept by its tool-bound copies)."""
        model.callbacks = [*(model.callbacks or []), self]

    def detach(self, model: Any) -> None:
        """Remove this handler from `model` again."""
        model.callbacks = [c for c in (model.callbacks or []) if c is not self] or None

    @contextmanager
    def recording(self) -> Iterator[Usage]:
        """Count the model calls of every run started inside the block, and only those.

        Enter it in the task that starts the run, or before creating that task; calls made
        outside any `recording()` block are not counted.
        """
        usage = Usage()
        token = self._run_usage.set(usage)
        try:
            yield usage
        finally:
            self._run_usage.reset(token)

    def on_chat_model_start(self, serialized: dict[str, Any],
                            messages: list[list[BaseMessage]], *, run_id: UUID,
                            tags: list[str] | None = None, **kwargs: Any) -> None:
        usage = self._run_usage.get()
        if usage is None:
            return
        estimate = sum(self.counter.count_messages(batch) for batch in messages)
        with self._lock:
            self._calls[run_id] = _Call(estimate, INTERNAL_TAG in (tags or []), usage)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            call = self._calls.pop(run_id, None)
        if call is None:
            return
        message = _first_message(response)
        reported: Mapping[str, Any] = (message.usage_metadata or {}) if message else {}
        prompt = int(reported.get("input_tokens") or call.estimate)
        completion = int(reported.get("output_tokens") or 0)
        if not completion and message is not None:
            completion = self.counter.count_message(message)
        tools = tuple(c["name"] for c in message.tool_calls) if message is not None else ()
        metadata = message.response_metadata if message else {}
        read = int(metadata.get(READ_TOKENS_KEY) or 0)
        step = ModelStep(round(time.monotonic() - call.started, 2), prompt, read, completion,
                         tools,
                         tuple(str(g) for g in metadata.get("generations") or ()))
        with self._lock:
            usage = call.usage
            usage.model_calls += 1
            usage.internal_calls += call.internal
            usage.prompt_tokens += prompt
            usage.completion_tokens += completion
            usage.peak_prompt_tokens = max(usage.peak_prompt_tokens, prompt)
            usage.read_tokens += read
            usage.steps.append(step)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with self._lock:
            call = self._calls.pop(run_id, None)
            if call is not None:
                call.usage.model_calls += 1


def _first_message(response: LLMResult) -> AIMessage | None:
    for generations in response.generations:
        for generation in generations:
            if isinstance(generation, ChatGeneration) and isinstance(generation.message,
                                                                     AIMessage):
                return generation.message
    return None
