"""The base of the memory-bounded async clients for the HTTP APIs the tool servers talk to.

What the Argo CD and GitHub clients share: one `httpx.AsyncClient` with a connect timeout, byte
caps on every answer, JSON arrays parsed item by item as the bytes stream in (so a list of
100,000 items never sits in memory), retries with exponential backoff, and failures mapped to
`pilothouse.errors` whose text passes the client's `Redactor`. Each API's client adds how it
authenticates and which answers it retries (a re-login for Argo CD, rate limits for GitHub).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Self

import httpx
import ijson

from pilothouse.errors import PilothouseError
from pilothouse.redaction import Redactor
from pilothouse.tools.http_api.errors import (
    ApiProfile,
    display_url,
    malformed_json,
    too_large,
    transport_error,
)

log = logging.getLogger(__name__)

MiB = 1024 * 1024
#: How much of an error body is read to find its message.
ERROR_BODY_BYTES = 64 * 1024
#: The methods the tool clients send: reads, and Argo CD's sync.
HttpMethod = Literal["GET", "POST", "PATCH"]
#: Called with each item of a streamed array; True stops the stream early.
ItemCallback = Callable[[dict[str, Any]], bool | None]
_SCALAR_EVENTS = frozenset({"number", "boolean", "string"})


@dataclass
class Streamed:
    """What reading a streamed array left: the bytes read and the top-level scalars kept."""

    received: int = 0
    scalars: dict[str, Any] = field(default_factory=dict)


class HttpApiClient:
    """Talks to one HTTP API root; use as `async with Client(...) as client`."""

    api: ApiProfile

    def __init__(self, url: str, *, headers: dict[str, str], secrets: list[str | None],
                 timeout: float, retries: int, backoff: float, max_document_bytes: int,
                 max_list_bytes: int, verify: bool | ssl.SSLContext = True,
                 transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_document_bytes = max_document_bytes
        self.max_list_bytes = max_list_bytes
        self._sleep = sleep
        self._redact = Redactor(secrets)
        # Redirects are followed only where a client asks (GitHub's signed archive links).
        self._http = httpx.AsyncClient(
            base_url=self.url, verify=verify, transport=transport, follow_redirects=False,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)), headers=headers)

    def __repr__(self) -> str:  # never a credential
        return f"{type(self).__name__}(url={display_url(self.url)!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- reading answers --------------------------------------------------------------------
    def _transport_error(self, exc: httpx.TransportError, url: str | None = None
                         ) -> PilothouseError:
        return transport_error(self.api, exc, url=url or self.url, timeout=self.timeout)

    async def _read(self, response: httpx.Response, limit: int, kind: str) -> bytes:
        """The whole body, refused once it passes `limit` bytes."""
        parts, size = [], 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise too_large(self.api, kind, limit)
                parts.append(chunk)
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None
        return b"".join(parts)

    async def _stream_array(self, response: httpx.Response, path: str, prefix: str,
                            on_item: ItemCallback, *, scalars: tuple[str, ...] = ()
                            ) -> Streamed:
        """Feed each item of the array at `prefix` to `on_item` while the bytes stream in.

        Keeps the top-level `scalars` seen (e.g. a search's `total_count`). Only the current
        chunk and item are held; `on_item` returning True stops reading.
        """
        found = ijson.sendable_list()
        parser = ijson.items_coro(found, prefix, use_float=True)
        events = ijson.sendable_list()
        scalar_parser = ijson.parse_coro(events) if scalars else None
        seen = Streamed()
        kept = seen.scalars

        def drain() -> bool:
            kept.update((p, value) for p, event, value in events
                        if p in scalars and event in _SCALAR_EVENTS)
            del events[:]
            for item in found:
                if on_item(item):
                    return True
            del found[:]
            return False

        try:
            async for chunk in response.aiter_bytes():
                seen.received += len(chunk)
                if seen.received > self.max_list_bytes:
                    raise too_large(self.api, f"answer to {path}", self.max_list_bytes)
                parser.send(chunk)
                if scalar_parser is not None:
                    scalar_parser.send(chunk)
                if drain():
                    return seen
            parser.close()
            if scalar_parser is not None:
                scalar_parser.close()
            drain()
        except ijson.JSONError as exc:
            raise malformed_json(self.api, path, exc) from None
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None
        return seen

    # -- retrying ---------------------------------------------------------------------------
    async def _retry(self, attempt: int, request: httpx.Request, why: str) -> bool:
        """Wait the backoff and say True when try number `attempt` (1-based) may be made."""
        if attempt > self.retries:
            return False
        log.info("%s %s %s %s; retry %d", self.api.name, request.method, request.url.path,
                 why, attempt)
        await self._sleep(self.backoff * 2 ** (attempt - 1))
        return True
