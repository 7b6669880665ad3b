"""Every door of `pilothouse serve` locked: keys, owners and one turn at a time.

Two real processes: `serve --agent argocd` (Argo CD writes enabled, against the sandbox over
HTTP) and `serve --agent supervisor` (REST API, web UI and A2A) calling it over A2A with its
own key, each with several identities; driven through the official a2a-sdk client and plain
HTTP. The model is the scripted OpenAI-compatible server; everything else is real.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import Client
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    ListTasksRequest,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import A2AError
from a2a_harness import a2a_client, final_state, get_task, user_message
from serve_processes import ServeProcess

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

KEYS = {"alice": "alice-key-1-4c8e2a6f0b3d7e1a5c9f", "bob": "bob-key-2-9e3b7f1c5a0d4e8b2f6a7c"}
SUPERVISOR_KEY = "supervisor-key-3-6a0e4c8f2b5d9a3e"
ADMIN_KEY = "root-key-4-1d5b9f3a7c0e4b8d2f6a3"
APP_INDEX = 3


def script(app: str) -> dict[str, Any]:
    return {"rules": [
        {"name": "sup-route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
         "reply": {"tool_calls": [{"name": "ask_argocd",
                                   "arguments": {"question": "status please"}}]}},
        {"name": "sup-combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
         "reply": {"content": "Summary: {tool_results}"}},
        {"name": "sync", "when": {"tools_include": "sync_application", "last_role": "user",
                                  "last_contains": "sync now"},
         "reply": {"tool_calls": [{"name": "sync_application",
                                   "arguments": {"name": app, "dry_run": False}}]}},
        {"name": "synced", "when": {"tools_include": "sync_application", "last_role": "tool"},
         "reply": {"content": "Sync finished."}},
        {"name": "slow", "when": {"tools_include": "list_applications", "last_role": "user",
                                  "last_contains": "SLOW"},
         "reply": {"content": "slowly " * 8, "chunk_delay": 0.25}},
        {"name": "answer", "when": {"tools_include": "list_applications", "last_role": "user"},
         "reply": {"content": "ARGO OK"}},
    ], "default": {"content": "No scripted answer."}}


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20, operation_seconds=1.0) as sandbox:
        yield sandbox


def application(argocd: RunningSandbox) -> dict[str, Any]:
    with httpx.Client(headers={"Authorization": f"Bearer {argocd.token}"}) as http:
        items = http.get(f"{argocd.url}/api/v1/applications").json()["items"]
        name = items[APP_INDEX]["metadata"]["name"]
        found: dict[str, Any] = http.get(f"{argocd.url}/api/v1/applications/{name}").json()
        return found


@pytest.fixture(scope="module")
def model(argocd: RunningSandbox) -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(script(application(argocd)["metadata"]["name"])) as served:
        yield served


def _keys(**extra: str) -> str:
    return ",".join(f"{n}={k}" for n, k in {**KEYS, **extra}.items())


@contextmanager
def serving(agent: str, root: Path, env: dict[str, str]) -> Iterator[ServeProcess]:
    process = ServeProcess([agent], {"PILOTHOUSE_LOG_LEVEL": "INFO",
                                     "PILOTHOUSE_HOME": str(root / agent), **env},
                           root / f"{agent}.log").start()
    try:
        asyncio.run(process.ready())
        yield process
    finally:
        process.stop()
    log = process.log_text()
    assert not [k for k in (*KEYS.values(), SUPERVISOR_KEY, ADMIN_KEY) if k in log]


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, model: tuple[str, ScriptState],
          argocd: RunningSandbox) -> Iterator[ServeProcess]:
    env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model[0],
           "MAX_CONTEXT_TOKENS": "32000", "ARGOCD_URL": argocd.url,
           "ARGOCD_TOKEN": argocd.token, "ARGOCD_READ_ONLY": "false",
           "PILOTHOUSE_API_KEYS": _keys(supervisor=SUPERVISOR_KEY)}
    with serving("argocd", tmp_path_factory.mktemp("secured"), env) as process:
        yield process


@pytest.fixture(scope="module")
def supervisor(tmp_path_factory: pytest.TempPathFactory, model: tuple[str, ScriptState],
               agent: ServeProcess) -> Iterator[ServeProcess]:
    env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model[0],
           "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_API_KEYS": _keys(),
           "PILOTHOUSE_ADMIN_KEYS": f"root={ADMIN_KEY}",
           "PILOTHOUSE_AGENTS_ARGOCD_URL": agent.agent_url("argocd"),
           "PILOTHOUSE_AGENTS_ARGOCD_KEY": SUPERVISOR_KEY}
    with serving("supervisor", tmp_path_factory.mktemp("secured"), env) as process:
        yield process


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}", "A2A-Version": "1.0"}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


async def send(client: Client, text: str, **ids: Any) -> list[StreamResponse]:
    return [r async for r in client.send_message(SendMessageRequest(
        message=user_message(text, **ids)))]


async def test_the_card_is_public_and_asks_for_a_bearer_key(agent: ServeProcess) -> None:
    async with httpx.AsyncClient() as http:
        for path in ("/.well-known/agent-card.json", "/a2a/argocd/.well-known/agent-card.json"):
            card = (await http.get(agent.url + path)).json()
            assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == \
                "bearer", path
            assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]


async def test_anonymous_sync_and_approve_is_refused_at_the_first_step(
    agent: ServeProcess, argocd: RunningSandbox,
) -> None:
    before = application(argocd)["status"]["operationState"]
    message = {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                           "parts": [{"text": "sync now"}]}}
    async with httpx.AsyncClient(base_url=agent.url, timeout=30) as http:
        for headers in ({}, bearer("wrong-key"), {"Authorization": "Basic YWxpY2U6eA=="}):
            refused = [
                await http.post("/a2a/argocd/", json=rpc("SendMessage", message),
                                headers=headers),
                await http.post("/a2a/argocd/rest/message:send", json=message, headers=headers),
                await http.get("/a2a/argocd/rest/tasks", headers=headers),
                await http.post("/a2a/argocd/", json=rpc("ListTasks", {}), headers=headers),
            ]
            assert [r.status_code for r in refused] == [401] * 4, headers
            assert refused[0].headers["www-authenticate"] == "Bearer"
            assert "PILOTHOUSE_API_KEYS" in refused[0].json()["suggestion"]
    assert application(argocd)["status"]["operationState"] == before  # no sync started


async def test_another_identity_cannot_see_or_touch_a_task_or_its_approval(
    agent: ServeProcess, argocd: RunningSandbox, model: tuple[str, ScriptState],
) -> None:
    app = application(argocd)
    before = app["status"]["operationState"]
    context = f"shared-{uuid.uuid4().hex[:8]}"
    async with a2a_client(agent.agent_url("argocd"), KEYS["alice"]) as alice, \
            a2a_client(agent.agent_url("argocd"), KEYS["bob"]) as bob:
        # Alice names the app: a change of an app nobody named is asked again, never made.
        asked = await send(alice, f"sync now {app['metadata']['name']}", context_id=context)
        task_id = asked[0].task.id
        assert final_state(asked) == TaskState.TASK_STATE_INPUT_REQUIRED

        attempts: list[Callable[[], Awaitable[object]]] = [
            lambda: get_task(bob, task_id),
            lambda: bob.cancel_task(CancelTaskRequest(id=task_id)),
            lambda: send(bob, "approve", context_id=context, task_id=task_id),
            lambda: _drain(bob.subscribe(SubscribeToTaskRequest(id=task_id))),
        ]
        for attempt in attempts:
            with pytest.raises(A2AError, match=r"(?i)not found"):
                await attempt()
        listed = await bob.list_tasks(ListTasksRequest())
        assert task_id not in [t.id for t in listed.tasks]
        # The same context id is bob's own conversation: it holds nothing of alice's.
        own = await send(bob, "approve", context_id=context)
        assert final_state(own) == TaskState.TASK_STATE_COMPLETED
        assert "sync now" not in str(model[1].requests[-1].messages)
        assert application(argocd)["status"]["operationState"] == before

        async with httpx.AsyncClient(base_url=agent.url) as http:
            path = f"/a2a/argocd/rest/tasks/{task_id}"
            statuses = [(await http.get(path, headers=bearer(KEYS[who]))).status_code
                        for who in ("bob", "alice")]
            assert statuses == [404, 200]
        assert task_id in [t.id for t in (await alice.list_tasks(ListTasksRequest())).tasks]

        approved = await send(alice, "approve", context_id=context, task_id=task_id)
    assert final_state(approved) == TaskState.TASK_STATE_COMPLETED
    assert application(argocd)["status"]["operationState"] != before  # alice's sync ran


async def _drain(events: Any) -> None:
    async for _ in events:
        pass


async def test_concurrent_turns_on_one_context_are_refused_as_busy_and_none_is_lost(
    agent: ServeProcess, model: tuple[str, ScriptState],
) -> None:
    context = f"busy-{uuid.uuid4().hex[:8]}"
    async with a2a_client(agent.agent_url("argocd"), KEYS["alice"]) as alice:
        outcomes = await asyncio.gather(
            *(send(alice, f"SLOW question {n}", context_id=context) for n in range(3)),
            return_exceptions=True)
        completed = [f"SLOW question {n}" for n, o in enumerate(outcomes)
                     if not isinstance(o, BaseException)
                     and final_state(o) == TaskState.TASK_STATE_COMPLETED]
        busy = [o for o in outcomes if isinstance(o, A2AError)]
        # The first turn takes two seconds of streaming: the others arrive while it runs.
        assert len(completed) >= 1 and len(busy) >= 1, outcomes
        assert len(completed) + len(busy) == 3, outcomes
        assert all("busy" in str(b) and "retry" in str(b) for b in busy)
        after = await send(alice, "what did I ask?", context_id=context)
    assert final_state(after) == TaskState.TASK_STATE_COMPLETED
    asked = [m["content"] for m in model[1].requests[-1].messages if m["role"] == "user"]
    assert [a for a in asked if "SLOW question" in str(a)] == completed


def test_without_keys_no_serve_mode_binds_beyond_this_machine(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PILOTHOUSE_", "ARGOCD_"))}
    env["PILOTHOUSE_HOME"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pilothouse.interfaces.serve", "--agent", "argocd",
         "--host", "0.0.0.0", "--port", "1"], env=env, capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "may only listen on 127.0.0.1, not 0.0.0.0" in line and "PILOTHOUSE_API_KEYS" in line
    assert done.stdout == ""


async def test_every_supervisor_route_needs_a_key_and_owners_stay_apart(
    supervisor: ServeProcess,
) -> None:
    alice, bob, root = bearer(KEYS["alice"]), bearer(KEYS["bob"]), bearer(ADMIN_KEY)
    async with httpx.AsyncClient(base_url=supervisor.url, timeout=60) as http:
        for path in ("/healthz", "/readyz", "/", "/.well-known/agent-card.json",
                     "/a2a/supervisor/.well-known/agent-card.json", "/metrics"):
            assert (await http.get(path)).status_code == 200, path  # open (metrics: loopback)
        thread = (await http.post("/conversations", json={}, headers=alice)).json()["id"]
        # The supervisor reaches the remote Argo CD agent with its own key.
        asked = await http.post(f"/conversations/{thread}/ask",
                                json={"question": "how is argocd?"}, headers=alice)
        assert "ARGO OK" in asked.text and "unavailable" not in asked.text

        base = f"/conversations/{thread}"
        routes: list[tuple[str, str, Any, int, int]] = [  # method, path, body, bob, alice
            ("GET", "/conversations", None, 200, 200),
            ("GET", base, None, 404, 200),
            ("GET", f"{base}/pending", None, 404, 200),
            ("POST", f"{base}/ask", {"question": "hi"}, 404, 200),
            ("POST", f"{base}/approvals", {"decision": "approve"}, 404, 409),
            ("GET", "/agents", None, 200, 200),
            ("POST", "/a2a/supervisor/", rpc("ListTasks", {}), 200, 200),
            ("GET", "/a2a/supervisor/rest/tasks", None, 200, 200),
            ("POST", "/conversations", {}, 201, 201),
            ("DELETE", base, None, 404, 204),
        ]
        for method, path, body, for_bob, for_alice in routes:
            statuses = [(await http.request(method, path, json=body, headers=headers)).status_code
                        for headers in ({}, bearer("wrong-key"), bob, alice)]
            assert statuses == [401, 401, for_bob, for_alice], (method, path, statuses)
            if path == "/conversations" and method == "GET":
                everyone = (await http.get(path, headers=root)).json()["conversations"]
                assert thread in [c["id"] for c in everyone]
                mine = (await http.get(path, headers=bob)).json()["conversations"]
                assert thread not in [c["id"] for c in mine]
