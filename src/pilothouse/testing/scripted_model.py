"""A scripted chat model: emits chosen answers and tool calls turn by turn.

The only fake in Pilothouse's tests, benchmarks and harness self-checks. Like LangChain's
`GenericFakeChatModel`, but it supports `bind_tools`, records every request it receives (so a
test can check what was actually sent), and can enforce a context window the way a provider does:
a request over `window_tokens` raises OpenAI's `context_length_exceeded` error.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from pilothouse.context.rewrite import TURN_NOTE, before_notes

Step = AIMessage | str | BaseException | Callable[[list[BaseMessage]], "AIMessage | str"]


def _as_asked(message: BaseMessage) -> BaseMessage:
    """A message without the notes layers add after it (`requests` records them).

    Step functions read the conversation as the person and the tools wrote it, like a model
    that ignores hints: a step that parses "List page 3" must not read a correlation note as
    the page, nor one that parses a tool's JSON the note after it.
    """
    if isinstance(message.content, str) and TURN_NOTE in message.content:
        return message.model_copy(update={"content": before_notes(message.content)})
    return message


def tool_call(tool_name: str, /, **args: Any) -> AIMessage:
    """An AI message that calls one tool."""
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    return AIMessage(content="", tool_calls=[
        {"name": tool_name, "args": args, "id": call_id, "type": "tool_call"}
    ])


@dataclass
class Recorded:
    """One request as the model received it."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]]
    tokens: int
    tool_choice: Any = None
    #: The model settings the call was bound with (`ModelRequest.model_settings`).
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class Script:
    """Shared state of a scripted model and its tool-bound copies."""

    steps: list[Step]
    default: Step | None = None
    requests: list[Recorded] = field(default_factory=list)
    position: int = 0


class ScriptedChatModel(BaseChatModel):
    """Answers from a script; `count_tokens` and `window_tokens` let it act like a provider."""

    script: Script
    bound_tools: list[dict[str, Any]] = Field(default_factory=list)
    bound_tool_choice: Any = None
    bound_settings: dict[str, Any] = Field(default_factory=dict)
    window_tokens: int | None = None
    count_tokens: Callable[[Sequence[BaseMessage], list[dict[str, Any]]], int] | None = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    @classmethod
    def from_steps(cls, steps: Sequence[Step], *, default: Step | None = None,
                   **kwargs: Any) -> ScriptedChatModel:
        return cls(script=Script(list(steps), default), **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def requests(self) -> list[Recorded]:
        return self.script.requests

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        settings = {k: v for k, v in kwargs.items() if k != "tool_choice"}
        return self.model_copy(update={"bound_tools": [convert_to_openai_tool(t) for t in tools],
                                       "bound_tool_choice": kwargs.get("tool_choice"),
                                       "bound_settings": settings})

    def _next_step(self, messages: list[BaseMessage]) -> AIMessage:
        script = self.script
        if script.position < len(script.steps):
            step = script.steps[script.position]
            script.position += 1
        elif script.default is not None:
            step = script.default
        else:
            raise RuntimeError(f"Script exhausted after {len(script.steps)} steps.")
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, AIMessage):
            step = step([_as_asked(m) for m in messages])
        message = AIMessage(content=step) if isinstance(step, str) else step
        # A fresh id per call, so a step reused as `default` is not merged into an earlier one.
        return message.model_copy(update={"id": f"ai-{uuid.uuid4().hex}"})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tokens = self.count_tokens(messages, self.bound_tools) if self.count_tokens else 0
        self.script.requests.append(
            Recorded(list(messages), list(self.bound_tools), tokens, self.bound_tool_choice,
                     dict(self.bound_settings)))
        if self.window_tokens is not None and tokens > self.window_tokens:
            raise ValueError(
                f"Error code: 400 - This model's maximum context length is {self.window_tokens} "
                f"tokens. However, your messages resulted in {tokens} tokens. "
                "(code: context_length_exceeded)"
            )
        message = self._next_step(messages)
        usage = {"input_tokens": tokens, "output_tokens": 10, "total_tokens": tokens + 10}
        message = message.model_copy(update={"usage_metadata": usage if tokens else None})
        return ChatResult(generations=[ChatGeneration(message=message)])
