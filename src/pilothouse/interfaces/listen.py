"""The listening socket of a server, bound before anything else starts, and how long a client
may take to send a request head.

uvicorn binds only after the app is built; in `pilothouse serve` that is after every agent,
tool server and database has been opened, and a busy port then surfaced as a long traceback
from the shutdown of all of them. Binding first turns it into one line and a non-zero exit
before any work is done; the socket is then handed to uvicorn.

uvicorn closes a keep-alive connection idle between requests (`timeout_keep_alive`), but has no
limit on the request head: a connection that never sends one, or sends it a byte at a time,
stays open forever, and a few hundred of them hold every file descriptor the server has (the
slow-loris attack). `header_timeout_protocol` is uvicorn's own HTTP protocol (httptools, or
h11 without it) with one timer: from the connection's start, and again after each response,
the next request head must be complete within the limit, or the connection is closed (with a
408 when part of a head came). Bodies have their own limit in the app
(`interfaces.api.security.BodyLimitMiddleware`); a streaming answer, once its head was read, is
never cut by this timer.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from typing import Any

from pilothouse.errors import ConfigurationError

_BACKLOG = 2048  # uvicorn's default


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host:port` and listening, or a ConfigurationError that says why."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as error:
        raise ConfigurationError(
            f"Cannot listen on {host}: the name does not resolve ({error.strerror}).",
            hint="Use an address of this machine: 127.0.0.1, or 0.0.0.0 for every interface.",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(_BACKLOG)
    except OSError as error:
        sock.close()
        raise _bind_error(error, host, port) from None
    sock.set_inheritable(True)
    return sock


def _bind_error(error: OSError, host: str, port: int) -> ConfigurationError:
    if error.errno == errno.EADDRINUSE:
        return ConfigurationError(
            f"Port {port} on {host} is already in use.",
            hint=f"Stop the server that holds it (e.g. `ss -ltnp 'sport = :{port}'`) or choose "
                 "another with --port.")
    if error.errno == errno.EADDRNOTAVAIL:
        return ConfigurationError(
            f"{host} is not an address of this machine, so nothing can listen on it.",
            hint="Use 127.0.0.1, or 0.0.0.0 for every interface.")
    if error.errno == errno.EACCES:
        return ConfigurationError(
            f"Not allowed to listen on port {port} of {host}.",
            hint="Ports below 1024 need privileges: choose a port of 1024 or above with --port.")
    return ConfigurationError(f"Cannot listen on {host}:{port}: {error.strerror}.",
                              hint="Check --host and --port.")


_TIMEOUT_BODY = b"The request head did not arrive in time.\n"
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
                     % (len(_TIMEOUT_BODY), _TIMEOUT_BODY))


class _HeadTimer:
    """Closes a connection whose next request head is not complete `header_timeout` seconds
    after the connection opened or the last response ended (mixed into a uvicorn protocol)."""

    header_timeout: float = 10.0
    _head_timer: asyncio.TimerHandle | None = None
    _head_started = False
    _waiting_after: Any = None
    # Set by uvicorn's protocol classes: the transport, the current request cycle, the loop.
    transport: asyncio.Transport
    cycle: Any
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._head_timer is not None:
            self._head_started = True
        super().data_received(data)  # type: ignore[misc]
        # Both protocols start a new request cycle once a head is complete.
        if self._head_timer is not None and self.cycle is not self._waiting_after:
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        # Idle now unless a pipelined request already started (its cycle is still running).
        if not self.transport.is_closing() and self.cycle is not None \
                and self.cycle.response_complete:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        self._disarm()
        self._head_started = False
        self._waiting_after = self.cycle
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing():
            return
        if self._head_started:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def header_timeout_protocol(seconds: float,
                            base: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol `base` (default: what `http="auto"` picks, httptools or h11)
    with a `seconds` limit on request heads; give it to `uvicorn.Config(http=...)`."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    return type("HeaderTimeoutProtocol", (_HeadTimer, base), {"header_timeout": seconds})
