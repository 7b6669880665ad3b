"""Data specialists must call a tool on the first model call of each turn, then may answer."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.tool_first import ToolFirstMiddleware
from pilothouse.testing.scripted_model import tool_call


@tool
def list_applications(page: int = 1) -> str:
    """A page of applications."""
    return '{"items": [], "pagination": {"total_items": 0}}'


async def test_first_call_of_each_turn_requires_a_tool(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    setup = scripted_setup([tool_call("list_applications"), "None.",
                            tool_call("list_applications", page=2), "Still none."])
    graph = build_agent(make_settings(), setup, tools=[list_applications],
                        checkpointer=InMemorySaver(), extra_middleware=[ToolFirstMiddleware()])
    conversation = Conversation(graph, "tool-first")
    for question in ("List apps", "And page 2?"):
        [e async for e in conversation.ask(question)]
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert choices == ["required", None, "required", None]
