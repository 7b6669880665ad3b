"""An internal failure reaches an A2A caller as a reference, never as SQL or a stack trace.

The failure is real: another SQLite connection holds the task database's write lock, so the
SDK's task store cannot save. The caller (plain JSON-RPC over HTTP) gets a generic error with a
reference; the log has the whole error under the same reference.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a_harness import ServeAgents
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.a2a.store import task_database_url
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup

LEAKS = ("sqlite", "SQL", "Traceback", "INSERT", "a2a_tasks", ".py")


def rpc(method: str, text: str) -> dict[str, Any]:
    message = {"role": "ROLE_USER", "messageId": uuid.uuid4().hex, "contextId": "c-locked",
               "parts": [{"text": text}]}
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}}


async def test_a_locked_task_database_gives_the_caller_a_reference_not_sql(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings], caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings()
    factory = AgentFactory(settings, scripted_setup(["hello"], default="hello"), InMemorySaver())
    agent = factory.build(Toolkit(name="argocd", prompt=""), "Argo CD agent for tests.")
    headers = {"A2A-Version": "1.0"}
    async with serve_agents(agent, settings=settings) as (url, _), \
            httpx.AsyncClient(timeout=60) as http:
        path = Path(task_database_url(settings).split(":///", 1)[1])
        locker = sqlite3.connect(path, timeout=0, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")  # a real lock, held as a stuck writer would
        try:
            with caplog.at_level(logging.ERROR, logger="pilothouse.a2a"):
                sent = await http.post(f"{url}/a2a/argocd/", headers=headers,
                                       json=rpc("SendMessage", "hi"))
                streamed = await http.post(f"{url}/a2a/argocd/", headers=headers,
                                           json=rpc("SendStreamingMessage", "hi"))
        finally:
            locker.execute("ROLLBACK")
            locker.close()
        after = await http.post(f"{url}/a2a/argocd/", headers=headers,
                                json=rpc("SendMessage", "hi again"))

    error = sent.json()["error"]
    assert error["code"] == -32603
    for text in (sent.text, streamed.text):
        assert "failed to handle this request (reference " in text
        assert not [leak for leak in LEAKS if leak in text], text
    references = re.findall(r"reference ([0-9a-f]{12})", sent.text + streamed.text)
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert references and all(ref in logged for ref in references)
    assert "database is locked" in "\n".join(str(r.exc_info[1]) for r in caplog.records
                                             if r.exc_info)
    # The lock gone, the same agent answers again.
    assert json.loads(after.text)["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


def test_a_run_failing_in_the_store_is_described_without_sql(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from pilothouse.runtime.errors import describe_failure

    path = tmp_path / "store.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE checkpoints (id TEXT)")
    holder.execute("BEGIN EXCLUSIVE")
    writer = sqlite3.connect(path, timeout=0)
    with pytest.raises(sqlite3.OperationalError) as failure:
        writer.execute("INSERT INTO checkpoints VALUES ('secret-thread')")
    holder.close()
    writer.close()

    with caplog.at_level(logging.ERROR, logger="pilothouse.runtime"):
        described = describe_failure(failure.value)
    shown = f"{described.message} {described.hint}"
    assert "conversation store failed (reference " in shown
    assert not [leak for leak in (*LEAKS, "secret-thread", "locked") if leak in shown]
    [reference] = re.findall(r"reference ([0-9a-f]{12})", shown)
    assert any(reference in r.getMessage() and r.exc_info for r in caplog.records)
