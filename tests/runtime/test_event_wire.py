"""The wire forms of turn events are a public contract: golden JSON for SSE, --json and A2A.

The strings below are what the string-typed events wrote before events became dataclasses;
the REST API's clients, scripts reading `ask --json` and A2A callers parse exactly these.
"""

from __future__ import annotations

import io
import json
from typing import get_args

import pytest
from rich.console import Console

from pilothouse.a2a.executor import _progress_data, _progress_text
from pilothouse.context.events import ContextAction
from pilothouse.interfaces.api.streaming import sse_frame
from pilothouse.interfaces.render import EventPrinter
from pilothouse.runtime.events import (
    Answer,
    ApprovalRequest,
    ContextNote,
    Event,
    ModelWaiting,
    PlanUpdate,
    Token,
    ToolCalled,
    ToolProgress,
    ToolResult,
    TurnFailed,
    done_wire,
    event_as_json,
    to_wire,
)

PLAN = {"goal": "Restart the job", "steps": [{"title": "Restart", "status": "done"}],
        "revision": 1}
APPROVAL = {"name": "run_command", "args": {"command": "rm -rf build"},
            "description": "Run this command?"}

#: One event of each kind, and the `ask --json` line it was always written as.
GOLDEN: list[tuple[Event, str]] = [
    (Token("Pay"), '{"kind": "token", "text": "Pay", "data": {}}'),
    (ToolCalled("call-1", "get_application", {"name": "payments-api"}),
     '{"kind": "tool_call", "text": "get_application", "data": {"id": "call-1", '
     '"name": "get_application", "args": {"name": "payments-api"}}}'),
    (ToolResult("call-1", "get_application", "error", '{"error": "not found"}', 22),
     '{"kind": "tool_result", "text": "{\\"error\\": \\"not found\\"}", "data": {'
     '"name": "get_application", "id": "call-1", "status": "error", "chars": 22}}'),
    (ContextNote(ContextAction("truncated", "get_logs output cut from 90,000 to 6,000",
                               layer="tool_output_guard",
                               numbers={"original_chars": 90000, "kept_chars": 6000})),
     '{"kind": "context", "text": "get_logs output cut from 90,000 to 6,000", "data": {'
     '"type": "context", "action": "truncated", "detail": "get_logs output cut from 90,000 '
     'to 6,000", "layer": "tool_output_guard", "numbers": {"original_chars": 90000, '
     '"kept_chars": 6000}}}'),
    (PlanUpdate("approved", PLAN),
     '{"kind": "plan", "text": "approved", "data": {"type": "plan", "action": "approved", '
     '"plan": {"goal": "Restart the job", "steps": [{"title": "Restart", "status": "done"}], '
     '"revision": 1}}}'),
    (PlanUpdate("step", PLAN, step=1, status="done", note="restarted"),
     '{"kind": "plan", "text": "step", "data": {"type": "plan", "action": "step", "step": 1, '
     '"status": "done", "note": "restarted", "plan": {"goal": "Restart the job", "steps": '
     '[{"title": "Restart", "status": "done"}], "revision": 1}}}'),
    (Answer("payments-api is Degraded.", True, {"input_tokens": 120, "output_tokens": 9}),
     '{"kind": "answer", "text": "payments-api is Degraded.", "data": {"streamed": true, '
     '"usage": {"input_tokens": 120, "output_tokens": 9}}}'),
    (ApprovalRequest("int-7", APPROVAL),
     '{"kind": "interrupt", "text": "", "data": {"value": {"name": "run_command", "args": '
     '{"command": "rm -rf build"}, "description": "Run this command?"}, "id": "int-7"}}'),
    (TurnFailed("The model provider is rate limiting requests.",
                {"error": "The model provider is rate limiting requests.",
                 "kind": "ModelProviderError", "suggestion": "Wait a minute and ask again."}),
     '{"kind": "error", "text": "The model provider is rate limiting requests.", "data": {'
     '"error": "The model provider is rate limiting requests.", "kind": "ModelProviderError", '
     '"suggestion": "Wait a minute and ask again."}}'),
    (ModelWaiting(1),
     '{"kind": "waiting", "text": "waiting for the model (1 ahead)", "data": {"ahead": 1}}'),
    (ToolProgress("retrieve_code_context", 434, 1240, "indexing 1,240 files: 35%",
                  parent_id="call-d", agent="devops"),
     '{"kind": "progress", "text": "indexing 1,240 files: 35%", "data": {'
     '"name": "retrieve_code_context", "done": 434, "total": 1240, "parent_id": "call-d", '
     '"agent": "devops"}}'),
]


def test_every_kind_of_event_has_a_golden_line() -> None:
    assert {type(event) for event, _ in GOLDEN} == set(get_args(Event))


@pytest.mark.parametrize(("event", "line"), GOLDEN, ids=lambda v: type(v).__name__)
def test_ask_json_lines_are_unchanged(event: Event, line: str) -> None:
    assert event_as_json(event) == line


@pytest.mark.parametrize(("event", "line"), GOLDEN, ids=lambda v: type(v).__name__)
def test_sse_frames_are_unchanged(event: Event, line: str) -> None:
    kind = json.loads(line)["kind"]
    payload = json.dumps(json.loads(line), ensure_ascii=False)
    assert sse_frame(to_wire(event)) == f"event: {kind}\ndata: {payload}\n\n".encode()


def test_the_sse_stream_still_ends_with_done() -> None:
    assert sse_frame(done_wire("t-1")) == (
        b'event: done\ndata: {"kind": "done", "text": "", "data": {"thread_id": "t-1"}}\n\n')


def test_a2a_progress_updates_are_unchanged() -> None:
    call, result, context, approved, step = (GOLDEN[i][0] for i in (1, 2, 3, 4, 5))
    assert isinstance(call, ToolCalled) and isinstance(result, ToolResult)
    assert isinstance(context, ContextNote) and isinstance(approved, PlanUpdate)
    assert isinstance(step, PlanUpdate)
    assert _progress_text(call) == "Calling get_application"
    assert _progress_data(call) == {"kind": "tool_call", "id": "call-1",
                                    "name": "get_application",
                                    "args": {"name": "payments-api"}}
    assert _progress_text(result) == "get_application failed (22 chars)"
    assert list(_progress_data(result).items()) == [
        ("kind", "tool_result"), ("name", "get_application"), ("id", "call-1"),
        ("status", "error"), ("chars", 22), ("preview", '{"error": "not found"}')]
    assert _progress_text(context) == "context: get_logs output cut from 90,000 to 6,000"
    assert _progress_data(context) == {
        "kind": "context", "type": "context", "action": "truncated",
        "detail": "get_logs output cut from 90,000 to 6,000", "layer": "tool_output_guard",
        "numbers": {"original_chars": 90000, "kept_chars": 6000}}
    assert _progress_text(approved) == "plan: approved"
    assert _progress_text(step) == "plan: step"
    assert _progress_data(step)["kind"] == "plan" and _progress_data(step)["step"] == 1


class NotAnEvent:
    """What a producer might send that no consumer knows: it must not pass unnoticed."""


def test_an_object_outside_the_union_fails_loudly_at_every_edge() -> None:
    stray = NotAnEvent()
    with pytest.raises(AssertionError):
        to_wire(stray)  # type: ignore[arg-type]
    printer = EventPrinter(Console(file=io.StringIO()), Console(file=io.StringIO()),
                           as_json=False)
    with pytest.raises(AssertionError):
        printer.show(stray)  # type: ignore[arg-type]
