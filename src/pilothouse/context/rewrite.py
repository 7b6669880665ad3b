"""Rewriting the model request (and revising its response): one middleware shape for sync and
async runs, turn notes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar
from uuid import uuid4

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.tool import ToolCall

from pilothouse.models.tokens import message_text, turn_start


class RequestRewriteMiddleware(AgentMiddleware):
    """Subclasses implement `rewrite` (the request) and/or `revise` (the model's response);
    both call paths run them around the model. `answer_without_model` answers instead of the
    model when code already knows the reply (a direct call, the views, a relayed answer)."""

    def answer_without_model(self, request: ModelRequest) -> ModelResponse | None:
        return None

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        return request

    def revise(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        return response

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        answer = self.answer_without_model(request)
        return answer or self.revise(request, handler(self.rewrite(request)))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        answer = self.answer_without_model(request)
        return answer or self.revise(request, await handler(self.rewrite(request)))


def first_call(request: ModelRequest) -> bool:
    """Whether `request` is its turn's first model call (the question is the newest message)."""
    return bool(request.messages) and isinstance(request.messages[-1], HumanMessage)


def calling(name: str, args: dict[str, Any]) -> ModelResponse:
    """A response that calls tool `name` with `args`: a call code decided, made without the
    model (it is recorded, gated and answered like one the model made)."""
    call = {"name": name, "args": args, "id": f"call_{uuid4().hex[:24]}", "type": "tool_call"}
    return ModelResponse(result=[AIMessage(content="", tool_calls=[call])])


def final_message(response: ModelResponse) -> AIMessage | None:
    """The model's reply in `response` (None when it ends with something else)."""
    final = response.result[-1] if response.result else None
    return final if isinstance(final, AIMessage) else None


def with_final(response: ModelResponse, **update: Any) -> ModelResponse:
    """`response` with its final message's fields replaced (`content`, `tool_calls`)."""
    rebuilt = response.result[-1].model_copy(update=update)
    return ModelResponse(result=[*response.result[:-1], rebuilt],
                         structured_response=response.structured_response)


def with_revised_calls(response: ModelResponse,
                       revise_call: Callable[[ToolCall], ToolCall]) -> ModelResponse:
    """`response` with each tool call of its final message passed through `revise_call`
    (the same response when none changes)."""
    final = final_message(response)
    if final is None or not final.tool_calls:
        return response
    calls = [revise_call(call) for call in final.tool_calls]
    return response if calls == final.tool_calls else with_final(response, tool_calls=calls)


M = TypeVar("M", bound=BaseMessage)

#: Where a turn's notes start in the question the model is shown.
TURN_NOTE = "\n\n[Pilothouse note] "


#: How the supervisor's note with the answers a question refers to begins ("its repo").
ANSWERS_NOTE = "What the other agents answered, which the question refers to:\n"


def referred_answers(messages: Sequence[BaseMessage]) -> str:
    """The answers the turn's question refers to, when the supervisor passed them along
    (`ANSWERS_NOTE`); "" otherwise."""
    index = turn_start(messages)
    text = message_text(messages[index]) if index >= 0 else ""
    notes = text.split(TURN_NOTE)[1:]
    return next((note.removeprefix(ANSWERS_NOTE) for note in notes
                 if note.startswith(ANSWERS_NOTE)), "")


def before_notes(text: str) -> str:
    """`text` without the notes layers added after it (`TURN_NOTE` onwards)."""
    return text.split(TURN_NOTE, 1)[0]


def newest_question(messages: Sequence[BaseMessage]) -> str:
    """The turn's question as the person asked it, without the notes layers added."""
    index = turn_start(messages)
    return before_notes(message_text(messages[index])) if index >= 0 else ""


def question_text(request: ModelRequest) -> str:
    """The question of the turn `request` belongs to (`newest_question`)."""
    return newest_question(request.messages)


def _with_note(message: M, note: str) -> M:
    content = message.content
    added: str | list[str | dict[str, Any]] = (
        content + TURN_NOTE + note if isinstance(content, str)
        else [*content, {"type": "text", "text": TURN_NOTE + note}])
    return message.model_copy(update={"content": added})


def add_turn_note(request: ModelRequest, note: str) -> ModelRequest:
    """`request` with `note` after the turn's question, for this model call only.

    Not in the system prompt: the system prompt and the tool schemas head every prompt, and
    the local model's KV cache reuses only an unchanged prefix, so a note there made llama.cpp
    re-read all of them (~2,000 tokens, ~20 s on two cores) on every call. After the question,
    only the question and what follows it are read again.
    """
    index = turn_start(request.messages)
    if index < 0:
        base = request.system_message.text if request.system_message else ""
        return request.override(system_message=SystemMessage(content=f"{base}\n\n{note}".strip()))
    messages = list(request.messages)
    messages[index] = _with_note(messages[index], note)
    return request.override(messages=messages)


def add_result_note(request: ModelRequest, note: str) -> ModelRequest:
    """`request` with `note` after its newest message (a tool result), for this call only."""
    messages = list(request.messages)
    messages[-1] = _with_note(messages[-1], note)
    return request.override(messages=messages)
