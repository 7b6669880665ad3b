"""First-call tool hints: a hint offers its tool alone on a turn's first call, never later."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from pilothouse.agents.shell_intent import SpelledCommandMiddleware
from pilothouse.agents.tool_hints import ToolHint, ToolHintMiddleware, hinted_tools, tool_hints
from pilothouse.config import Settings


@tool
def plan(goal: str) -> str:
    """Plan the steps of a change."""
    return goal


@tool
def run_command(command: str) -> str:
    """Run one shell command."""
    return command


HINTS = (ToolHint(("plan",), lambda q: "then" in q), ToolHint(("run_command",), lambda q: True))


def _request(*messages: object) -> ModelRequest:
    return ModelRequest(model=None, messages=list(messages),  # type: ignore[arg-type]
                        tools=[plan, run_command])


def test_the_first_matching_hint_wins() -> None:
    assert hinted_tools("bump it, then tag it", HINTS) == ("plan",)
    assert hinted_tools("bump it", HINTS) == ("run_command",)
    assert hinted_tools("bump it", ()) == ()


def test_a_hint_narrows_the_first_call_only() -> None:
    middleware = ToolHintMiddleware(HINTS)
    first = middleware.rewrite(_request(HumanMessage("bump it, then tag it")))
    assert [t.name for t in first.tools] == ["plan"] and first.tool_choice == "required"

    call = AIMessage("", tool_calls=[{"name": "plan", "args": {"goal": "x"}, "id": "c1"}])
    later = middleware.rewrite(_request(HumanMessage("bump it, then tag it"), call,
                                        ToolMessage("planned", tool_call_id="c1")))
    assert [t.name for t in later.tools] == ["plan", "run_command"]


def test_with_the_hint_layer_off_a_spelled_request_still_acts_and_the_hints_do_not(
    make_settings: Callable[..., Settings],
) -> None:
    spelled = SpelledCommandMiddleware()
    on = tool_hints(make_settings(), HINTS, spelled=[spelled])
    off = tool_hints(dataclasses.replace(make_settings(),
                                         disabled_layers=frozenset({"tool_hints"})),
                     HINTS, spelled=[spelled])

    assert on[0] is spelled and isinstance(on[1], ToolHintMiddleware) and len(on) == 2
    assert off == [spelled]
