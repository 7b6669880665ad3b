"""The intent call: what a question asks of one application, named by the model from a closed
set, through the real Argo CD agent (scripted model -> MCP stdio server -> sandbox over HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.argocd import (
    GATED_TOOLS,
    ONE_APP_INTENTS,
    ONE_APP_TOOLS,
    open_argocd_toolkit,
)
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.intents import CHOOSE_TOOL
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, Event, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call

APP = "payments-api-production"
LEAD = "Those are its events."


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=819) as running:
        yield running


async def ask(settings: Settings, setup: ModelSetup, question: str) -> tuple[list[Event], Any]:
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = [e async for e in Conversation(graph, "t").ask(question)]
    return events, setup.chat_model.requests  # type: ignore[attr-defined]


def calls(events: list[Event]) -> list[tuple[str | None, str]]:
    return [(e.name, e.status) for e in events if isinstance(e, ToolResult)]


async def test_the_intent_named_is_the_call_code_makes_and_its_result_answers(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([tool_call(CHOOSE_TOOL, intent="why_failing"), LEAD],
                           window=32_000, settings=settings)
    events, requests = await ask(settings, setup, f"what's wrong with {APP.upper()}?")

    intent_call, lead_call = requests  # no model call chose the tool or wrote its arguments
    # The intent call is short: the intents and the question, not the agent's prompt.
    system, question = intent_call.messages
    assert question.content == f"what's wrong with {APP.upper()}?"
    assert isinstance(system, SystemMessage) and "- why_failing: " in str(system.content)
    assert "Argo CD agent" not in str(system.content)
    [offered] = intent_call.tools
    assert offered["function"]["name"] == CHOOSE_TOOL
    assert intent_call.tool_choice == CHOOSE_TOOL
    # Only the intents this (read-only) Argo CD can answer: no sync, rollback or action.
    enum = offered["function"]["parameters"]["properties"]["intent"]["enum"]
    assert enum == [i.label for i in ONE_APP_INTENTS if i.tool not in GATED_TOOLS]
    assert calls(events) == [("get_application_events", "success")]
    made = next(m for m in lead_call.messages if isinstance(m, AIMessage) and m.tool_calls)
    assert made.tool_calls[0]["args"] == {"name": APP}  # spelled as the inventory spells it
    assert lead_call.tool_choice == "none", "the intent's result answers: only a lead is asked"
    assert next(e.text for e in events if isinstance(e, Answer)).startswith(LEAD)


async def test_an_intent_whose_question_sets_more_is_written_by_the_model_with_its_tool_alone(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([tool_call(CHOOSE_TOOL, intent="logs"),
                            tool_call("get_application_logs", name=APP, tail_lines=20), LEAD],
                           window=32_000, settings=settings)
    events, requests = await ask(settings, setup, f"last 20 log lines of {APP}")

    _, written, lead_call = requests
    assert [t["function"]["name"] for t in written.tools] == ["get_application_logs"]
    assert written.tool_choice == "required"
    assert calls(events) == [("get_application_logs", "success")]
    assert lead_call.tool_choice == "none"


@pytest.mark.parametrize("answer", [ValueError("the model's server broke"),
                                    "I think they want the status.",
                                    tool_call(CHOOSE_TOOL, intent="no-such-intent")],
                         ids=["error", "text", "unknown"])
async def test_an_intent_call_that_names_no_intent_leaves_the_choice_to_the_model(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    answer: Any,
) -> None:
    settings = argocd_settings()
    setup = scripted_setup([answer, tool_call("get_application", name=APP), "It is there."],
                           window=32_000, settings=settings)
    events, requests = await ask(settings, setup, f"how is {APP}?")

    _, chosen_by_model, _ = requests
    offered = {t["function"]["name"] for t in chosen_by_model.tools}
    assert offered and offered <= set(ONE_APP_TOOLS)  # the one-app scope, every one of them
    assert len(offered) > 1 and chosen_by_model.tool_choice == "required"
    assert calls(events) == [("get_application", "success")]


async def test_no_intent_call_without_one_named_application_or_with_the_layer_off(
    argocd_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    for settings, question in ((argocd_settings(), "how is the fleet doing?"),
                               (argocd_settings(PILOTHOUSE_DISABLE_LAYERS="intents"),
                                f"how is {APP}?")):
        setup = scripted_setup([tool_call("get_application", name=APP), "It is there."],
                               window=32_000, settings=settings)
        events, requests = await ask(settings, setup, question)
        assert CHOOSE_TOOL not in {t["function"]["name"] for t in requests[0].tools}
        assert calls(events) == [("get_application", "success")]
