"""What happens during a turn, as a closed union of frozen dataclasses, and its one wire form.

Every interface (CLI, TUI, REST/SSE, A2A, the evaluation) handles `Event` with `match` and
ends in `typing.assert_never`: a new kind of event is a type error (mypy) in each consumer that
does not handle it yet, and an object outside the union fails loudly at run time instead of
being skipped. The JSON the outside world reads (the API's SSE frames, `ask --json` lines, A2A
progress data) is written here alone, by `to_wire`; its shape `{kind, text, data}` is a public
contract and does not change when the Python types do.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypedDict, assert_never

from pilothouse.context.events import ContextAction
from pilothouse.runtime.planning import StepStatus

ToolStatus = Literal["success", "error"]
PlanAction = Literal["approved", "step"]
#: The `kind` of a wire event; `done` ends an SSE stream and has no Python event.
WireKind = Literal["token", "tool_call", "tool_result", "progress", "context", "plan", "answer",
                   "interrupt", "error", "waiting", "done"]


@dataclass(frozen=True)
class Token:
    """A piece of the answer as the model writes it.

    With `parent_id`, a piece of a sub-agent's answer, relayed while the supervisor's
    `ask_<agent>` call runs (only to conversations that asked for them: see `Conversation`).
    """

    text: str
    parent_id: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class ToolCalled:
    """The model asked for a tool call.

    A sub-agent's call, relayed while the supervisor's `ask_<agent>` call runs, names that call
    (`parent_id`) and the agent that made it, so interfaces nest it under the call it serves.
    """

    id: str | None
    name: str
    args: Mapping[str, Any]
    parent_id: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """A tool call's result: its status, size and the start of its text."""

    id: str
    name: str | None
    status: ToolStatus
    preview: str
    chars: int
    parent_id: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class ToolProgress:
    """A running tool call's progress as its server reports it ("indexing 1,240 files: 35%").

    A sub-agent's, relayed while the supervisor's `ask_<agent>` call runs, names that call
    (`parent_id`) and the agent, as its tool calls do.
    """

    name: str
    done: float
    total: float | None
    message: str
    parent_id: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class ContextNote:
    """A context-safety layer changed the conversation (summarized, truncated, ...)."""

    action: ContextAction


@dataclass(frozen=True)
class PlanUpdate:
    """The plan was approved, or one of its steps changed status."""

    action: PlanAction
    plan: Mapping[str, Any]
    step: int | None = None
    status: StepStatus | None = None
    note: str = ""


@dataclass(frozen=True)
class Answer:
    """The model's final message of the turn; `streamed` when its tokens came first."""

    text: str
    streamed: bool = False
    usage: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ApprovalRequest:
    """The run stopped for a person's decision; `value` says what would run."""

    id: str
    value: Any


@dataclass(frozen=True)
class TurnFailed:
    """The turn failed; `payload` is the error's `{error, kind, suggestion}`."""

    message: str
    payload: Mapping[str, Any] = field(default_factory=dict)

    @property
    def suggestion(self) -> str | None:
        hint = self.payload.get("suggestion")
        return str(hint) if hint else None


@dataclass(frozen=True)
class ModelWaiting:
    """The turn waits for the local model, busy with `ahead` other turns (0: its turn now)."""

    ahead: int

    @property
    def text(self) -> str:
        return (f"waiting for the model ({self.ahead} ahead)" if self.ahead
                else "the model is working on this turn")


Event: TypeAlias = (Token | ToolCalled | ToolResult | ToolProgress | ContextNote | PlanUpdate
                    | Answer | ApprovalRequest | TurnFailed | ModelWaiting)


class WireEvent(TypedDict):
    """An event as JSON: the API's SSE `data`, an `ask --json` line."""

    kind: WireKind
    text: str
    data: dict[str, Any]


def _plan_data(event: PlanUpdate) -> dict[str, Any]:
    if event.action == "approved":
        return {"type": "plan", "action": "approved", "plan": dict(event.plan)}
    return {"type": "plan", "action": "step", "step": event.step, "status": event.status,
            "note": event.note, "plan": dict(event.plan)}


def _nested(data: dict[str, Any],
            event: Token | ToolCalled | ToolResult | ToolProgress) -> dict[str, Any]:
    """`data` plus `parent_id` and `agent` for a sub-agent's call (absent for the agent's own)."""
    if event.parent_id is not None:
        data.update(parent_id=event.parent_id, agent=event.agent)
    return data


def to_wire(event: Event) -> WireEvent:
    """The one place an event becomes `{kind, text, data}`."""
    match event:
        case Token(text=text):
            return {"kind": "token", "text": text, "data": _nested({}, event)}
        case ToolCalled(id=call_id, name=name, args=args):
            return {"kind": "tool_call", "text": name,
                    "data": _nested({"id": call_id, "name": name, "args": dict(args)}, event)}
        case ToolResult():
            return {"kind": "tool_result", "text": event.preview,
                    "data": _nested({"name": event.name, "id": event.id,
                                     "status": event.status, "chars": event.chars}, event)}
        case ToolProgress(name=name, done=done, total=total, message=message):
            return {"kind": "progress", "text": message,
                    "data": _nested({"name": name, "done": done, "total": total}, event)}
        case ContextNote(action=action):
            return {"kind": "context", "text": action.detail, "data": action.as_event()}
        case PlanUpdate():
            return {"kind": "plan", "text": event.action, "data": _plan_data(event)}
        case Answer(text=text, streamed=streamed, usage=usage):
            return {"kind": "answer", "text": text,
                    "data": {"streamed": streamed, "usage": dict(usage)}}
        case ApprovalRequest(id=interrupt_id, value=value):
            return {"kind": "interrupt", "text": "", "data": {"value": value, "id": interrupt_id}}
        case TurnFailed(message=message, payload=payload):
            return {"kind": "error", "text": message, "data": dict(payload)}
        case ModelWaiting(ahead=ahead):
            return {"kind": "waiting", "text": event.text, "data": {"ahead": ahead}}
        case _:
            assert_never(event)


def done_wire(thread_id: str) -> WireEvent:
    """The frame that ends an SSE stream."""
    return {"kind": "done", "text": "", "data": {"thread_id": thread_id}}


def event_as_json(event: Event) -> str:
    """One event as a JSON line (for `pilothouse ask --json` and logs), shaped as the API's.

    `data` stays nested: spread at the top, an error's `kind` (its class) replaced the event's.
    """
    return json.dumps(to_wire(event), default=str)
