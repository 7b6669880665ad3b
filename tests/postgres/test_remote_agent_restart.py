"""The A2A path on PostgreSQL: the Argo CD agent as its own `pilothouse serve` process, killed
mid-task and restarted. The supervisor reports that one call's failure clearly, the next call
works, and the restarted agent fails the task its dead predecessor left working (its runner no
longer holds its liveness lock) without waiting for any lease."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from replicas import ask, events, new_thread, replica

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

pytestmark = pytest.mark.postgres

SCRIPT: dict[str, Any] = {"rules": [
    {"name": "sup-route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "ask_argocd", "arguments": {
         "question": "Which production applications are degraded? ({question})"}}]}},
    {"name": "sup-combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
     "reply": {"content": "Argo CD said: {last}"}},
    {"name": "argo-list", "when": {"tools_include": "list_applications", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "list_applications", "arguments": {
         "health_status": "Degraded", "selector": "env=production", "page_size": 5}}]}},
    {"name": "argo-slow", "when": {"tools_include": "list_applications", "last_role": "tool",
                                   "any_contains": "SLOW"},
     "reply": {"content": "ARGOCD (slowly): " + "degraded " * 100, "chunk_delay": 0.1}},
    {"name": "argo-answer", "when": {"tools_include": "list_applications", "last_role": "tool"},
     "reply": {"content": "ARGOCD: {last}"}},
], "default": {"content": "No scripted answer."}}


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=50) as sandbox:
        yield sandbox


def task_states(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute("SELECT status->>'state' FROM a2a_tasks_argocd "
                                  "ORDER BY last_updated").fetchall()
    return [row[0] for row in rows]


async def test_an_agent_killed_mid_task_fails_that_call_only(
    tmp_path: Path, database_url: str, model: tuple[str, ScriptState],
    argocd: RunningSandbox,
) -> None:
    common: dict[str, Any] = {"database_url": database_url, "model_url": model[0],
                              "workspace": None}
    argocd_env = {"ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token}
    agent = replica(tmp_path, "argocd", agents=["argocd"], **common, **argocd_env)
    supervisor = replica(tmp_path, "supervisor", agents=["supervisor"], **common,
                         PILOTHOUSE_AGENTS_ARGOCD_URL=agent.agent_url("argocd"))
    state = model[1]
    try:
        await asyncio.gather(agent.ready(), supervisor.ready())
        async with httpx.AsyncClient(timeout=120) as http:
            t_a2a, t_next = [await new_thread(http, supervisor.url) for _ in range(2)]
            asking = asyncio.create_task(ask(http, supervisor.url, t_a2a, "SLOW apps?"))
            await asyncio.to_thread(state.wait_for, "argo-slow",
                                    len(state.hits("argo-slow")) + 1)
            agent.kill()
            failed = events((await asking).text)
            working_after_kill = task_states(database_url)

            again = replica(tmp_path, "argocd-again", agents=["argocd"], port=agent.port,
                            **common, **argocd_env)
            await again.ready()
            after_restart = task_states(database_url)
            works = events((await ask(http, supervisor.url, t_next, "degraded apps?")).text)
            again.stop()
    finally:
        agent.stop()
        supervisor.stop()

    answer = " ".join(e["text"] for e in failed if e["kind"] == "answer")
    assert "The argocd agent is unavailable: the connection was lost mid-answer" in answer
    assert working_after_kill == ["TASK_STATE_WORKING"]
    assert after_restart == ["TASK_STATE_FAILED"]  # failed by the restarted agent at start-up
    answer = " ".join(e["text"] for e in works if e["kind"] == "answer")
    assert "ARGOCD:" in answer and "unavailable" not in answer
    assert task_states(database_url) == ["TASK_STATE_FAILED", "TASK_STATE_COMPLETED"]
