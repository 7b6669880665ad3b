"""Supervisor replicas as real `pilothouse serve` processes on one PostgreSQL, and a REST client.

Each replica runs the supervisor with the DevOps agent in process (PILOTHOUSE_WORKSPACE), its
own PILOTHOUSE_HOME, and the REST API at `/`; the model is the scripted OpenAI-compatible
server, the only fake.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "a2a"))
from serve_processes import ServeProcess


def replica(root: Path, name: str, *, database_url: str, model_url: str,
            workspace: Path | None,
            agents: list[str] | None = None, port: int | None = None,
            **env: str) -> ServeProcess:
    base = {"PILOTHOUSE_MODEL": "openai-compatible:scripted", "OPENAI_BASE_URL": model_url,
            "MAX_CONTEXT_TOKENS": "32000", "PILOTHOUSE_LOG_LEVEL": "INFO",
            "PILOTHOUSE_HOME": str(root / f"home-{name}"),
            "PILOTHOUSE_DATABASE_URL": database_url, "PILOTHOUSE_AGENTS_TIMEOUT": "60"}
    if workspace is not None:  # the DevOps agent runs in process
        base["PILOTHOUSE_WORKSPACE"] = str(workspace)
    return ServeProcess(agents or [], {**base, **env}, root / f"{name}.log", port).start()


def events(body: str) -> list[dict[str, Any]]:
    """The `data:` objects of a server-sent event stream."""
    return [json.loads(line[len("data: "):]) for line in body.splitlines()
            if line.startswith("data: ")]


def kinds(stream: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in stream]


async def new_thread(http: httpx.AsyncClient, url: str) -> str:
    """A conversation made by `POST /conversations` on the replica at `url` (asking makes none)."""
    created = await http.post(f"{url}/conversations", json={})
    assert created.status_code == 201, created.text
    thread: str = created.json()["id"]
    return thread


async def ask(http: httpx.AsyncClient, url: str, thread: str,
              question: str) -> httpx.Response:
    return await http.post(f"{url}/conversations/{thread}/ask", json={"question": question})


async def decide(http: httpx.AsyncClient, url: str, thread: str,
                 decision: str = "approve") -> httpx.Response:
    return await http.post(f"{url}/conversations/{thread}/approvals",
                           json={"decision": decision})


def open_tool_calls(messages: list[dict[str, Any]]) -> list[str]:
    """Ids of tool calls in a rendered history that no tool result answers."""
    called = [c["id"] for m in messages for c in m.get("tool_calls") or []]
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    return [c for c in called if c not in answered]
