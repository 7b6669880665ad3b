"""Context intelligence in a running agent: prioritization keeps the facts a late question needs,
correlation links a follow-up to the result it refers to, expansion adds named code."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.context.intelligence import ExpansionMiddleware
from pilothouse.context.rewrite import TURN_NOTE
from pilothouse.context.summarizer import Summarizer
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import ContextNote, Event, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call

FACT = "ImagePullBackOff: registry.acme.io/payments:v2.3.1 not found"
FIRST = "Why is payments-api degraded?"
LAST = "Remind me, what image error did payments-api have?"


@tool
def get_application(name: str) -> str:
    """One application's status."""
    return json.dumps({"name": name, "health": "Degraded", "conditions": [FACT]})


@tool
def list_applications(page: int = 1) -> str:
    """A page of applications."""
    return json.dumps({"items": [{"name": f"svc-{page}-{i}", "health": "Healthy",
                                  "project": "web"} for i in range(60)]})


def step(messages: list[BaseMessage]) -> Any:
    last = messages[-1]
    if isinstance(last, HumanMessage):
        text = str(last.content)
        if text == FIRST:
            return tool_call("get_application", name="payments-api")
        if text.startswith("List page"):
            return tool_call("list_applications", page=int(text.rsplit(" ", 1)[-1]))
        return "Answering from context."
    assert isinstance(last, ToolMessage)
    return "Noted."


async def run(setup: ModelSetup, settings: Settings, **kwargs: Any) -> list[Event]:
    summarizer = Summarizer(ScriptedChatModel.from_steps([], default="Several pages listed."),
                            timeout=5, max_input_chars=8000)
    graph = build_agent(settings, setup, tools=[get_application, list_applications],
                        summarizer=summarizer, checkpointer=InMemorySaver(), **kwargs)
    conversation = Conversation(graph, "intelligence")
    questions = [FIRST, *(f"List page {n}" for n in range(1, 13)), LAST]
    events: list[Event] = []
    for question in questions:
        events.extend([e async for e in conversation.ask(question)])
    return events


def final_request_text(setup: ModelSetup) -> str:
    request = setup.chat_model.requests[-1]  # type: ignore[attr-defined]
    return "\n".join(str(m.content) for m in request.messages)


async def test_prioritization_keeps_the_fact_the_last_question_needs(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS="8192")
    setup = scripted_setup([], window=8192, default=step, settings=settings)
    events = await run(setup, settings)
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert any(e.action.action == "summarized" for e in events if isinstance(e, ContextNote))
    assert FACT in final_request_text(setup)


async def test_without_prioritization_the_fact_is_summarized_away(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    """The control: recency alone drops the turn-1 result in the same session."""
    settings = make_settings(MAX_CONTEXT_TOKENS="8192",
                             PILOTHOUSE_DISABLE_LAYERS="prioritization")
    setup = scripted_setup([], window=8192, default=step, settings=settings)
    await run(setup, settings)
    assert FACT not in final_request_text(setup)


async def test_follow_up_is_linked_to_the_result_it_refers_to(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS="8192")
    setup = scripted_setup([], window=8192, default=step, settings=settings)
    events = await run(setup, settings)
    notes = [e.action.detail for e in events
             if isinstance(e, ContextNote) and e.action.action == "correlated"]
    assert any("get_application" in n and "payments-api" in n for n in notes)
    # The note follows the question, so the system prompt (and the model's cache of it) stays.
    system, *_, question = setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
    assert str(question.content).startswith(LAST + TURN_NOTE)
    assert "follows up on the earlier get_application result" in str(question.content)
    assert "follows up" not in str(system.content)


@dataclass
class FoundSnippet:
    path: str
    start_line: int
    end_line: int
    text: str


async def test_expansion_adds_the_code_a_question_names(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    looked_up: list[str] = []

    async def lookup(question: str) -> Sequence[FoundSnippet]:
        looked_up.append(question)
        if "build_agent" not in question:
            return []
        return [FoundSnippet("src/pilothouse/runtime/builder.py", 90, 96,
                             "def build_agent(settings, model, *, tools=()): ...")]

    setup = scripted_setup(["It builds the agent."])
    graph = build_agent(make_settings(), setup, checkpointer=InMemorySaver(),
                        extra_middleware=[ExpansionMiddleware(lookup)])
    events = [e async for e in Conversation(graph, "expand").ask("What does build_agent do?")]

    assert looked_up == ["What does build_agent do?"]
    assert any(e.action.action == "expanded" for e in events if isinstance(e, ContextNote))
    question = setup.chat_model.requests[0].messages[-1]  # type: ignore[attr-defined]
    assert "src/pilothouse/runtime/builder.py:90-96" in str(question.content)
