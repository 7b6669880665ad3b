"""DNS rebinding and cross-site requests against a real `pilothouse serve`: refused at the door.

The red team's chain, on a keyless `serve` bound to 127.0.0.1: a page of evil.example, its
name rebound to 127.0.0.1, reads /conversations and approves a waiting shell command through
REST or A2A, and a file appears in the workspace. Here every step of it sends the attacker's
Host (or a foreign Origin) to a real `serve` process (supervisor and DevOps agent, the REST
API, the web UI and A2A) and must be refused before any work; the same steps with this
machine's names must still work, up to the command running once approved. The model is the
scripted OpenAI-compatible server; everything else is real.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a_harness import a2a_client, final_state, serving, stream
from serve_processes import ServeProcess

from pilothouse.agents.registry import Topology
from pilothouse.config import Settings
from pilothouse.interfaces.serve import open_serve_app
from pilothouse.models.registry import ModelSetup
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

COMMAND = "touch canary.txt"
SCRIPT: dict[str, Any] = {"rules": [
    {"name": "sup-route", "when": {"tools_include": "ask_devops", "last_role": "user",
                                   "last_contains": "canary"},
     "reply": {"tool_calls": [{"name": "ask_devops",
                               "arguments": {"question": "Touch the canary file."}}]}},
    {"name": "sup-after", "when": {"tools_include": "ask_devops", "last_role": "tool"},
     "reply": {"content": "DevOps says: {last}"}},
    {"name": "dev-touch", "when": {"tools_include": "run_command", "last_role": "user",
                                   "last_contains": "canary"},
     "reply": {"tool_calls": [{"name": "run_command", "arguments": {"command": COMMAND}}]}},
    {"name": "dev-after", "when": {"tools_include": "run_command", "last_role": "tool"},
     "reply": {"content": "Ran it: {last}"}},
], "default": {"content": "Hello."}}
EVIL_ORIGIN = "http://evil.example"


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, model: tuple[str, ScriptState],
           workspace: Path) -> Iterator[ServeProcess]:
    """`pilothouse serve` without keys (this machine only): supervisor, DevOps, API, A2A."""
    root = tmp_path_factory.mktemp("serve")
    env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model[0],
           "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_HOME": str(root / "home"),
           "PILOTHOUSE_WORKSPACE": str(workspace), "PILOTHOUSE_LOG_LEVEL": "INFO"}
    process = ServeProcess([], env, root / "serve.log").start()
    try:
        asyncio.run(process.ready())
        yield process
    finally:
        process.stop()


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def message(text: str, **ids: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}], **ids}}


def attempts(thread: str, **ids: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Every door the chain can use: read, ask, approve over REST; send and list over A2A."""
    return [
        ("GET", "/conversations", None),
        ("GET", f"/conversations/{thread}", None),
        ("POST", f"/conversations/{thread}/ask", {"question": "touch the canary"}),
        ("POST", f"/conversations/{thread}/approvals", {"decision": "approve"}),
        ("POST", "/a2a/devops/", rpc("SendMessage", message("approve", **ids))),
        ("POST", "/a2a/supervisor/", rpc("ListTasks", {})),
        ("POST", "/a2a/devops/rest/message:send", message("approve", **ids)),
        ("GET", "/healthz", None),  # every path: what is open still answers only our names
        ("GET", "/", None),
        ("GET", "/.well-known/agent-card.json", None),
    ]


async def refusals(url: str, headers: dict[str, str], thread: str,
                   **ids: str) -> list[httpx.Response]:
    async with httpx.AsyncClient(base_url=url, timeout=30,
                                 headers={"A2A-Version": "1.0", **headers}) as http:
        return [await http.request(method, path, json=body)
                for method, path, body in attempts(thread, **ids)]


def model_calls(model: tuple[str, ScriptState]) -> int:
    return len(model[1].requests)


async def test_a_rebound_name_can_neither_read_nor_approve_over_rest(
    server: ServeProcess, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    canary = workspace / "canary.txt"
    async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:
        # The person asks on this machine: the command waits for their approval.
        thread = (await http.post("/conversations", json={"title": "canary"})).json()["id"]
        asked = await http.post(f"/conversations/{thread}/ask",
                                json={"question": "touch the canary please"})
        assert asked.status_code == 200 and '"interrupt"' in asked.text, asked.text
        calls = model_calls(model)

        evil_host = {"Host": f"evil.example:{server.port}"}
        refused = await refusals(server.url, evil_host, thread)
        assert [r.status_code for r in refused] == [421] * len(refused), \
            [(r.request.url.path, r.status_code) for r in refused]
        body = refused[0].json()
        assert "evil.example" in body["error"]
        assert "PILOTHOUSE_ALLOWED_HOSTS" in body["suggestion"]
        assert not any("payments" in r.text or "canary please" in r.text for r in refused)
        assert not canary.exists() and model_calls(model) == calls  # no turn ran

        # A page of another site posting straight to 127.0.0.1 is refused too.
        cross_site = await refusals(server.url, {"Origin": EVIL_ORIGIN}, thread)
        assert [r.status_code for r in cross_site] == [403] * len(cross_site)
        assert "PILOTHOUSE_CORS_ORIGINS" in cross_site[0].json()["suggestion"]
        assert not canary.exists() and model_calls(model) == calls

        # This machine's names, with its own page's Origin, still work: the approval runs.
        for name in ("localhost", "[::1]", "127.0.0.1"):
            listed = await http.get("/conversations", headers={"Host": f"{name}:{server.port}"})
            assert listed.status_code == 200, name
            assert thread in {c["id"] for c in listed.json()["conversations"]}
        same_site = {"Origin": server.url}
        approved = await http.post(f"/conversations/{thread}/approvals", headers=same_site,
                                   json={"decision": "approve"})
        assert approved.status_code == 200, approved.text
    assert canary.exists()
    canary.unlink()


async def test_a_rebound_name_cannot_approve_over_a2a(
    server: ServeProcess, model: tuple[str, ScriptState], workspace: Path,
) -> None:
    canary = workspace / "canary.txt"
    async with a2a_client(server.agent_url("devops")) as client:
        asked = await stream(client, "touch the canary over A2A")
        assert final_state(asked) == TaskState.TASK_STATE_INPUT_REQUIRED
        task = asked[0].task
        ids = {"taskId": task.id, "contextId": task.context_id}
        calls = model_calls(model)

        refused = await refusals(server.url, {"Host": f"evil.example:{server.port}"}, "a2a-1",
                                 **ids)
        assert {r.status_code for r in refused} == {421}
        cross_site = await refusals(server.url, {"Origin": EVIL_ORIGIN}, "a2a-1", **ids)
        assert {r.status_code for r in cross_site} == {403}
        assert not canary.exists() and model_calls(model) == calls

        approved = await stream(client, "approve", task_id=task.id, context_id=task.context_id)
    assert final_state(approved) == TaskState.TASK_STATE_COMPLETED
    assert canary.exists()
    canary.unlink()


async def test_the_a2a_only_mode_answers_configured_names_and_addresses_when_bound_to_all(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    """`serve --agent NAME` (no API) behind a proxy: 0.0.0.0 with a key, names configured."""
    key = "a2a-only-key-7f3e9b1c5d2a8e4f6b0c"
    settings = make_settings(PILOTHOUSE_ALLOWED_HOSTS="pilothouse.internal.example")
    public = "http://devops-agent.example:8080"
    async with open_serve_app(settings, public_url=public, agents=["supervisor"],
                              topology=Topology(), model=scripted_setup(["hi"]),
                              host="0.0.0.0", api_keys=[f"ops={key}"]) as served:

        async def build(url: str) -> object:
            return served.app

        async with serving(build) as url, httpx.AsyncClient(base_url=url) as http:
            async def status(host: str, **headers: str) -> int:
                answer = await http.post("/a2a/supervisor/", json=rpc("ListTasks", {}), headers={
                    "Host": host, "A2A-Version": "1.0", "Authorization": f"Bearer {key}",
                    **headers})
                return answer.status_code

            statuses = {host: await status(host) for host in (
                "pilothouse.internal.example", "devops-agent.example:8080", "10.0.0.7:8080",
                "localhost:8080", "evil.example", "internal.example")}
            from_proxy_page = await status("10.0.0.7:8080",
                                           Origin="https://pilothouse.internal.example")
            from_evil_page = await status("10.0.0.7:8080", Origin=EVIL_ORIGIN)
            refused = await http.get("/.well-known/agent-card.json",
                                     headers={"Host": "evil.example"})
    assert statuses == {"pilothouse.internal.example": 200, "devops-agent.example:8080": 200,
                        "10.0.0.7:8080": 200, "localhost:8080": 200, "evil.example": 421,
                        "internal.example": 421}
    assert (from_proxy_page, from_evil_page) == (200, 403)
    assert refused.status_code == 421 and refused.headers["content-type"] == "application/json"
    assert "PILOTHOUSE_ALLOWED_HOSTS" in refused.json()["suggestion"]
