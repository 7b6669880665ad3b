"""Event streams: keep-alives, and a client that leaves mid-run cancels the run, not the server."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from fastapi import FastAPI
from interfaces_support import OpenAgent, kinds, new_conversation, on_socket, parse_sse
from langchain_core.tools import tool

from pilothouse.interfaces.api.streaming import EventStreamResponse
from pilothouse.runtime.events import Answer, Event, Token
from pilothouse.testing.scripted_model import tool_call

STARTED = threading.Event()
CANCELLED = threading.Event()


@tool
async def collect_logs(app: str) -> str:
    """Collect an application's logs (slow: waits until cancelled in this test)."""
    STARTED.set()
    try:
        await asyncio.Event().wait()  # never set: only cancellation ends this call
    except asyncio.CancelledError:
        CANCELLED.set()
        raise
    return "unreachable"


async def wait_for(flag: threading.Event, seconds: float = 10.0) -> bool:
    return await asyncio.to_thread(flag.wait, seconds)


async def test_a_client_that_disconnects_cancels_the_run_and_the_next_request_works(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    STARTED.clear()
    CANCELLED.clear()
    app = make_app(make_open_agent(
        [tool_call("collect_logs", app="payments-api"), "Logs are not available right now."],
        tools=[collect_logs]))
    with on_socket(app) as url:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            leaver = await new_conversation(client)
            async with client.stream("POST", f"/conversations/{leaver}/ask",
                                     json={"question": "Show payments-api logs"}) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if line.startswith("event: tool_call"):
                        # Stay connected until the tool runs; leaving the loop disconnects.
                        assert await wait_for(STARTED)
                        busy = await client.post(f"/conversations/{leaver}/ask",
                                                 json={"question": "and now?"})
                        assert busy.status_code == 409
                        assert "still answering" in busy.json()["error"]
                        break
            # The connection closed while the tool was still running.
            assert await wait_for(CANCELLED), "the run must be cancelled when the client leaves"

            again = await client.post(f"/conversations/{leaver}/ask",
                                      json={"question": "Any news?"})
            assert again.status_code == 200, again.text  # the conversation is not stuck busy
            events = parse_sse(again.text)
            assert kinds(events)[-2:] == ["answer", "done"]
            assert events[-2]["text"] == "Logs are not available right now."
            history = (await client.get(f"/conversations/{leaver}")).json()["messages"]
            # The interrupted call got a result (orphan repair), so the history stays valid.
            assert [m["role"] for m in history] == [
                "user", "assistant", "tool", "user", "assistant"]
            assert history[2]["status"] == "error"
            metrics = (await client.get("/metrics")).text
            assert "pilothouse_api_streams_cancelled_total 1.0" in metrics
            assert (await client.get("/healthz")).status_code == 200


async def run_response(response: EventStreamResponse,
                       incoming: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Call an ASGI response directly; `incoming` are the messages the client sends."""
    sent: list[dict[str, Any]] = []
    waiting = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop(0)
        await waiting.wait()  # the client stays connected
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await response({"type": "http"}, receive, send)
    return sent


async def test_a_silent_run_gets_keep_alive_comments_and_ends_with_done() -> None:
    async def slow() -> AsyncIterator[Event]:
        await asyncio.sleep(0.2)
        yield Answer("finally")

    closed: list[bool] = []
    response = EventStreamResponse(slow(), thread_id="t", keepalive_seconds=0.05,
                                   on_close=lambda: closed.append(True))
    sent = await run_response(response, [{"type": "http.request", "body": b""}])
    bodies = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert bodies.count(b": keep-alive\n\n") >= 2
    assert [e["kind"] for e in parse_sse(bodies.decode())] == ["answer", "done"]
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert closed == [True] and not response.cancelled


async def test_a_disconnect_closes_the_event_source_and_reports_cancellation() -> None:
    finished: list[str] = []

    async def endless() -> AsyncIterator[Event]:
        try:
            yield Token("working")
            await asyncio.Event().wait()
            yield Answer("never")
        finally:
            finished.append("closed")

    class Observer:
        def __init__(self) -> None:
            self.calls: list[str] = []

        def stream_started(self) -> None:
            self.calls.append("started")

        def stream_event(self, kind: str) -> None:
            self.calls.append(kind)

        def stream_ended(self, *, cancelled: bool) -> None:
            self.calls.append(f"ended cancelled={cancelled}")

    observer = Observer()
    response = EventStreamResponse(endless(), thread_id="t", observer=observer)
    sent = await asyncio.wait_for(run_response(response, [{"type": "http.disconnect"}]), 5)
    assert response.cancelled
    assert finished == ["closed"]
    assert observer.calls[0] == "started" and observer.calls[-1] == "ended cancelled=True"
    assert not any(m.get("more_body") is False for m in sent), "no normal end after a disconnect"
