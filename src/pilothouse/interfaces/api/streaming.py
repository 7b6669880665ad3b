"""Server-sent events for a run: one JSON frame per event, keep-alives, cancel on disconnect.

Starlette's `StreamingResponse` only notices a client that went away at its next write, and
then leaves the generator to the garbage collector; an agent run would carry on (and keep its
conversation busy) long after the browser tab closed. Here the run is a task beside a
disconnect watcher: a closed connection cancels the run at once, and the conversation is
released for the next request. These are plain asyncio tasks, not an anyio task group:
LangGraph winds a cancelled run down with awaits of its own, which a level-triggered cancel
scope would keep interrupting (tool calls then ran on after the client had gone).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Protocol

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from pilothouse.runtime.errors import describe_failure
from pilothouse.runtime.events import Event, WireEvent, WireKind, done_wire, to_wire
from pilothouse.runtime.session import turn_failed

logger = logging.getLogger("pilothouse.api")

#: Proxies drop connections that stay silent; a comment frame keeps a long tool call alive.
KEEPALIVE_SECONDS = 15.0


class StreamObserver(Protocol):
    """What a stream reports (to metrics)."""

    def stream_started(self) -> None: ...
    def stream_event(self, kind: WireKind) -> None: ...
    def stream_ended(self, *, cancelled: bool) -> None: ...


def sse_frame(event: WireEvent) -> bytes:
    """One event as an SSE frame: `event: <kind>` and a JSON `data:` line."""
    payload = json.dumps(event, default=str, ensure_ascii=False)
    return f"event: {event['kind']}\ndata: {payload}\n\n".encode()


class EventStreamResponse(Response):
    """Streams `events` as SSE; ends with a `done` frame, or cancels them if the client leaves."""

    media_type = "text/event-stream"

    def __init__(self, events: AsyncIterator[Event], *, thread_id: str,
                 on_close: Callable[[], None] | None = None,
                 on_cancel: Callable[[], None] | None = None,
                 observer: StreamObserver | None = None,
                 keepalive_seconds: float = KEEPALIVE_SECONDS) -> None:
        # Not `super().__init__()`: that sets a body, hence a Content-Length of 0.
        self.status_code = 200
        self.background = None
        self.init_headers({
            "Cache-Control": "no-cache", "X-Accel-Buffering": "no", "X-Thread-Id": thread_id,
        })
        self.events = events
        self.thread_id = thread_id
        self.on_close = on_close
        self.on_cancel = on_cancel
        self.observer = observer
        self.keepalive_seconds = keepalive_seconds
        self.cancelled = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.observer:
            self.observer.stream_started()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        producer = asyncio.create_task(self._produce(queue), name=f"run-{self.thread_id}")
        watcher = asyncio.create_task(self._watch_disconnect(receive))
        try:
            await send({"type": "http.response.start", "status": self.status_code,
                        "headers": self.raw_headers})
            await self._write(queue, send, watcher)
        except OSError:  # the socket broke while writing: the client is gone
            self.cancelled = True
        finally:
            watcher.cancel()
            if not producer.done():
                self.cancelled = True
                producer.cancel()
            if self.cancelled and self.on_cancel:
                self.on_cancel()
            # Shielded: even if this request is being torn down, the run must wind down
            # (tool calls cancelled, the generator closed) before the thread is released.
            await asyncio.shield(self._finish(producer))
            if self.cancelled:
                logger.info("client left thread %s mid-stream; the run was cancelled",
                            self.thread_id)
            if self.observer:
                self.observer.stream_ended(cancelled=self.cancelled)
            if self.on_close:
                self.on_close()

    async def _produce(self, queue: asyncio.Queue[Event | None]) -> None:
        # put_nowait only: the one await of this task is inside the event generator, so a
        # cancellation always lands in the graph's stream, which then cancels its tasks.
        try:
            async for event in self.events:
                queue.put_nowait(event)
        except Exception as error:  # a broken run still ends its stream with an error event
            queue.put_nowait(turn_failed(describe_failure(error)))
        finally:
            queue.put_nowait(None)

    async def _write(self, queue: asyncio.Queue[Event | None], send: Send,
                     watcher: asyncio.Task[None]) -> None:
        getter: asyncio.Task[Event | None] | None = None
        try:
            while True:
                getter = getter or asyncio.create_task(queue.get())
                done, _ = await asyncio.wait({getter, watcher}, timeout=self.keepalive_seconds,
                                             return_when=asyncio.FIRST_COMPLETED)
                if watcher in done:
                    self.cancelled = True
                    return
                if getter not in done:
                    await send({"type": "http.response.body", "body": b": keep-alive\n\n",
                                "more_body": True})
                    continue
                event, getter = getter.result(), None
                if event is None:
                    break
                wire = to_wire(event)
                if self.observer:
                    self.observer.stream_event(wire["kind"])
                await send({"type": "http.response.body", "body": sse_frame(wire),
                            "more_body": True})
        finally:
            if getter is not None:
                getter.cancel()
        await send({"type": "http.response.body", "body": sse_frame(done_wire(self.thread_id)),
                    "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    @staticmethod
    async def _watch_disconnect(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _finish(self, producer: asyncio.Task[None]) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await producer
        # Closing the generator (a no-op once it ended) releases the graph's stream.
        close = getattr(self.events, "aclose", None)
        if close is not None:
            try:
                await close()
            except Exception:
                logger.debug("closing the event stream of %s failed", self.thread_id,
                             exc_info=True)
