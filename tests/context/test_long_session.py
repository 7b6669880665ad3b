"""A 60-turn session with 50-200 KB tool outputs against an 8K-window model stays in budget."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.context.summarizer import Summarizer
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer, ContextNote, Event, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call

WINDOW = 8192


@tool
def list_applications(page: int = 1) -> str:
    """List Argo CD applications (returns a very large page on purpose)."""
    rng = random.Random(page)
    size = rng.randint(50_000, 200_000)
    items, total = [], 0
    while total < size:
        item = {"name": f"app-{page}-{len(items)}", "project": "payments",
                "health": rng.choice(["Healthy", "Degraded"]), "sync": "Synced",
                "repo": "https://git.example.com/platform/apps.git", "path": "charts/app"}
        total += len(json.dumps(item))
        items.append(item)
    return json.dumps({"items": items, "total": len(items)})


def agent_step(messages: list[BaseMessage]) -> AIMessage | str:
    """Call the tool for each new question, then answer from its result."""
    last = messages[-1]
    if isinstance(last, HumanMessage):
        turn = int(str(last.content).rsplit(" ", 1)[-1])
        return tool_call("list_applications", page=turn)
    assert isinstance(last, ToolMessage)
    return f"Page listed ({len(str(last.content))} characters kept)."


async def run_session(setup: ModelSetup, settings: Settings, turns: int) -> list[list[Event]]:
    summarizer = Summarizer(
        ScriptedChatModel.from_steps([], default="The user listed many application pages."),
        timeout=5, max_input_chars=12_000,
    )
    graph = build_agent(settings, setup, tools=[list_applications],
                        system_prompt="You answer questions about Argo CD applications.",
                        checkpointer=InMemorySaver(), summarizer=summarizer)
    conversation = Conversation(graph, "long-session")
    transcript = []
    for turn in range(1, turns + 1):
        transcript.append([e async for e in conversation.ask(f"Show me page {turn}")])
    return transcript


async def test_sixty_turns_never_exceed_the_window(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings(MAX_CONTEXT_TOKENS=str(WINDOW))
    setup = scripted_setup([], window=WINDOW, default=agent_step, settings=settings)
    transcript = await run_session(setup, settings, turns=60)

    errors = [e for turn in transcript for e in turn if isinstance(e, TurnFailed)]
    assert errors == []
    requests = setup.chat_model.requests  # type: ignore[attr-defined]
    assert len(requests) == 120
    reserved = min(settings.max_output_tokens, WINDOW // 4)
    assert max(r.tokens for r in requests) <= WINDOW - reserved
    answers = [e for turn in transcript for e in turn if isinstance(e, Answer)]
    assert len(answers) == 60
    actions: dict[str, Any] = {}
    for turn in transcript:
        for event in turn:
            if isinstance(event, ContextNote):
                actions[event.action.action] = actions.get(event.action.action, 0) + 1
    # Every oversized output was held, and the history was summarized, not just deleted.
    assert actions.get("truncated", 0) + actions.get("refused_output", 0) == 60
    assert actions.get("summarized", 0) >= 3
    assert "deleted" not in actions


async def test_without_the_layers_the_same_session_overflows(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    """The control: the same session with the layers off breaks within a few turns."""
    settings = make_settings(
        MAX_CONTEXT_TOKENS=str(WINDOW),
        PILOTHOUSE_DISABLE_LAYERS="preflight,tool_output_guard,overflow_recovery",
    )
    setup = scripted_setup([], window=WINDOW, default=agent_step, settings=settings)
    transcript = await run_session(setup, settings, turns=3)
    errors = [e for turn in transcript for e in turn if isinstance(e, TurnFailed)]
    assert errors, "an 8K model cannot take a 50 KB tool output unguarded"
    assert "window" in errors[0].message or "fit" in errors[0].message
