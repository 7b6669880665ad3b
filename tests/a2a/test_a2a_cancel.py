"""Cancel, disconnect, closed queues, restarts: the run stops, the conversation stays whole."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import aclosing

import pytest
from a2a.server.events import EventQueueLegacy
from a2a.server.events.event_queue_v2 import EventQueueSource
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    TaskState,
)
from a2a_harness import (
    ServeAgents,
    a2a_client,
    answer_text,
    get_task,
    stream,
    user_message,
    wait_for_state,
)
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.namespaces import ANONYMOUS, a2a_thread
from pilothouse.a2a.publisher import TaskPublisher
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.context.orphans import SYNTHETIC_TAG
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.handle import AgentHandle
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call


def hanging_tool(started: asyncio.Event) -> BaseTool:
    @tool
    async def sync_app(name: str) -> str:
        """Sync an application (slow)."""
        started.set()
        await asyncio.sleep(120)
        return "synced"

    return sync_app


def hanging_agent(settings: Settings, setup: ModelSetup, started: asyncio.Event) -> AgentHandle:
    toolkit = Toolkit(name="argocd", prompt="", tools=[hanging_tool(started)])
    return AgentFactory(settings, setup, InMemorySaver()).build(toolkit,
                                                                "Argo CD agent for tests.")


async def assert_open_call_resolved(agent: AgentHandle, context_id: str) -> None:
    history = await Conversation(agent.graph, a2a_thread(ANONYMOUS, "argocd", context_id)).history()
    assert isinstance(history[-2], AIMessage) and history[-2].tool_calls
    result = history[-1]
    assert isinstance(result, ToolMessage)
    assert result.tool_call_id == history[-2].tool_calls[0]["id"]
    assert result.additional_kwargs["pilothouse"] == SYNTHETIC_TAG


async def test_cancel_stops_the_run_and_resolves_its_open_tool_call(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    started = asyncio.Event()
    setup = scripted_setup([tool_call("sync_app", name="payments-api")], default="never sent")
    agent = hanging_agent(make_settings(), setup, started)
    async with serve_agents(agent) as (url, _), a2a_client(f"{url}/a2a/argocd") as client:
        streaming = asyncio.create_task(stream(client, "sync payments-api", context_id="c-1"))
        await asyncio.wait_for(started.wait(), 10)
        tasks = await client.list_tasks(ListTasksRequest(context_id="c-1"))
        task_id = tasks.tasks[0].id
        cancelled = await client.cancel_task(CancelTaskRequest(id=task_id))
        events = await asyncio.wait_for(streaming, 10)

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert events[0].task.id == task_id
    assert len(setup.chat_model.requests) == 1  # type: ignore[attr-defined]
    await assert_open_call_resolved(agent, "c-1")


async def test_a_client_that_goes_away_cancels_the_run_logged_once(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    started = asyncio.Event()
    setup = scripted_setup([tool_call("sync_app", name="payments-api")], default="never sent")
    agent = hanging_agent(make_settings(), setup, started)
    async with serve_agents(agent) as (url, _):
        async with a2a_client(f"{url}/a2a/argocd") as client:
            request = SendMessageRequest(message=user_message("sync it", context_id="c-2"))
            task_id = ""
            async with aclosing(client.send_message(request)) as events:
                async for event in events:
                    task_id = task_id or event.task.id
                    # The client goes away mid-tool. Waiting for the tool, not for an event
                    # after it: on a slow machine (CI, 2026-12-02) the last event before the
                    # hanging tool came before it started, and the next was its 60 s timeout.
                    await asyncio.wait_for(started.wait(), 10)
                    break
        async with a2a_client(f"{url}/a2a/argocd") as client:
            task = await wait_for_state(client, task_id, TaskState.TASK_STATE_CANCELED)

    assert task.status.state == TaskState.TASK_STATE_CANCELED
    assert len(setup.chat_model.requests) == 1  # type: ignore[attr-defined]
    await assert_open_call_resolved(agent, "c-2")
    gone = [r for r in caplog.records if "went away" in r.getMessage()]
    assert len(gone) == 1 and task_id in gone[0].getMessage()
    assert not [r for r in caplog.records if "Queue is closed" in r.getMessage()
                or "Queue was closed" in r.getMessage()]


@pytest.mark.parametrize("make_queue", [EventQueueSource, EventQueueLegacy])
async def test_a_closed_queue_is_logged_once_per_task_not_per_event(
    make_queue: Callable[[], object], caplog: pytest.LogCaptureFixture,
) -> None:
    queue = make_queue()
    await queue.close(immediate=True)  # type: ignore[attr-defined]
    first = TaskPublisher(queue, "task-1", "ctx", agent="argocd")  # type: ignore[arg-type]
    second = TaskPublisher(queue, "task-2", "ctx", agent="argocd")  # type: ignore[arg-type]

    sent = [await first.token("x" * 200) for _ in range(35)]
    await first.status(TaskState.TASK_STATE_WORKING, "still going")
    await second.answer("late answer")

    assert sent == [False] * 35 and first.closed and second.closed
    closed = [r.getMessage() for r in caplog.records if "queue closed" in r.getMessage()]
    assert len(closed) == 2
    assert "task-1" in closed[0] and "task-2" in closed[1]
    assert not [r for r in caplog.records if r.name.startswith("a2a.")]


async def test_tasks_and_conversations_survive_a_restart(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()

    async def serve_once(steps: list[str], text: str, task_id: str | None = None
                         ) -> tuple[str, str, ModelSetup]:
        setup = scripted_setup(steps)
        async with open_checkpointer(settings) as saver:
            agent = AgentFactory(settings, setup, saver).build(
                Toolkit(name="argocd", prompt=""), "Argo CD agent for tests.")
            async with serve_agents(agent, settings=settings) as (url, _), \
                    a2a_client(f"{url}/a2a/argocd") as client:
                if task_id is not None:
                    return answer_text(await get_task(client, task_id)), "", setup
                events = await stream(client, text, context_id="durable")
                return answer_text(await get_task(client, events[0].task.id)), \
                    events[0].task.id, setup

    first_answer, first_task, _ = await serve_once(["First answer."], "first question")
    stored, _, _ = await serve_once([], "", task_id=first_task)
    second_answer, _, setup = await serve_once(["Second answer."], "second question")

    assert (first_answer, stored, second_answer) == ("First answer.", "First answer.",
                                                     "Second answer.")
    sent = [m.content for m in setup.chat_model.requests[0].messages]  # type: ignore[attr-defined]
    assert sent[-3:] == ["first question", "First answer.", "second question"]
