"""The supervisor over in-process sub-agents: routing, budgets, failures, approvals, repair."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.registry import Topology
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.context.orphans import SYNTHETIC_TAG
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.answer_budget import SHOWN_CHARS
from pilothouse.runtime.events import Answer, ApprovalRequest, ContextNote, Event, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent, subagent_thread
from pilothouse.testing.scripted_model import tool_call

#: The sub-agents here answer from a script without tools, so nothing could ground their
#: names; the grounding check has its own tests (tests/runtime/test_answer_views.py).
UNGROUNDED = "grounding"


def ask_both(argocd: str, github: str) -> AIMessage:
    """One model turn that asks two agents at once (parallel tool calls)."""
    return AIMessage(content="", tool_calls=[
        {"name": "ask_argocd", "args": {"question": argocd}, "id": "call-a", "type": "tool_call"},
        {"name": "ask_github", "args": {"question": github}, "id": "call-g", "type": "tool_call"},
    ])


def combine(messages: Sequence[BaseMessage]) -> str:
    results = [f"[{m.name}:{m.status}] {m.content}" for m in messages if isinstance(m, ToolMessage)]
    return "Combined:\n" + "\n".join(results)


@tool
def list_apps() -> str:
    """List degraded production applications."""
    return "payments-api (production): Degraded"


@tool
def restart_app(name: str) -> str:
    """Restart an application."""
    return f"{name} restarted"


async def collect(events: Any) -> list[Event]:
    return [e async for e in events]


def specialist(settings: Settings, setup: ModelSetup, name: str, **kwargs: Any) -> Any:
    """A specialist's graph from the factory: `kwargs` are its toolkit's (tools, approvals)."""
    toolkit = Toolkit(name=name, prompt="", **kwargs)
    return AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph


async def test_a_question_spanning_two_agents_asks_both_and_combines_their_answers(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    argocd_setup = scripted_setup([tool_call("list_apps"), "payments-api is Degraded."])
    github_setup = scripted_setup(["PR #42 (bump payments-api image) is open."])
    agents = [
        InProcessSubAgent("argocd", "Argo CD.", specialist(settings, argocd_setup, "argocd",
                                                           tools=[list_apps])),
        InProcessSubAgent("github", "GitHub.", specialist(settings, github_setup, "github")),
    ]
    setup = scripted_setup([ask_both("Which production apps are degraded?",
                                     "Open PRs touching payments-api?"), combine])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)

    # No domain word: the model routes (a question naming agents is routed by code,
    # tests/agents/test_routing.py), here to both at once.
    events = await collect(Conversation(supervisor.graph, "s-1").ask(
        "what is broken right now, and is anyone fixing it?"))

    answer = [e.text for e in events if isinstance(e, Answer)][-1]
    assert "[ask_argocd:success] payments-api is Degraded." in answer
    assert "[ask_github:success] PR #42 (bump payments-api image) is open." in answer
    # Each sub-agent got its own question, in its own thread of this conversation.
    assert "Which production apps are degraded?" in str(
        argocd_setup.chat_model.requests[0].messages[-1].content)  # type: ignore[attr-defined]
    assert await Conversation(agents[1].graph, subagent_thread("github", "s-1")).history()
    assert [t.name for t in supervisor.tools] == ["ask_argocd", "ask_github"]


async def test_a_long_sub_agent_answer_is_held_to_the_budget_for_the_model_not_the_person(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    rows = "\n".join(f"| app-{n:03d} | production | OutOfSync | Degraded |" for n in range(60))
    argocd_setup = scripted_setup([f"60 apps are degraded.\n\n{rows}"])
    github_setup = scripted_setup(["PR #42 (bump payments-api image) is open."])
    # The agents type their table here (they have no tools), which their views layer would drop.
    typed = make_settings(PILOTHOUSE_DISABLE_LAYERS=f"{UNGROUNDED},views")
    agents = [
        InProcessSubAgent("argocd", "Argo CD.", specialist(typed, argocd_setup, "argocd")),
        InProcessSubAgent("github", "GitHub.", specialist(typed, github_setup, "github")),
    ]
    setup = scripted_setup([ask_both("degraded apps?", "open PRs?"), "Both agents answered."])
    supervisor = AgentFactory(settings, setup, InMemorySaver(),
                              topology=Topology(answer_tokens=150)).supervisor_over(agents)

    events = await collect(Conversation(supervisor.graph, "s-2").ask(
        "which apps are degraded, and which PRs are open?"))

    # The supervisor's model read the argocd answer cut to the budget...
    read = "\n".join(str(m.content) for m in setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
                     if isinstance(m, ToolMessage))
    assert "cut to 150 of" in read and "app-059" not in read
    # ...the person sees both answers whole: no table cut mid-row, no agent dropped.
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert answer.startswith("Both agents answered.")
    assert rows in answer and "PR #42 (bump payments-api image) is open." in answer
    assert "cut to" not in answer
    # The budget was passed along, so a cooperative agent can stay within it.
    asked = argocd_setup.chat_model.requests[0].messages[-1].content  # type: ignore[attr-defined]
    assert "at most 150 tokens" in str(asked)


async def test_a_flood_from_one_agent_is_shown_cut_at_a_line(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    flood = "payments-api Degraded in production cluster eu-1.\n" * 400
    argocd_setup = scripted_setup([flood])
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(settings, argocd_setup, "argocd"))]
    setup = scripted_setup([combine])
    supervisor = AgentFactory(settings, setup, InMemorySaver(),
                              topology=Topology(answer_tokens=150)).supervisor_over(agents)

    events = await collect(Conversation(supervisor.graph, "s-3").ask("list every app"))

    # The only agent is asked and its answer passed on without a model call, bounded, whole
    # lines only.
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert setup.chat_model.requests == []  # type: ignore[attr-defined]
    body, note = answer.rsplit("\n\n", 1)
    assert len(answer) <= SHOWN_CHARS and body.endswith("eu-1.")
    assert set(body.splitlines()) == {"payments-api Degraded in production cluster eu-1."}
    assert note.startswith("[...") and "the rest of argocd's answer is left out" in note


async def test_a_failing_or_slow_agent_gives_a_partial_answer_not_a_crash(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    hang = asyncio.Event()

    @tool
    async def slow_search() -> str:
        """Search slowly."""
        await hang.wait()
        return "never"

    broken = scripted_setup([RuntimeError("Connection refused by the model server")])
    slow = scripted_setup([tool_call("slow_search")], default="late")
    agents = [
        InProcessSubAgent("argocd", "Argo CD.", specialist(settings, broken, "argocd")),
        InProcessSubAgent("github", "GitHub.", specialist(settings, slow, "github",
                                                          tools=[slow_search]),
                          # Long enough for its model to reach the tool call on a busy
                          # machine: the open call is what this test needs to see repaired.
                          timeout_seconds=2.0),
    ]
    setup = scripted_setup([ask_both("apps?", "prs?"), combine])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)

    events = await collect(Conversation(supervisor.graph, "s-3").ask("anything wrong?"))

    answer = [e.text for e in events if isinstance(e, Answer)][-1]
    assert "[ask_argocd:error] The argocd agent is unavailable: The model provider could not " \
           "be reached" in answer
    assert "[ask_github:error] The github agent is unavailable: it did not answer within " \
           "2 s" in answer
    # The timed-out sub-agent's open tool call was resolved in its own conversation.
    history = await Conversation(agents[1].graph, subagent_thread("github", "s-3")).history()
    assert history[-1].additional_kwargs["pilothouse"] == SYNTHETIC_TAG


async def test_a_sub_agents_approval_is_put_to_the_user_and_its_decision_passed_back(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    gate = {"restart_app": InterruptOnConfig(allowed_decisions=["approve", "reject"],
                                             description="Restart this application?")}
    argocd_setup = scripted_setup([tool_call("restart_app", name="payments-api"),
                                   "payments-api restarted."])
    argocd = specialist(settings, argocd_setup, "argocd", tools=[restart_app], approvals=gate)
    agents = [InProcessSubAgent("argocd", "Argo CD.", argocd)]
    setup = scripted_setup([tool_call("ask_argocd", question="restart payments-api"), combine])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)
    conversation = Conversation(supervisor.graph, "s-4")

    first = await collect(conversation.ask("restart payments-api"))
    [waiting] = [e for e in first if isinstance(e, ApprovalRequest)]
    second = await collect(conversation.decide({"type": "approve"}))

    request = waiting.value
    assert request["name"] == "ask_argocd"
    assert "The argocd agent asks: Restart this application?" in request["description"]
    answer = [e.text for e in second if isinstance(e, Answer)][-1]
    # The agent's tool result is its answer's view; the leads that only restate it are dropped.
    assert answer == "payments-api restarted"
    restarted = [m for m in await Conversation(argocd, subagent_thread("argocd", "s-4")).history()
                 if isinstance(m, ToolMessage)]
    assert restarted[-1].content == "payments-api restarted"


async def test_an_interrupted_supervisor_turn_is_repaired_at_the_next_question(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    hang, listing = asyncio.Event(), asyncio.Event()

    @tool
    async def slow_list() -> str:
        """List slowly."""
        listing.set()
        await hang.wait()
        return "never"

    slow = scripted_setup([tool_call("slow_list")], default="ok")
    agents = [InProcessSubAgent("argocd", "Argo CD.", specialist(settings, slow, "argocd",
                                                                 tools=[slow_list]))]
    # "apps?" names Argo CD: the interrupted call was made without the model.
    setup = scripted_setup(["Answer after repair."])
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)
    conversation = Conversation(supervisor.graph, "s-5")

    turn = asyncio.create_task(collect(conversation.ask("apps?")))
    await asyncio.wait_for(listing.wait(), 10)
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    events = await collect(conversation.ask("what happened?"))

    assert [e.text for e in events if isinstance(e, Answer)] == ["Answer after repair."]
    sent = setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
    repaired = [m for m in sent if isinstance(m, ToolMessage)]
    assert repaired and repaired[0].additional_kwargs["pilothouse"] == SYNTHETIC_TAG


async def test_a_provider_overflow_at_the_supervisor_is_compressed_and_retried(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(PILOTHOUSE_DISABLE_LAYERS=UNGROUNDED)
    agents = [InProcessSubAgent(name, name, specialist(settings, scripted_setup([answer]), name))
              for name, answer in (("argocd", "payments-api is Degraded."),
                                   ("github", "PR #42 is open."))]
    # The provider refuses the prompt although the estimate said it fits (estimates can be
    # wrong); summaries are model calls too, so every later call gets `combine`. Two agents,
    # so the supervisor combines their answers with a model call (one would be passed on).
    refusal = ValueError("Error code: 400 - This model's maximum context length is 8192 "
                         "tokens. (code: context_length_exceeded)")
    setup = scripted_setup([ask_both("apps?", "prs?"), refusal], default=combine)
    supervisor = AgentFactory(settings, setup, InMemorySaver()).supervisor_over(agents)
    conversation = Conversation(supervisor.graph, "s-6")
    for turn in range(3):
        await conversation.graph.aupdate_state(conversation.config, {"messages": [
            HumanMessage(f"earlier question {turn} " + "about the fleet " * 60),
            AIMessage(f"earlier answer {turn} " + "all healthy " * 60)]})

    events = await collect(conversation.ask("which apps are degraded?"))

    assert [e.message for e in events if isinstance(e, TurnFailed)] == []
    assert "payments-api is Degraded." in [e.text for e in events if isinstance(e, Answer)][-1]
    assert "overflow_recovery" in [e.action.layer for e in events if isinstance(e, ContextNote)]
