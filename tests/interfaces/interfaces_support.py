"""Tools, an app runner and SSE parsing shared by the interface tests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.tools import tool

from pilothouse.sandbox.serving import running_app

APPLICATIONS = [
    {"name": "payments-api", "project": "payments", "health": "Degraded", "sync": "Synced"},
    {"name": "payments-worker", "project": "payments", "health": "Healthy", "sync": "Synced"},
    {"name": "billing-ui", "project": "billing", "health": "Healthy", "sync": "OutOfSync"},
]
RESTARTED: list[str] = []

TABLE_ANSWER = (
    "Two applications in **payments**:\n\n"
    "| name | health |\n|---|---|\n| payments-api | Degraded |\n| payments-worker | Healthy |\n"
)


@tool
def list_applications(project: str = "") -> str:
    """List applications as JSON rows, optionally in one project."""
    rows = [a for a in APPLICATIONS if not project or a["project"] == project]
    return json.dumps({"items": rows, "total": len(rows)})


@tool
def restart_application(name: str) -> str:
    """Restart an application's pods (needs approval)."""
    RESTARTED.append(name)
    return f"restarted {name}: 3 pods replaced"


@tool
def read_logs(app: str) -> str:
    """Read an application's recent logs (long: the context guard must cut them)."""
    return "\n".join(f"2026-05-04T10:{i // 60:02d}:{i % 60:02d}Z {app} ERROR timeout talking "
                     f"to postgres (attempt {i})" for i in range(600))


APPROVALS = {"restart_application": InterruptOnConfig(
    allowed_decisions=["approve", "reject"],
    description="Restart this application's pods on the cluster?",
)}

OpenAgent = Callable[[], Any]


@asynccontextmanager
async def in_process(app: FastAPI, **headers: str) -> AsyncIterator[httpx.AsyncClient]:
    """The app with its lifespan started, and a client that calls it in process."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1",
                                     headers=headers, timeout=30) as client:
            yield client


@contextmanager
def on_socket(app: FastAPI) -> Iterator[str]:
    """Serve `app` (its lifespan too) on 127.0.0.1:<free port> in a thread; yields its URL."""
    with running_app(app, lifespan="on") as url:
        yield url


async def new_conversation(client: httpx.AsyncClient, title: str = "",
                           headers: dict[str, str] | None = None) -> str:
    """The id of a conversation made by `POST /conversations` (asking never makes one)."""
    created = await client.post("/conversations", json={"title": title}, headers=headers)
    assert created.status_code == 201, created.text
    thread: str = created.json()["id"]
    return thread


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The JSON events of an SSE body, in order (keep-alive comments dropped)."""
    events = []
    for frame in text.split("\n\n"):
        data = [line[5:].strip() for line in frame.splitlines() if line.startswith("data:")]
        if data:
            events.append(json.loads("\n".join(data)))
    return events


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]
