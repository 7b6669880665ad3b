"""Remote sub-agents over A2A: answers, approvals, timeouts, and agents that come up later."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from typing import Any

from a2a.types.a2a_pb2 import ListTasksRequest, TaskState
from a2a_harness import ServeAgents, a2a_client, wait_for_state
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.remote import RemoteSubAgent, context_id
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.handle import AgentHandle
from pilothouse.testing.scripted_model import tool_call


@tool
def restart_app(name: str) -> str:
    """Restart an application."""
    return f"{name} restarted"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def agent(settings: Settings, setup: ModelSetup, **kwargs: Any) -> AgentHandle:
    toolkit = Toolkit(name="argocd", prompt="", **kwargs)
    return AgentFactory(settings, setup, InMemorySaver()).build(toolkit,
                                                                "Argo CD agent for tests.")


async def test_an_agent_that_is_down_is_reported_then_picked_up_when_it_comes_up(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    port = free_port()
    remote = RemoteSubAgent("argocd", f"http://127.0.0.1:{port}/a2a/argocd")
    try:
        down = await remote.ask("which apps are degraded?", "thread-1", budget_tokens=200)
        # Scripted without tools: nothing could ground its names (grounding has its own tests).
        served = agent(make_settings(PILOTHOUSE_DISABLE_LAYERS="grounding"),
                       scripted_setup(["payments-api is Degraded."]))
        async with serve_agents(served, port=port):
            up = await remote.ask("which apps are degraded?", "thread-1", budget_tokens=200)
    finally:
        await remote.aclose()

    assert down.state == "failed"
    assert down.text.startswith("The argocd agent is unavailable: it cannot be reached at "
                                f"http://127.0.0.1:{port}/a2a/argocd/")
    assert (up.state, up.text) == ("completed", "payments-api is Degraded.")


async def test_an_approval_over_a2a_is_found_by_asking_the_agent_and_answered(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    gate = {"restart_app": InterruptOnConfig(allowed_decisions=["approve", "reject"],
                                             description="Restart this application?")}
    setup = scripted_setup([tool_call("restart_app", name="payments-api"), "Restarted."])
    served = agent(make_settings(), setup, tools=[restart_app], approvals=gate)
    async with serve_agents(served) as (url, _):
        remote = RemoteSubAgent("argocd", f"{url}/a2a/argocd")
        try:
            asked = await remote.ask("restart payments-api", "thread-2")
            # A fresh client (a restarted supervisor) still finds the pending approval.
            fresh = RemoteSubAgent("argocd", f"{url}/a2a/argocd")
            waiting = await fresh.waiting("thread-2")
            decided = await fresh.decide("thread-2", {"type": "approve"})
            await fresh.aclose()
            after = await remote.waiting("thread-2")
        finally:
            await remote.aclose()

    assert asked.state == "input_required" and "Restart this application?" in asked.text
    assert waiting is not None and "restart_app" in waiting
    # The tool's result is the answer; the lead only restated it (runtime.answer_views).
    assert (decided.state, decided.text) == ("completed", "payments-api restarted")
    assert after is None


async def test_a_slow_agent_times_out_and_its_task_is_cancelled_remotely(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    hang = asyncio.Event()

    @tool
    async def slow_list() -> str:
        """List slowly."""
        await hang.wait()
        return "never"

    setup = scripted_setup([tool_call("slow_list")], default="late")
    served = agent(make_settings(), setup, tools=[slow_list])
    async with serve_agents(served) as (url, _):
        remote = RemoteSubAgent("argocd", f"{url}/a2a/argocd", timeout_seconds=1.0)
        try:
            reply = await remote.ask("list apps", "thread-3")
        finally:
            await remote.aclose()
        async with a2a_client(f"{url}/a2a/argocd") as client:
            tasks = await client.list_tasks(ListTasksRequest(context_id=context_id("thread-3")))
            # The remote cancel is asynchronous: on a loaded machine (CI, 2026-12-02) the
            # task was still working when it was first listed.
            [listed] = tasks.tasks
            task = await wait_for_state(client, listed.id, TaskState.TASK_STATE_CANCELED)

    assert reply.state == "failed"
    assert reply.text.startswith("The argocd agent is unavailable: it did not answer within 1 s")
    assert task.status.state == TaskState.TASK_STATE_CANCELED
    assert len(setup.chat_model.requests) == 1  # type: ignore[attr-defined]
