"""Trust boundaries of `pilothouse serve`: no existence oracle, one size limit on every door,
slow clients dropped, a caller's malformed request answered and logged quietly.

One real `serve --agent argocd --api` process on 127.0.0.1 (REST API, web UI and A2A) with two
identities and short timeouts for request heads and bodies; the model is the scripted
OpenAI-compatible server, the Argo CD API the sandbox over HTTP. Raw sockets play the slow
clients.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a_harness import a2a_client, final_state, stream
from serve_processes import ServeProcess

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

ALICE = "alice-trust-key-5f1c9e3a7b2d6f0a4c8e"
BOB = "bob-trust-key-0b6d2f8a4c1e7a3f9d5b2c"
HEAD_SECONDS, BODY_SECONDS = 1.5, 1.5


class ApiServeProcess(ServeProcess):
    """`serve --agent NAME --api`: one agent with the REST API and web UI in front."""

    def start(self) -> ApiServeProcess:
        command = [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(self.port),
                   "--api", *[f"--agent={a}" for a in self.agents]]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT)
        return self


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    script = {"rules": [], "default": {"content": "Answered: {question}"}}
    with running_scripted_server(script) as served:
        yield served


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, model: tuple[str, ScriptState]
           ) -> Iterator[ServeProcess]:
    root = tmp_path_factory.mktemp("trust")
    with running_sandbox(apps=5) as argocd:
        process = ApiServeProcess(["argocd"], _env(root, model[0], argocd), root / "serve.log")
        process.start()
        try:
            asyncio.run(process.ready())
            yield process
        finally:
            process.stop()
    assert ALICE not in process.log_text() and BOB not in process.log_text()


def _env(root: Any, model_url: str, argocd: RunningSandbox) -> dict[str, str]:
    return {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model_url,
            "MAX_CONTEXT_TOKENS": "32000", "ARGOCD_URL": argocd.url,
            "ARGOCD_TOKEN": argocd.token, "PILOTHOUSE_HOME": str(root / "home"),
            "PILOTHOUSE_API_KEYS": f"alice={ALICE},bob={BOB}", "PILOTHOUSE_LOG_LEVEL": "INFO",
            "PILOTHOUSE_API_HEADER_TIMEOUT": str(HEAD_SECONDS),
            "PILOTHOUSE_API_BODY_TIMEOUT": str(BODY_SECONDS)}


def client(server: ServeProcess, key: str) -> httpx.AsyncClient:
    # No pooled connections: an idle one would meet the short head timeout between requests.
    return httpx.AsyncClient(base_url=server.url, timeout=60,
                             limits=httpx.Limits(max_keepalive_connections=0),
                             headers={"Authorization": f"Bearer {key}", "A2A-Version": "1.0"})


def rpc(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def answer_shape(response: httpx.Response, probed: str) -> tuple[int, str]:
    """Status and body with the probed id blanked: all that may differ between two probes."""
    return response.status_code, response.text.replace(probed, "<id>")


async def test_not_yours_and_not_there_answer_alike_on_every_rest_route(
    server: ServeProcess,
) -> None:
    async with client(server, ALICE) as alice, client(server, BOB) as bob:
        created = await alice.post("/conversations", json={"title": "alice's"})
        thread = created.json()["id"]
        asked = await alice.post(f"/conversations/{thread}/ask", json={"question": "apps?"})
        assert "Answered" in asked.text
        unknown = uuid.uuid4().hex[:12]  # the same shape as a created id
        routes = [("GET", "", None), ("DELETE", "", None), ("GET", "/pending", None),
                  ("POST", "/ask", {"question": "hi"}),
                  ("POST", "/approvals", {"decision": "approve"})]
        for method, tail, body in routes:
            theirs = await bob.request(method, f"/conversations/{thread}{tail}", json=body)
            nobodys = await bob.request(method, f"/conversations/{unknown}{tail}", json=body)
            assert theirs.status_code == 404, (method, tail, theirs.text)
            assert answer_shape(theirs, thread) == answer_shape(nobodys, unknown), (method, tail)
        # Nothing of bob's probing touched alice's conversation.
        kept = await alice.get(f"/conversations/{thread}")
        assert kept.status_code == 200 and len(kept.json()["messages"]) == 2


async def test_asking_never_creates_a_conversation_and_created_ids_are_random(
    server: ServeProcess,
) -> None:
    async with client(server, ALICE) as alice:
        refused = await alice.post("/conversations/my-own-id/ask", json={"question": "hi"})
        assert refused.status_code == 404
        assert "POST /conversations" in refused.json()["suggestion"]
        assert (await alice.get("/conversations/my-own-id")).status_code == 404  # not claimed
        ids = [(await alice.post("/conversations", json={"title": "t", "id": "my-own-id"}))
               .json()["id"] for _ in range(3)]
        assert len(set(ids)) == 3 and "my-own-id" not in ids
        assert all(re.fullmatch(r"[0-9a-f]{12}", i) for i in ids), ids
        asked = await alice.post(f"/conversations/{ids[0]}/ask", json={"question": "hi"})
        assert asked.status_code == 200 and "Answered: hi" in asked.text


async def test_another_identitys_task_and_an_unknown_one_answer_alike_on_every_a2a_method(
    server: ServeProcess, model: tuple[str, ScriptState],
) -> None:
    context = f"ctx-{uuid.uuid4().hex[:8]}"
    async with a2a_client(server.agent_url("argocd"), ALICE) as alice_a2a:
        events = await stream(alice_a2a, "alice's private question", context_id=context)
    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    task = events[0].task.id
    unknown = str(uuid.uuid4())  # the shape of an SDK task id
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    rpc_calls: list[tuple[str, Any]] = [
        ("GetTask", {"id": "{id}"}), ("CancelTask", {"id": "{id}"}),
        ("SubscribeToTask", {"id": "{id}"}),
        ("SendMessage", {"message": {**message, "taskId": "{id}"}}),
        ("SendStreamingMessage", {"message": {**message, "taskId": "{id}"}}),
        ("GetTaskPushNotificationConfig", {"taskId": "{id}", "id": "c1"}),
        ("ListTaskPushNotificationConfigs", {"taskId": "{id}"}),
    ]
    rest_calls = [("GET", "/rest/tasks/{id}", None), ("POST", "/rest/tasks/{id}:cancel", None),
                  ("POST", "/rest/tasks/{id}:subscribe", None),
                  ("POST", "/rest/message:send", {"message": {**message, "taskId": "{id}"}})]
    base = "/a2a/argocd"
    async with client(server, BOB) as bob:
        for method, params in rpc_calls:
            answers = [await bob.post(base + "/", json=rpc(method, _with_id(params, probed)))
                       for probed in (task, unknown)]
            assert answer_shape(answers[0], task) == answer_shape(answers[1], unknown), method
            assert answers[0].json()["error"]["code"] in (-32001, -32003), answers[0].text
        for verb, path, body in rest_calls:
            answers = [await bob.request(verb, base + path.format(id=probed),
                                         json=_with_id(body, probed)) for probed in (task, unknown)]
            assert answers[0].status_code in (404, 400), answers[0].text
            assert answer_shape(answers[0], task) == answer_shape(answers[1], unknown), path
        # Alice's context id is, for bob, a new conversation like any other: nothing of hers.
        listed = [await bob.post(base + "/", json=rpc("ListTasks", {"contextId": c}))
                  for c in (context, "ctx-never-used")]
        assert [r.json()["result"].get("tasks", []) for r in listed] == [[], []]
    async with a2a_client(server.agent_url("argocd"), BOB) as bob_a2a:
        own = await stream(bob_a2a, "bob asks", context_id=context)
    assert final_state(own) == TaskState.TASK_STATE_COMPLETED
    assert "alice's private question" not in json.dumps(model[1].requests[-1].messages)


def _with_id(value: Any, probed: str) -> Any:
    return json.loads(json.dumps(value).replace("{id}", probed)) if value is not None else None


async def test_one_size_limit_for_ids_and_messages_on_every_door(
    server: ServeProcess, model: tuple[str, ScriptState],
) -> None:
    asked_before = len(model[1].requests)
    long_id, long_text = "c" * 10_000, "x" * 60_000
    message = {"messageId": uuid.uuid4().hex, "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    base = "/a2a/argocd"
    async with client(server, ALICE) as alice:
        tasks_before = (await alice.post(base + "/", json=rpc("ListTasks", {}))).json()
        refusals = {
            "context id": await alice.post(base + "/", json=rpc("SendMessage", {
                "message": {**message, "contextId": long_id}})),
            "task id": await alice.post(base + "/", json=rpc("GetTask", {"id": long_id})),
            "message": await alice.post(base + "/", json=rpc("SendStreamingMessage", {
                "message": {**message, "parts": [{"text": long_text}]}})),
        }
        for what, refused in refusals.items():
            error = refused.json()["error"]
            assert error["code"] == -32602, (what, error)
            limit = "20,000" if what == "message" else "64"
            assert f"the limit is {limit}" in error["message"], error
        rest = await alice.post(base + "/rest/message:send", json={
            "message": {**message, "contextId": long_id}})
        assert rest.status_code == 400 and "the limit is 64" in rest.text
        # The REST API's door: the same numbers.
        api_id = await alice.get(f"/conversations/{'c' * 65}")
        assert api_id.status_code == 400 and "the limit is 64" in api_id.json()["error"]
        thread = (await alice.post("/conversations", json={})).json()["id"]
        api_text = await alice.post(f"/conversations/{thread}/ask",
                                    json={"question": "x" * 20_001})
        assert api_text.status_code == 422 and "20000" in api_text.json()["error"]
        tasks_after = (await alice.post(base + "/", json=rpc("ListTasks", {}))).json()
    assert tasks_after == tasks_before  # nothing was stored
    assert len(model[1].requests) == asked_before  # and the model was never asked


def _connect(server: ServeProcess) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=HEAD_SECONDS + 10)


def _read_until_closed(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and when that was."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic()


async def test_stalled_connections_are_closed_after_the_head_timeout(
    server: ServeProcess,
) -> None:
    start = time.monotonic()
    silent = [_connect(server) for _ in range(100)]
    partial = _connect(server)
    partial.sendall(f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nX-Slow: "
                    .encode())
    try:
        closed = await asyncio.gather(*[asyncio.to_thread(_read_until_closed, s)
                                        for s in [*silent, partial]])
    finally:
        for sock in [*silent, partial]:
            sock.close()
    assert all(data == b"" for data, _ in closed[:-1])  # nothing to say to a silent one
    assert closed[-1][0].startswith(b"HTTP/1.1 408 ")
    waited = [at - start for _, at in closed]
    assert min(waited) >= HEAD_SECONDS * 0.9 and max(waited) < HEAD_SECONDS + 10, waited
    # A client that sends its head in time is served, and the server still answers.
    async with httpx.AsyncClient(base_url=server.url) as http:
        assert (await http.get("/healthz")).status_code == 200


async def test_a_body_that_does_not_arrive_in_time_gets_408_and_a_close(
    server: ServeProcess,
) -> None:
    sock = _connect(server)
    head = (f"POST /a2a/argocd/ HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Bearer {ALICE}\r\nContent-Type: application/json\r\n"
            "Content-Length: 400\r\n\r\n")
    start = time.monotonic()
    sock.sendall(head.encode() + b'{"jsonrpc": "2.0", "id": 1, ')  # then nothing
    try:
        answer, closed_at = await asyncio.to_thread(_read_until_closed, sock)
    finally:
        sock.close()
    status, _, rest = answer.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout", answer
    assert b"did not arrive within 1.5 s" in rest and b"PILOTHOUSE_API_BODY_TIMEOUT" in rest
    assert BODY_SECONDS * 0.9 <= closed_at - start < BODY_SECONDS + 10


MALFORMED = [b"{not json", b'"a string"', b"[1, 2]", b'{"jsonrpc": "2.0", "id": 1}',
             b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": []}',
             b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", '
             b'"params": {"message": {"parts": "not a list"}}}',
             b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}']


async def test_malformed_json_rpc_gets_a_clear_error_and_one_quiet_log_line(
    server: ServeProcess,
) -> None:
    logged_before = len(server.log_text())
    async with client(server, ALICE) as alice:
        answers = [await alice.post("/a2a/argocd/", content=body,
                                    headers={"Content-Type": "application/json"})
                   for body in MALFORMED]
        rest = await alice.post("/a2a/argocd/rest/message:send", content=b"{not json",
                                headers={"Content-Type": "application/json"})
    for body, answer in zip(MALFORMED, answers, strict=True):
        assert answer.status_code == 200, (body, answer.text)
        error = answer.json()["error"]
        assert error["code"] in (-32700, -32600, -32602), (body, error)
        assert error["message"], body
    assert rest.status_code == 400 and rest.json()["error"]["status"] == "INVALID_ARGUMENT"
    lines = [json.loads(line) for line in server.log_text()[logged_before:].splitlines()
             if line.startswith("{")]
    assert lines and {line["level"] for line in lines} == {"info"}, lines
    assert not [line for line in lines if "exception" in line or "Traceback" in str(line)]
    # At most one line per request (one refused in the handler logs none), saying what was wrong.
    assert len(lines) <= len(MALFORMED) + 1, lines
    assert any("not a list" in line["event"] for line in lines), lines
