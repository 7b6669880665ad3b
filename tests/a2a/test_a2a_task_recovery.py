"""A task a crash left WORKING is FAILED, with the reason, once the server is back.

A real `pilothouse serve --agent argocd` process, its model (the scripted OpenAI-compatible
server) stalling mid-turn, SIGKILL, a restart on the same home: nothing may stay WORKING.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.types.a2a_pb2 import ListTasksRequest, TaskState
from a2a_harness import a2a_client, get_task, stream
from serve_processes import ServeProcess

from pilothouse.a2a.store import INTERRUPTED_REASON
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

SCRIPT: dict[str, Any] = {"rules": [
    # Long enough to be killed in; short enough that the model server's thread ends promptly.
    {"name": "stall", "when": {"last_contains": "STALL"}, "reply": {"content": "late",
                                                                     "delay": 8}},
], "default": {"content": "Answered."}}


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


async def test_a_task_killed_mid_turn_is_failed_with_the_reason_after_a_restart(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
) -> None:
    url, state = model
    env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": url,
           "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_HOME": str(tmp_path / "home"),
           "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
           "PILOTHOUSE_LOG_LEVEL": "INFO"}
    first = ServeProcess(["argocd"], env, tmp_path / "first.log")
    second = ServeProcess(["argocd"], env, tmp_path / "second.log", port=first.port)
    try:
        await first.start().ready()
        async with a2a_client(first.agent_url("argocd")) as client:
            asking = asyncio.create_task(stream(client, "STALL please"))
            await asyncio.to_thread(state.wait_for, "stall", len(state.hits("stall")) + 1)
            first.kill()  # mid-turn: the model call is in flight, the task WORKING
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asking, 30)  # the stream breaks with the process
        await second.start().ready()
        async with a2a_client(second.agent_url("argocd")) as client:
            listed = await client.list_tasks(ListTasksRequest())
            [task] = listed.tasks
            fetched = await get_task(client, task.id)
            answered = await stream(client, "and now?")
        log = second.log_text()
    finally:
        first.kill()
        second.stop()

    assert fetched.status.state == TaskState.TASK_STATE_FAILED
    assert INTERRUPTED_REASON in "".join(p.text for p in fetched.status.message.parts)
    assert [m.parts[0].text for m in fetched.history][:1] == ["STALL please"]
    assert all(t.status.state not in (TaskState.TASK_STATE_WORKING,
                                      TaskState.TASK_STATE_SUBMITTED) for t in listed.tasks)
    assert "Marked 1 task(s) of the argocd agent failed" in log and task.id in log
    # The restarted server serves new work normally.
    assert any(e.HasField("status_update") and e.status_update.status.state
               == TaskState.TASK_STATE_COMPLETED for e in answered)
