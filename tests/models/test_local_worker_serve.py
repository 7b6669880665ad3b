"""`pilothouse serve` on the local model stays up when its model worker is killed mid-answer.

A real server process over the Argo CD sandbox; SIGKILL (what the out-of-memory killer sends)
goes to its model worker while an answer streams. The request ends with the clear error, the
server keeps serving, and the same conversation's next question is answered by a new worker.
The worker runs in the home's shared model service (`models.local_service`), which the server
started on its first question.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pilothouse.config import Settings
from pilothouse.models.local_service_control import service_status, stop_service
from pilothouse.models.local_service_files import ServicePaths, service_paths
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox

# A real server, the real model, three turns on 2 shared cores: 3-5 minutes.
pytestmark = [pytest.mark.local_model, pytest.mark.timeout(900)]

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
def server(tmp_path: Path, argocd: RunningSandbox,
           ) -> Iterator[tuple[subprocess.Popen[bytes], str, ServicePaths]]:
    model = ensure_local_model(Settings(home=MODELS_DIR.parent))
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED)}
    env.update({"PILOTHOUSE_HOME": str(tmp_path / "home"),
                "PILOTHOUSE_LOCAL_MODEL_PATH": str(model),
                "ARGOCD_URL": argocd.url, "ARGOCD_TOKEN": argocd.token,
                # The worker is killed at the answer's first token: the model writes a lead
                # above the listing (by default the listing alone answers, with no tokens).
                "PILOTHOUSE_LOCAL_LEADS": "true"})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.interfaces.serve", "--port", str(port),
         "--agent", "argocd", "--api"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process, f"http://127.0.0.1:{port}", service_paths(tmp_path / "home")
    finally:
        stop_service(service_paths(tmp_path / "home"))  # it outlives the server on purpose
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()


def model_worker_of(paths: ServicePaths) -> int | None:
    """The process that runs the model: the worker of the home's model service."""
    info = service_status(paths)
    return info["worker_pid"] if info else None


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
              at_first_token: Callable[[], None] | None = None) -> list[dict[str, Any]]:
    """The events of one question (SSE), calling `at_first_token` when the answer starts."""
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
            if at_first_token is not None and event["kind"] == "token":
                at_first_token()
                at_first_token = None
    return events


def answered(events: list[dict[str, Any]]) -> bool:
    return (not [e for e in events if e["kind"] == "error"] and events[-1]["kind"] == "answer"
            and bool(events[-1]["text"].strip()))


async def test_serve_stays_up_when_its_model_worker_is_killed(
    server: tuple[subprocess.Popen[bytes], str, ServicePaths],
) -> None:
    process, url, paths = server
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(900)) as http:
        await wait_ready(http, process)
        thread = (await http.post("/conversations", json={})).json()["id"]
        other = (await http.post("/conversations", json={})).json()["id"]
        meanwhile: list[asyncio.Task[list[dict[str, Any]]]] = []

        def crash_mid_answer() -> None:
            # Another conversation asks (it queues for the one worker), then the worker dies.
            meanwhile.append(asyncio.create_task(
                ask(http, other, "Reply with the single word OK.")))
            worker = model_worker_of(paths)
            assert worker is not None
            os.kill(worker, signal.SIGKILL)

        events = await ask(http, thread, "List the applications and say which are degraded.",
                           crash_mid_answer)
        errors = [e for e in events if e["kind"] == "error"]
        assert len(errors) == 1, events
        assert "worker process was killed by SIGKILL" in errors[0]["text"]
        assert "pilothouse doctor" in errors[0]["data"]["suggestion"]
        assert answered(await meanwhile[0])  # the other conversation: untouched

        assert process.poll() is None
        assert (await http.get("/healthz")).status_code == 200
        assert answered(await ask(http, thread, "How many applications are there?"))
