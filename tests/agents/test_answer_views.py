"""Answers are the model's grounded lead plus the tools' views, through the real Argo CD agent.

The sandbox over HTTP, the MCP server over stdio, the factory's layers; only the model is
scripted. The scripted model does what the small model did before views: it retypes a page
line and a table, and it invents an application and a count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.context.rewrite import TURN_NOTE
from pilothouse.models.lead import LEAD_INSTRUCTION
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.answer_views import WITHHELD
from pilothouse.runtime.events import Answer, ContextNote, Event
from pilothouse.runtime.session import Conversation
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call

DRAFT = ("Showing all 57 items\n| name | health |\n|---|---|\n| made-up-app | Degraded |\n"
         "57 applications are Degraded. billing-ledger-production is the worst, with 93 "
         "failing pods.")


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=819) as running:
        yield running


async def answer_degraded(argocd_settings: Callable[..., Settings],
                          scripted_setup: Callable[..., ModelSetup],
                          **env: str) -> list[Event]:
    settings = argocd_settings(**env)
    setup = scripted_setup([tool_call("list_applications", health_status="Degraded"), DRAFT],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        return [e async for e in Conversation(graph, "views").ask("degraded apps?")]


async def test_the_answer_is_the_grounded_lead_then_the_view_verbatim(
    argocd_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    events = await answer_degraded(argocd_settings, scripted_setup)

    [answer] = [e.text for e in events if isinstance(e, Answer)]
    lead, view = answer.split("\n\n", 1)
    # The retyped table and page line are gone; the invented app and count with them.
    assert lead == "57 applications are Degraded."
    assert view.startswith("PAGE 1 of 3 (57 applications where health_status=Degraded). "
                           "Ask for page 2 for more.")
    assert "made-up-app" not in answer and "billing-ledger-production" not in answer
    [note] = [e.action for e in events if isinstance(e, ContextNote)
              and e.action.action == "grounding"]
    assert note.numbers == {"claims": 2} and "billing-ledger-production" in note.detail


async def test_with_views_and_grounding_off_the_draft_is_the_answer(
    argocd_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    events = await answer_degraded(argocd_settings, scripted_setup,
                                   PILOTHOUSE_DISABLE_LAYERS="views,grounding")

    assert [e.text for e in events if isinstance(e, Answer)] == [DRAFT]
    assert not [e for e in events if isinstance(e, ContextNote)
                and e.action.action == "grounding"]


async def test_every_model_call_of_a_turn_starts_with_the_same_system_prompt_and_tools(
    argocd_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    # The local model re-reads everything after the first changed token; the system prompt and
    # tool schemas head every prompt, so the layers' per-call additions must come after them.
    settings = argocd_settings()
    setup = scripted_setup([tool_call("list_applications", health_status="Degraded"), DRAFT],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = [e async for e in Conversation(graph, "cache").ask("degraded apps?")]

    assert [e for e in events if isinstance(e, Answer)]
    first, after_results = setup.chat_model.requests  # type: ignore[attr-defined]
    assert first.messages[0] == after_results.messages[0]
    assert first.tools == after_results.tools
    # The few-shot examples went after the question, on the first call only.
    question = str(first.messages[-1].content)
    assert question.startswith("degraded apps?" + TURN_NOTE + "Similar requests")
    assert "Similar requests" not in str(first.messages[0].content)
    assert str(after_results.messages[1].content) == "degraded apps?"
    # The lead instruction follows the newest result, where the prompt changes anyway.
    assert str(after_results.messages[-1].content).endswith(TURN_NOTE + LEAD_INSTRUCTION)
    assert LEAD_INSTRUCTION not in str(first.messages[0].content)


async def test_a_lead_cut_off_by_the_token_limit_ends_at_its_last_whole_sentence(
    argocd_settings: Callable[..., Settings],
    scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = argocd_settings()
    cut = AIMessage("57 applications are Degraded. Look at the first one's events and",
                    response_metadata={"finish_reason": "length"})
    whole = "57 applications are Degraded. Look at the first one's events and"
    setup = scripted_setup([tool_call("list_applications", health_status="Degraded"), cut,
                            tool_call("list_applications", health_status="Degraded"), whole],
                           window=32_000, settings=settings)
    async with open_argocd_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        answers = [next(e.text for e in await collect(graph, "degraded apps?", thread)
                    if isinstance(e, Answer)).split("\n\n", 1)[0]
                   for thread in ("cut", "whole")]

    # Only a lead the limit cut loses its fragment; one the model ended is left as it is.
    assert answers == ["57 applications are Degraded.", whole]


async def collect(graph: Any, question: str, thread: str) -> list[Event]:
    return [e async for e in Conversation(graph, thread).ask(question)]


async def test_a_table_or_page_line_typed_without_a_tool_result_is_dropped(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # The local supervisor, asked for "page 2" without calling its agent, retyped page 1.
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS="grounding")
    retyped = ("Here is page 2.\n\nPAGE 2 of 41 (819 applications).\n\n| name | health |\n"
               "|---|---|\n| made-up-app | Healthy |")
    setup = scripted_setup([retyped, "| name |\n|---|\n| made-up-app |"])
    graph = AgentFactory(settings, setup, InMemorySaver()).build(
        Toolkit(name="argocd", prompt="")).graph

    answers = [next(e.text for e in await collect(graph, question, "typed")
                    if isinstance(e, Answer)) for question in ("show page 2", "and page 3")]

    assert answers == ["Here is page 2.", WITHHELD]
