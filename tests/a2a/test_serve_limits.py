"""Limits of `pilothouse serve` on every door: body size, JSON errors, a busy port.

Real `serve` processes on 127.0.0.1 with keys set; the model is the scripted OpenAI-compatible
server and never gets a call here, because every request is refused before a turn starts.
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from serve_processes import ServeProcess, free_port

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_server import running_scripted_server

KEY = "limits-key-1-5e9c3a7f1b4d8e2c6a0f"
AUTH = {"Authorization": f"Bearer {KEY}"}
TEN_MB = 10 * 2**20


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=5) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory, argocd: RunningSandbox
          ) -> Iterator[ServeProcess]:
    root = tmp_path_factory.mktemp("limits")
    with running_scripted_server({"rules": [], "default": {"content": "unused"}}) as (url, _):
        env = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": url,
               "MAX_CONTEXT_TOKENS": "32000", "ARGOCD_URL": argocd.url,
               "ARGOCD_TOKEN": argocd.token, "PILOTHOUSE_API_KEYS": f"ops={KEY}",
               "PILOTHOUSE_HOME": str(root / "home")}
        process = ServeProcess(["argocd"], env, root / "serve.log").start()
        try:
            asyncio.run(process.ready())
            yield process
        finally:
            process.stop()


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def disk_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


async def test_ten_megabyte_a2a_messages_are_refused_before_they_cost_memory_or_disk(
    agent: ServeProcess,
) -> None:
    assert agent.process is not None
    home = Path(agent.env["PILOTHOUSE_HOME"])
    rss_before, disk_before = rss_kib(agent.process.pid), disk_bytes(home)
    text = "x" * TEN_MB
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}})
    async with httpx.AsyncClient(timeout=60, headers=AUTH) as http:
        answers = await asyncio.gather(*[
            http.post(agent.agent_url("argocd") + "/", content=body,
                      headers={"Content-Type": "application/json"}) for _ in range(4)])
        # Chunked, without a Content-Length: the cap counts what arrives.
        async def chunks() -> AsyncIterator[bytes]:
            for start in range(0, TEN_MB, 2**20):
                yield text[start:start + 2**20].encode()

        chunked = await http.post(agent.agent_url("argocd") + "/rest/message:send",
                                  content=chunks())
    for answer in [*answers, chunked]:
        assert answer.status_code == 413
        assert "larger than" in answer.json()["error"]
    assert rss_kib(agent.process.pid) - rss_before < 64 * 1024
    assert disk_bytes(home) - disk_before < 1 * 2**20


async def test_unknown_paths_and_wrong_methods_answer_json(agent: ServeProcess) -> None:
    async with httpx.AsyncClient(headers=AUTH) as http:
        missing = await http.get(agent.url + "/no/such/path")
        wrong = await http.get(agent.agent_url("argocd") + "/")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/json"
    assert "/a2a/<name>/" in missing.json()["suggestion"]
    assert wrong.status_code == 405 and "POST" in wrong.json()["suggestion"]


def test_a_busy_port_is_one_line_and_exit_2(tmp_path: Path) -> None:
    port = free_port()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        done = subprocess.run(
            [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(port)],
            env={"PATH": "/usr/bin:/bin", "PILOTHOUSE_HOME": str(tmp_path),
                 "COLUMNS": "80"}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"Port {port} on 127.0.0.1 is already in use" in lines[0]
    assert "Traceback" not in done.stderr


def test_an_address_of_another_machine_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # 192.0.2.1 (TEST-NET-1) is never this machine's; binding it fails without any traffic.
    done = subprocess.run(
        [sys.executable, "-m", "pilothouse.interfaces.serve", "--host", "192.0.2.1",
         "--port", str(free_port())],
        env={"PATH": "/usr/bin:/bin", "PILOTHOUSE_HOME": str(tmp_path),
             "PILOTHOUSE_API_KEYS": f"ops={KEY}", "COLUMNS": "80"},
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "not an address of this machine" in done.stderr
