"""One suite every `SubAgent` passes: the supervisor cannot tell in-process from A2A.

Each test runs twice, against `InProcessSubAgent` (the agent's graph in this process) and
`RemoteSubAgent` (the same agent served over real A2A HTTP on 127.0.0.1), and expects the same
replies, word for word: answers, approvals surfaced and answered, the agent's errors, timeouts,
cancellation, parallel calls, and the answer budget reaching the agent's model. An agent that
is down exists only remotely (tests/a2a/test_remote_subagent.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from a2a_harness import ServeAgents
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.namespaces import ANONYMOUS, a2a_thread
from pilothouse.a2a.remote import RemoteSubAgent, context_id
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.context.orphans import SYNTHETIC_TAG
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.answer_budget import with_answer_budget
from pilothouse.runtime.session import Conversation
from pilothouse.runtime.subagent import InProcessSubAgent, SubAgent, subagent_thread
from pilothouse.testing.scripted_model import ScriptedChatModel, Step, tool_call

GATE = {"restart_app": InterruptOnConfig(allowed_decisions=["approve", "reject"],
                                         description="Restart this application?")}
APPROVAL = 'Restart this application? restart_app({"name": "payments-api"})'


@dataclass
class Subject:
    """A sub-agent under test, the model behind it, and the agent's own view of a thread."""

    agent: SubAgent
    model: ScriptedChatModel
    history: Callable[[str], Any]  # thread id -> awaitable list of the agent's messages

    def questions(self) -> list[str]:
        """The last human message of every request the agent's model received."""
        return [str([m for m in r.messages if isinstance(m, HumanMessage)][-1].content)
                for r in self.model.requests]


@dataclass
class AgentSpec:
    """What the agent under test is: its model script and its tools."""

    steps: Sequence[Step]
    default: Step | None = None
    tools: list[BaseTool] = field(default_factory=list)
    approvals: dict[str, InterruptOnConfig] = field(default_factory=dict)
    timeout_seconds: float = 30.0


MakeSubject = Callable[[AgentSpec], AbstractAsyncContextManager[Subject]]


@pytest.fixture(params=["in_process", "remote"])
def make_subject(request: pytest.FixtureRequest, serve_agents: ServeAgents,
                 scripted_setup: Callable[..., ModelSetup],
                 make_settings: Callable[..., Settings]) -> MakeSubject:
    """The `argocd` agent `spec` describes, as the parametrized `SubAgent` implementation."""

    @asynccontextmanager
    async def make(spec: AgentSpec) -> AsyncIterator[Subject]:
        setup = scripted_setup(spec.steps, default=spec.default)
        model = setup.chat_model
        assert isinstance(model, ScriptedChatModel)
        toolkit = Toolkit(name="argocd", prompt="", tools=spec.tools, approvals=spec.approvals)
        handle = AgentFactory(make_settings(), setup, InMemorySaver()).build(
            toolkit, "Argo CD agent for tests.")
        if request.param == "in_process":
            def own(thread: str) -> Any:
                return Conversation(handle.graph, subagent_thread("argocd", thread)).history()
            local = InProcessSubAgent("argocd", "Argo CD.", handle.graph,
                                      timeout_seconds=spec.timeout_seconds)
            yield Subject(local, model, own)
            await local.aclose()
            return
        async with serve_agents(handle) as (url, _):
            def served(thread: str) -> Any:
                return Conversation(handle.graph, a2a_thread(ANONYMOUS, "argocd",
                                                             context_id(thread))).history()
            remote = RemoteSubAgent("argocd", f"{url}/a2a/argocd",
                                    timeout_seconds=spec.timeout_seconds)
            try:
                yield Subject(remote, model, served)
            finally:
                await remote.aclose()

    return make


@tool
def restart_app(name: str) -> str:
    """Restart an application."""
    return f"{name} restarted"


def hanging_tool(started: asyncio.Event) -> BaseTool:
    @tool
    async def sync_app(name: str) -> str:
        """Sync an application (slow)."""
        started.set()
        await asyncio.Event().wait()  # until cancelled
        return "never"

    return sync_app


def assert_every_call_answered(history: list[BaseMessage]) -> None:
    """Every tool call of the agent's conversation has its result (synthetic ones included)."""
    calls = [c["id"] for m in history if isinstance(m, AIMessage) for c in m.tool_calls]
    results = [m.tool_call_id for m in history if isinstance(m, ToolMessage)]
    assert calls and sorted(calls) == sorted(results)
    last = history[-1]
    assert isinstance(last, ToolMessage) and last.additional_kwargs["pilothouse"] == SYNTHETIC_TAG


def echo(messages: Sequence[BaseMessage]) -> str:
    return f"answer to {messages[-1].content}"


async def test_answers_in_the_conversation_of_its_thread(make_subject: MakeSubject) -> None:
    async with make_subject(AgentSpec([], default=echo)) as subject:
        first = await subject.agent.ask("which apps are degraded?", "t-1")
        again = await subject.agent.ask("and which are healthy?", "t-1")
        other = await subject.agent.ask("list clusters", "t-2")
        assert (first.agent, first.state, first.text) == (
            "argocd", "completed", "answer to which apps are degraded?")
        assert (again.state, again.text) == ("completed", "answer to and which are healthy?")
        assert (other.state, other.text) == ("completed", "answer to list clusters")
        # The same thread continues one conversation; another thread starts its own.
        seen = [[m.content for m in r.messages if isinstance(m, HumanMessage)]
                for r in subject.model.requests]
        assert seen == [["which apps are degraded?"],
                        ["which apps are degraded?", "and which are healthy?"],
                        ["list clusters"]]
        assert await subject.agent.waiting("t-1") is None


async def test_the_answer_budget_reaches_the_agents_model(make_subject: MakeSubject) -> None:
    async with make_subject(AgentSpec([], default="fine")) as subject:
        budgeted = await subject.agent.ask("which apps are degraded?", "t-1", budget_tokens=120)
        free = await subject.agent.ask("list clusters", "t-2")
        assert budgeted.state == free.state == "completed"
        assert subject.questions() == [with_answer_budget("which apps are degraded?", 120),
                                       "list clusters"]
        assert "at most 120 tokens" in subject.questions()[0]


async def test_an_approval_is_surfaced_found_again_and_approved(
    make_subject: MakeSubject,
) -> None:
    spec = AgentSpec([tool_call("restart_app", name="payments-api"), "Restarted."],
                     tools=[restart_app], approvals=GATE)
    async with make_subject(spec) as subject:
        asked = await subject.agent.ask("restart payments-api", "t-1")
        waiting = await subject.agent.waiting("t-1")
        other = await subject.agent.waiting("t-2")
        decided = await subject.agent.decide("t-1", {"type": "approve"})
        after = await subject.agent.waiting("t-1")
        history = await subject.history("t-1")

    assert (asked.state, asked.text) == ("input_required", APPROVAL)
    assert waiting == APPROVAL and other is None
    # The tool's result is the answer; the lead only restated it (runtime.answer_views).
    assert (decided.state, decided.text) == ("completed", "payments-api restarted")
    assert after is None
    (result,) = [m for m in history if isinstance(m, ToolMessage)]
    assert result.content == "payments-api restarted"


async def test_a_rejected_approval_does_not_run_and_the_agent_hears_why(
    make_subject: MakeSubject,
) -> None:
    spec = AgentSpec([tool_call("restart_app", name="payments-api"), "Not restarted."],
                     tools=[restart_app], approvals=GATE)
    async with make_subject(spec) as subject:
        await subject.agent.ask("restart payments-api", "t-1")
        decided = await subject.agent.decide(
            "t-1", {"type": "reject", "message": "not during the release freeze"})
        history = await subject.history("t-1")

    assert (decided.state, decided.text) == ("completed", "Not restarted.")
    (result,) = [m for m in history if isinstance(m, ToolMessage)]
    assert "not during the release freeze" in str(result.content)
    assert result.content != "payments-api restarted"


async def test_deciding_when_nothing_waits_is_a_failed_reply(make_subject: MakeSubject) -> None:
    async with make_subject(AgentSpec([], default="fine")) as subject:
        reply = await subject.agent.decide("t-1", {"type": "approve"})
    assert (reply.state, reply.text) == ("failed",
                                         "The argocd agent is not waiting for an approval.")
    assert subject.model.requests == []


async def test_an_agent_error_is_a_failed_reply_with_what_to_do(
    make_subject: MakeSubject,
) -> None:
    async with make_subject(AgentSpec([], default=ConnectionError("connection refused"))) \
            as subject:
        reply = await subject.agent.ask("which apps are degraded?", "t-1")
        recovered = await subject.agent.decide("t-1", {"type": "approve"})
    assert reply.state == "failed"
    assert reply.text == (
        "The argocd agent is unavailable: The model provider could not be reached "
        "(ConnectionError: connection refused). (Check the network and the provider's base "
        "URL, then ask again.). Its part of the answer is missing; answer the rest and tell "
        "the user to ask again about argocd later.")
    assert recovered.state == "failed"


async def test_a_slow_agent_times_out_its_run_stops_and_it_answers_the_next_question(
    make_subject: MakeSubject,
) -> None:
    started = asyncio.Event()
    spec = AgentSpec([tool_call("sync_app", name="payments-api"), "All synced."],
                     tools=[hanging_tool(started)], timeout_seconds=0.5)
    async with make_subject(spec) as subject:
        reply = await subject.agent.ask("sync payments-api", "t-1")
        history = await subject.history("t-1")
        calls_after_timeout = len(subject.model.requests)
        next_reply = await subject.agent.ask("is it synced?", "t-1")

    assert started.is_set()
    assert reply.state == "failed"
    assert reply.text.startswith("The argocd agent is unavailable: it did not answer within "
                                 "0.5 s.")
    assert_every_call_answered(history)
    assert calls_after_timeout == 1  # the run stopped: no model call after the timeout
    assert (next_reply.state, next_reply.text) == ("completed", "All synced.")


async def test_cancelling_a_call_stops_the_run_and_leaves_no_open_tool_call(
    make_subject: MakeSubject,
) -> None:
    started = asyncio.Event()
    spec = AgentSpec([tool_call("sync_app", name="payments-api"), "All synced."],
                     tools=[hanging_tool(started)])
    async with make_subject(spec) as subject:
        call = asyncio.create_task(subject.agent.ask("sync payments-api", "t-1"))
        await asyncio.wait_for(started.wait(), 10)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        # By the time the cancellation reached the caller, the agent's run has stopped.
        history = await subject.history("t-1")
        calls_after_cancel = len(subject.model.requests)
        next_reply = await subject.agent.ask("is it synced?", "t-1")

    assert_every_call_answered(history)
    assert calls_after_cancel == 1
    assert (next_reply.state, next_reply.text) == ("completed", "All synced.")


async def test_parallel_calls_on_one_thread_take_turns(make_subject: MakeSubject) -> None:
    async with make_subject(AgentSpec([], default=echo)) as subject:
        replies = await asyncio.gather(
            *(subject.agent.ask(f"question {n}", "t-1") for n in range(3)))
        history = await subject.history("t-1")

    assert sorted((r.state, r.text) for r in replies) == [
        ("completed", f"answer to question {n}") for n in range(3)]
    pairs = list(zip(history[::2], history[1::2], strict=True))
    assert len(pairs) == 3
    for question, answer in pairs:  # each answer right after its own question
        assert isinstance(question, HumanMessage) and isinstance(answer, AIMessage)
        assert answer.content == f"answer to {question.content}"
