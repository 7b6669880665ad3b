"""What an `ask_<agent>` result means is read from its artifact, not from its wording.

The supervisor's tool says "needs another approval" to the model in words; the layers
(passing a single answer on without a model call) read the result's `AskResult` artifact.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, ApprovalRequest, Event
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent
from pilothouse.testing.scripted_model import tool_call

GATE = {"restart_app": InterruptOnConfig(allowed_decisions=["approve", "reject"],
                                         description="Restart this application?")}

#: The sub-agents here answer from a script without tools, so nothing could ground their
#: names; the grounding check has its own tests (tests/runtime/test_answer_views.py).
UNGROUNDED = "grounding"


@tool
def restart_app(name: str) -> str:
    """Restart an application."""
    return f"{name} restarted"


async def collect(events: Any) -> list[Event]:
    return [e async for e in events]


def argocd_agent(settings: Settings, setup: ModelSetup, **kwargs: Any) -> InProcessSubAgent:
    toolkit = Toolkit(name="argocd", prompt="", **kwargs)
    graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
    return InProcessSubAgent("argocd", "Argo CD.", graph)


async def test_a_second_approval_goes_to_the_model_which_puts_it_to_the_user(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    argocd_setup = scripted_setup([tool_call("restart_app", name="payments-api"),
                                   tool_call("restart_app", name="billing-api"),
                                   "Both restarted."])
    agent = argocd_agent(settings, argocd_setup, tools=[restart_app], approvals=GATE)
    setup = scripted_setup([tool_call("ask_argocd", question="restart payments and billing"),
                            tool_call("ask_argocd", question="restart billing-api too"),
                            "payments-api and billing-api were restarted."])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over([agent])
    conversation = Conversation(supervisor.graph, "two-approvals")

    first = await collect(conversation.ask("restart payments-api and billing-api"))
    second = await collect(conversation.decide({"type": "approve"}))
    third = await collect(conversation.decide({"type": "approve"}))

    assert [type(e) for e in first if isinstance(e, ApprovalRequest | Answer)] == [
        ApprovalRequest]
    # Not passed on as the answer: the model asked again, and the user saw the second request.
    assert [type(e) for e in second if isinstance(e, ApprovalRequest | Answer)] == [
        ApprovalRequest]
    # The supervisor's lead, then the agent's answer: its lead and its two results' views.
    assert [e.text for e in third if isinstance(e, Answer)] == [
        "payments-api and billing-api were restarted.\n\nBoth restarted.\n\n"
        "payments-api restarted\n\nbilling-api restarted"]
    results = [m for m in await conversation.history() if isinstance(m, ToolMessage)]
    assert [m.artifact for m in results] == [
        {"agent": "argocd", "state": "input_required"},
        {"agent": "argocd", "state": "completed"}]


async def test_an_answer_that_merely_mentions_approvals_is_passed_on(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    wording = "No sync needs another approval: payments-api is Synced and Healthy."
    agent = argocd_agent(settings, scripted_setup([wording]))
    setup = scripted_setup(["the supervisor's model should not have been asked"])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over([agent])

    events = await collect(Conversation(supervisor.graph, "mention").ask(
        "is payments-api synced in argocd?"))

    assert [e.text for e in events if isinstance(e, Answer)] == [wording]
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
