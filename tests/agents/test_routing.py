"""Routing hints: the supervisor's first call of a turn is offered the agents the question names."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.subagent import InProcessSubAgent
from pilothouse.agents.routing import DOMAIN_WORDS, DomainRouter
from pilothouse.agents.supervisor import build_supervisor
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call


def test_a_question_names_the_agents_of_its_domain_words() -> None:
    router = DomainRouter(DOMAIN_WORDS)
    assert router.agents_for("Show me production applications") == ["argocd"]
    assert router.agents_for("Which PRs in infra-live wait for review?") == ["github"]
    assert router.agents_for("Explain the auth module of this codebase") == ["devops"]
    assert router.agents_for("Is payments-api Degraded, and is its CI workflow failing?") == [
        "argocd", "github"]
    assert router.agents_for("hello there") == []
    # Whole words only: "approval" is not "app", "print" is not "pr".
    assert router.agents_for("print the approval rules") == []


async def test_the_first_call_sees_only_the_named_agents_and_later_calls_see_all(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    agents = [InProcessSubAgent(name, f"{name}.", build_agent(
        settings, scripted_setup([f"{name} answered."]), name=name, checkpointer=InMemorySaver()))
        for name in ("argocd", "github", "devops")]
    setup = scripted_setup([tool_call("ask_github", question="PRs waiting for review?"),
                            "Two PRs wait.", AIMessage(content="Hello! Ask me about your apps.")])
    supervisor = build_supervisor(settings, setup, agents, checkpointer=InMemorySaver())
    conversation = Conversation(supervisor.graph, "r-1")

    [e async for e in conversation.ask("Which PRs wait for review?")]
    [e async for e in conversation.ask("hello there")]

    offered = [[t["function"]["name"] for t in r.tools]
               for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    everyone = ["ask_argocd", "ask_github", "ask_devops"]
    assert offered == [["ask_github"], everyone, everyone]
    # The first call of each turn must call a tool: the supervisor knows nothing itself.
    choices = [r.tool_choice for r in setup.chat_model.requests]  # type: ignore[attr-defined]
    assert choices[0] == "required" and choices[2] == "required"
