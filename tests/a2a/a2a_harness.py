"""Helpers the A2A tests share: serve an app in the test's event loop, talk to it with the SDK."""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
import uvicorn
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.types.a2a_pb2 import (
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)

#: The `serve_agents` fixture: serve agents as `pilothouse serve` does; (base URL, endpoints).
ServeAgents = Callable[..., AbstractAsyncContextManager[tuple[str, list[Any]]]]


@asynccontextmanager
async def serving(build: Callable[[str], Awaitable[Any]], port: int = 0) -> AsyncIterator[str]:
    """Serve the app `build(base_url)` makes on 127.0.0.1 in this event loop; yield the URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    app = await build(f"http://127.0.0.1:{port}")
    config = uvicorn.Config(app, lifespan="on", ws="none", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def a2a_client(url: str, key: str | None = None) -> AsyncIterator[Client]:
    """An SDK client for the agent whose base URL is `url` (its card is fetched first),
    sending `key` as its bearer token when given."""
    headers = {"Authorization": f"Bearer {key}"} if key else None
    async with httpx.AsyncClient(timeout=httpx.Timeout(None, connect=5), headers=headers) as http:
        client = await ClientFactory(ClientConfig(httpx_client=http)).create_from_url(url)
        yield client


def user_message(text: str, *, context_id: str | None = None, task_id: str = "") -> Message:
    return Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                   context_id=context_id or uuid.uuid4().hex[:16], task_id=task_id,
                   parts=[Part(text=text)])


async def stream(client: Client, text: str, **ids: Any) -> list[StreamResponse]:
    """Every event of one streamed message."""
    return [r async for r in client.send_message(SendMessageRequest(
        message=user_message(text, **ids)))]


def final_state(events: list[StreamResponse]) -> int:
    states = [e.status_update.status.state for e in events if e.HasField("status_update")]
    return states[-1] if states else TaskState.TASK_STATE_UNSPECIFIED


def answer_text(task: Task) -> str:
    return "".join(p.text for a in task.artifacts if a.name == "answer" for p in a.parts)


def status_text(event: StreamResponse) -> str:
    return "".join(p.text for p in event.status_update.status.message.parts)


async def get_task(client: Client, task_id: str) -> Task:
    return await client.get_task(GetTaskRequest(id=task_id))


async def wait_for_state(client: Client, task_id: str, state: int, seconds: float = 10) -> Task:
    """Poll the task store until the task reaches `state`."""
    async with asyncio.timeout(seconds):
        while True:
            task = await get_task(client, task_id)
            if task.status.state == state:
                return task
            await asyncio.sleep(0.05)
