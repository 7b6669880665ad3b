"""The supervisor answers what no configured agent covers itself: one model call, no sub-agent.

The question's words decide nothing here: which agents are configured is the topology's, and the
choice between an agent and the direct answer is the (scripted) model's. What code guarantees is
the menu (the direct answer beside the configured agents, a choice the model must make), the
hint that names the agent that would give live facts and its setting, and that the answer is
passed on without a second model call.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.direct_answer import DIRECT, MAX_ANSWER_CHARS, whole_sentences
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.registry import Topology
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, Event, ToolCalled
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent
from pilothouse.testing.scripted_model import tool_call

QUESTION = "In one short sentence: what is Argo CD?"
SENTENCE = "Argo CD is a declarative GitOps continuous delivery tool for Kubernetes."
ONLY_DEVOPS = Topology(configured=frozenset({"devops"}))


def devops_agent(settings: Settings, setup: ModelSetup) -> InProcessSubAgent:
    """A DevOps sub-agent whose model has no script: asking it at all fails the turn."""
    graph = AgentFactory(settings, setup, InMemorySaver()).build(
        Toolkit(name="devops", prompt="")).graph
    return InProcessSubAgent("devops", "DevOps: shell commands and the codebase.", graph)


def requests(setup: ModelSetup) -> list[Any]:
    return list(setup.chat_model.requests)  # type: ignore[attr-defined]


async def ask(settings: Settings, setup: ModelSetup, agent: InProcessSubAgent,
              question: str, topology: Topology = ONLY_DEVOPS) -> list[Event]:
    supervisor = AgentFactory(settings, setup, InMemorySaver(),
                              topology=topology).supervisor_over([agent])
    return [e async for e in Conversation(supervisor.graph, "direct-1").ask(question)]


async def test_a_question_for_an_agent_not_configured_is_answered_in_one_model_call(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    devops_setup = scripted_setup([])
    setup = scripted_setup([tool_call(DIRECT, about="Argo CD", answer=SENTENCE)])

    events = await ask(settings, setup, devops_agent(settings, devops_setup), QUESTION)

    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert answer.startswith(SENTENCE)
    assert "Live facts from your own Argo CD would come from the argocd agent, which is not " \
        "configured here" in answer
    assert "set ARGOCD_URL and ARGOCD_TOKEN" in answer
    # One model call; the DevOps agent was neither asked nor did its model run.
    [request] = requests(setup)
    assert [e.name for e in events if isinstance(e, ToolCalled)] == [DIRECT]
    assert requests(devops_setup) == []
    # That call had to choose, from the configured agent and the direct answer...
    assert request.tool_choice == "required"
    menu = {t["function"]["name"]: t["function"] for t in request.tools}
    assert list(menu) == [DIRECT, "ask_devops"]
    assert "Not for general knowledge, nor questions about Argo CD or GitHub" in menu[
        "ask_devops"]["description"]
    # ...whose closed set is the domains of the agents not configured here (the prompt lists
    # them), in the words a question uses.
    assert list(menu[DIRECT]["parameters"]["properties"]) == ["about", "answer"]
    assert menu[DIRECT]["parameters"]["properties"]["about"]["enum"] == [
        "Argo CD", "GitHub", "none"]
    system = next(m for m in request.messages if isinstance(m, SystemMessage))
    assert "Not configured here" in str(system.content) and "- argocd: Argo CD" in str(
        system.content)
    # The answer is bounded: a small model's free text in a JSON string can run on.
    assert menu[DIRECT]["parameters"]["properties"]["answer"]["maxLength"] == MAX_ANSWER_CHARS


async def test_general_knowledge_gets_no_configuration_hint(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    setup = scripted_setup([tool_call(DIRECT, answer="GitOps keeps desired state in git.",
                                      about="none")])

    events = await ask(settings, setup, devops_agent(settings, scripted_setup([])),
                       "What is GitOps, in a sentence?")

    assert [e.text for e in events if isinstance(e, Answer)] == [
        "GitOps keeps desired state in git."]
    assert len(requests(setup)) == 1


async def test_with_every_agent_configured_the_direct_answer_names_none(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    everything = Topology(configured=frozenset({"argocd", "github", "devops"}))
    setup = scripted_setup([tool_call(DIRECT, answer="Hello.")])

    await ask(settings, setup, devops_agent(settings, scripted_setup([])), "hello", everything)

    [request] = requests(setup)
    direct = next(t["function"] for t in request.tools if t["function"]["name"] == DIRECT)
    assert list(direct["parameters"]["properties"]) == ["answer"]
    system = next(m for m in request.messages if isinstance(m, SystemMessage))
    assert "Not configured here" not in str(system.content)


async def test_a_question_naming_a_resource_is_never_answered_from_memory(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    tmp_path: Path,
) -> None:
    # What a name is, the inventory says: here an identifier of the workspace's code.
    (tmp_path / "limits.py").write_text("BASKET_CEILING = 40\n")
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS="grounding",
                             PILOTHOUSE_WORKSPACE=str(tmp_path))
    devops_setup = scripted_setup(["devops answered."])
    setup = scripted_setup([tool_call(DIRECT, answer="It is 40, I believe.")])

    events = await ask(settings, setup, devops_agent(settings, devops_setup),
                       "Is BASKET_CEILING too low?")

    assert requests(setup) == []  # the supervisor's model is not asked to choose
    assert [e.text for e in events if isinstance(e, Answer)] == ["devops answered."]


def test_an_answer_cut_by_its_bound_ends_at_its_last_whole_sentence() -> None:
    first = "Argo CD syncs Kubernetes clusters to manifests in git. "
    cut = (first + "It compares the live state with the desired state and " * 20)[
        :MAX_ANSWER_CHARS]
    assert whole_sentences(cut) == first.strip()
    assert whole_sentences("Short and whole.") == "Short and whole."
    bounded = ("x" * (MAX_ANSWER_CHARS - 1)) + "."
    assert whole_sentences(bounded) == bounded  # a whole sentence at the bound stays


async def test_a_question_about_this_conversation_is_answered_from_it(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS="grounding")
    setup = scripted_setup([tool_call(DIRECT, answer="Noted: ticket 4471."),
                            tool_call(DIRECT, answer="You opened 4471."),
                            tool_call(DIRECT, answer="You opened 4471.")])
    supervisor = AgentFactory(settings, setup, InMemorySaver(), topology=ONLY_DEVOPS
                              ).supervisor_over([devops_agent(settings, scripted_setup([]))])
    conversation = Conversation(supervisor.graph, "recall-1")

    [e async for e in conversation.ask("I am working on ticket 4471 today.")]
    recall = [e async for e in conversation.ask(
        "Which ticket did I give you at the start of this conversation?")]

    first, second = requests(setup)
    # The first question was the model's to route; one pointing back at this conversation,
    # naming no agent's domain or resource, has only the direct answer to choose.
    assert [t["function"]["name"] for t in first.tools] == [DIRECT, "ask_devops"]
    assert [t["function"]["name"] for t in second.tools] == [DIRECT]
    assert second.tool_choice == "required"
    assert [e.text for e in recall if isinstance(e, Answer)] == ["You opened 4471."]
