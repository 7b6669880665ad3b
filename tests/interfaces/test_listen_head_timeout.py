"""The request-head timeout of `pilothouse serve`, on both of uvicorn's HTTP implementations.

A real uvicorn server on 127.0.0.1 in the test's event loop, with the protocol `serve` gives it
(`interfaces.listen.header_timeout_protocol`) over httptools and over h11; raw sockets play
the slow clients. `tests/a2a/test_serve_trust_boundaries.py` checks the same through the
`serve` process and its setting.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from pilothouse.interfaces.listen import header_timeout_protocol

TIMEOUT = 0.5


async def hello(request: Request) -> Response:
    return PlainTextResponse("hello")


async def slow_stream(request: Request) -> Response:
    release: asyncio.Event = request.app.state.release

    async def chunks() -> AsyncIterator[str]:
        yield "first "
        await release.wait()  # the test releases it well after the head timeout
        yield "last"

    return StreamingResponse(chunks())


@asynccontextmanager
async def serving(base: type[asyncio.Protocol], release: asyncio.Event) -> AsyncIterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = Starlette(routes=[Route("/", hello), Route("/stream", slow_stream)])
    app.state.release = release
    # Keep-alive far longer than the head timeout: what closes an idle connection is ours.
    config = uvicorn.Config(app, http=header_timeout_protocol(TIMEOUT, base), lifespan="off",
                            log_level="warning", timeout_keep_alive=60)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:  # uvicorn offers no event for it
            if task.done():
                task.result()  # it failed to start: say why
            await asyncio.sleep(0.01)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


def until_closed(sock: socket.socket) -> tuple[bytes, float]:
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic()


def read_until(sock: socket.socket, end: bytes) -> bytes:
    received = b""
    while end not in received and (chunk := sock.recv(65536)):
        received += chunk
    return received


def request(path: str = "/") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


@pytest.mark.parametrize("base", [HttpToolsProtocol, H11Protocol], ids=["httptools", "h11"])
async def test_slow_heads_are_cut_and_a_slow_answer_is_not(base: type[asyncio.Protocol]) -> None:
    release = asyncio.Event()
    async with serving(base, release) as port:
        def connect() -> socket.socket:
            return socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT + 10)

        started = time.monotonic()
        silent, partial, served, streaming = connect(), connect(), connect(), connect()
        partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        served.sendall(request())  # answered, then never asks again (keep-alive)
        streaming.sendall(request("/stream"))
        try:
            closing = [asyncio.to_thread(until_closed, s) for s in (silent, partial, served)]
            (nothing, silent_at), (timed_out, _), (answered, served_at) = \
                await asyncio.gather(*closing)
            release.set()  # the stream has outlived the head timeout; let it end
            streamed = await asyncio.to_thread(read_until, streaming, b"last")
        finally:
            for sock in (silent, partial, served, streaming):
                sock.close()

    assert nothing == b"" and TIMEOUT * 0.9 <= silent_at - started < TIMEOUT + 5
    assert timed_out.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert b"connection: close" in timed_out
    assert answered.startswith(b"HTTP/1.1 200 ") and answered.endswith(b"hello")
    assert served_at - started >= TIMEOUT * 0.9  # closed for its next head, not at once
    assert b"first " in streamed and b"last" in streamed
