"""`pilothouse serve` on the local model stays up when its model worker is killed mid-answer.

A real server process over the Argo CD sandbox; SIGKILL (what the out-of-memory killer sends)
goes to its model worker while an answer streams. The request ends with the clear error, the
server keeps serving, and the same conversation's next question is answered by a new worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pilothouse.config import Settings
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox

pytestmark = pytest.mark.local_model

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
# Variables of the test process that would change what the served agent does.
CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT")


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=20) as sandbox:
        yield sandbox


@pytest.fixture
def server(tmp_path: Path, argocd: RunningSandbox) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    model = ensure_local_model(Settings(home=MODELS_DIR.parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    env.update({"PILOTHOUSE_HOME": str(tmp_path / "home"),
                "PILOTHOUSE_LOCAL_MODEL_PATH": str(model),
                "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(port),
         "--agent", "argocd", "--api"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()


def model_worker_of(pid: int) -> int | None:
    """The multiprocessing child of `pid` that runs the model (not the resource tracker)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
        if int(ppid) == pid and b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
            return int(entry.name)
    return None


async def wait_ready(http: httpx.AsyncClient, process: subprocess.Popen[bytes]) -> None:
    while True:
        assert process.poll() is None, "serve exited while starting"
        try:
            if (await http.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.5)


async def ask(http: httpx.AsyncClient, thread: str, question: str,
              kill_with: signal.Signals | None = None, server_pid: int = 0) -> list[dict[str, Any]]:
    """The events of one question; with `kill_with`, the worker gets that signal at the first
    answer token."""
    events: list[dict[str, Any]] = []
    async with http.stream("POST", f"/conversations/{thread}/ask",
                           json={"question": question}) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            if event["kind"] == "done":
                continue
            events.append(event)
            if kill_with is not None and event["kind"] == "token":
                worker = model_worker_of(server_pid)
                assert worker is not None
                os.kill(worker, kill_with)
                kill_with = None
    return events


async def test_serve_stays_up_when_its_model_worker_is_killed(
    server: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = server
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(900)) as http:
        await wait_ready(http, process)
        thread = (await http.post("/conversations", json={})).json()["id"]
        events = await ask(http, thread, "List the applications and say which are degraded.",
                           signal.SIGKILL, process.pid)
        errors = [e for e in events if e["kind"] == "error"]
        assert len(errors) == 1, events
        assert "worker process was killed by SIGKILL" in errors[0]["text"]
        assert "pilothouse doctor" in errors[0]["data"]["suggestion"]

        assert process.poll() is None
        assert (await http.get("/healthz")).status_code == 200
        again = await ask(http, thread, "How many applications are there?")
        assert [e for e in again if e["kind"] == "error"] == []
        assert again[-1]["kind"] == "answer" and again[-1]["text"].strip()
        other = (await http.post("/conversations", json={})).json()["id"]
        fresh = await ask(http, other, "Reply with the single word OK.")
        assert fresh[-1]["kind"] == "answer"
