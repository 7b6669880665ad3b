"""Data specialists must call a tool on the first model call of each turn, and answer after an
answering tool's result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from langchain_core.tools import ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.config import Settings
from pilothouse.models.local_toolcalls import REASON_FIRST
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call


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
                        checkpointer=InMemorySaver(), extra_middleware=[ToolChoiceMiddleware()])
    conversation = Conversation(graph, "tool-first")
    for question in ("List apps", "And page 2?"):
        [e async for e in conversation.ask(question)]
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert choices == ["required", None, "required", None]


@tool(response_format="content_and_artifact")
def list_pull_requests(repo: str) -> tuple[str, dict[str, Any]]:
    """Open pull requests of a repository."""
    if repo == "missing":
        raise ToolException("No repository named 'missing'. Check the name with list_repos.")
    found = [{"number": 7}] if repo == "api" else []
    return (f"Showing all {len(found)} pull requests.",
            {"items": found, "pagination": {"total_items": len(found)}})


@tool
def get_pull_request(number: int) -> str:
    """One pull request."""
    return '{"number": 7, "state": "open"}'


async def test_after_an_answering_tools_result_the_model_answers_after_others_it_chooses(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    list_pull_requests.handle_tool_error = True
    setup = scripted_setup([
        tool_call("list_pull_requests", repo="api"), "One open PR.",
        tool_call("list_pull_requests", repo="empty"), tool_call("list_pull_requests",
                                                                 repo="missing"),
        tool_call("get_pull_request", number=7), "PR 7 is open."])
    graph = build_agent(make_settings(), setup, tools=[list_pull_requests, get_pull_request],
                        checkpointer=InMemorySaver(),
                        extra_middleware=[ToolChoiceMiddleware({"list_pull_requests"})])
    conversation = Conversation(graph, "answering")
    for question in ("Open PRs of api?", "And of empty?"):
        [e async for e in conversation.ask(question)]
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    # A page with rows answers; an empty page, an error and another tool's result leave the
    # choice to the model (it may correct its call, or look further).
    assert choices == ["required", "none", "required", None, None, None]


class ReasoningScriptedModel(ScriptedChatModel):
    """A scripted model that, like the local one, takes the reason-first setting."""

    reasons_before_calls: ClassVar[bool] = True


async def test_a_first_call_is_asked_to_reason_only_of_a_model_that_can(
    make_settings: Callable[..., Settings]
) -> None:
    settings = make_settings()
    requests = []
    for model_class in (ReasoningScriptedModel, ScriptedChatModel):
        model = model_class.from_steps([tool_call("list_applications"), "None.",
                                        tool_call("list_applications", page=2), "Still none."])
        graph = build_agent(settings, setup_model(settings, chat_model=model),
                            tools=[list_applications], checkpointer=InMemorySaver(),
                            extra_middleware=[ToolChoiceMiddleware(reason_first="Found by ")])
        conversation = Conversation(graph, model_class.__name__)
        for question in ("List apps", "And page 2?"):
            [e async for e in conversation.ask(question)]
        requests.append([r.settings.get(REASON_FIRST) for r in model.requests])
    # The first call of each turn, and only of the model that takes the setting (another
    # provider would reject an argument it does not know).
    assert requests == [["Found by ", None, "Found by ", None], [None] * 4]
