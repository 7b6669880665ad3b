"""A memory-bounded async client for the GitHub REST API (github.com or GitHub Enterprise).

A list page of 100 pull requests is ~1.8 MB of JSON; `get_list` feeds the byte stream to an
incremental parser and hands each item to a `project` function as soon as it is complete, so
only the projections (~0.5 KB each) outlive the parse. Every response has a byte cap; connect
failures and 5xx answers are retried with backoff; a spent rate limit is waited out when it
resets soon (`max_rate_limit_wait`), otherwise it becomes a clear error naming the reset time.
The token is sent per request, never logged, and never forwarded to the log-archive host.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx
import ijson

from pilothouse.errors import UpstreamError
from pilothouse.redaction import Redactor
from pilothouse.tools.github.errors import (
    display_url,
    error_message,
    http_error,
    rate_limited,
    too_large,
    transport_error,
)
from pilothouse.tools.github.paging import parse_link

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
MiB = 1024 * 1024
RETRY_STATUSES = frozenset({500, 502, 503, 504})
#: At most this many rate-limit waits for one request, however short each is.
MAX_RATE_WAITS = 2
T = TypeVar("T")
Params = Mapping[str, str | int] | None


@dataclass
class Listing(Generic[T]):
    """One page of a list: projected items, `Link` pages by rel, and top-level scalars."""

    items: list[T]
    links: dict[str, int]
    totals: dict[str, Any] = field(default_factory=dict)


@dataclass
class Quota:
    """The last rate-limit headers seen for one resource (`core`, `search`)."""

    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None


def _header_int(response: httpx.Response, name: str) -> int | None:
    value = response.headers.get(name, "")
    return int(value) if value.isdigit() else None


class GitHubClient:
    """Talks to one GitHub API root; use as `async with GitHubClient(...) as client`."""

    def __init__(self, api_url: str = DEFAULT_API_URL, token: str | None = None, *,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.5,
                 max_rate_limit_wait: float = 10.0, max_document_bytes: int = 4 * MiB,
                 max_list_bytes: int = 16 * MiB, max_archive_bytes: int = 32 * MiB,
                 transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_rate_limit_wait = max_rate_limit_wait
        self.max_document_bytes = max_document_bytes
        self.max_list_bytes = max_list_bytes
        self.max_archive_bytes = max_archive_bytes
        self.quotas: dict[str, Quota] = {}
        self._token = token
        self._sleep = sleep
        self._redact = Redactor([token])
        self._http = httpx.AsyncClient(
            base_url=self.api_url, transport=transport, follow_redirects=False,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            headers={"Accept": "application/vnd.github+json",
                     "X-GitHub-Api-Version": API_VERSION, "User-Agent": "pilothouse-github"})

    def __repr__(self) -> str:  # never the token
        return f"GitHubClient(api_url={display_url(self.api_url)!r})"

    async def __aenter__(self) -> GitHubClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- requests ---------------------------------------------------------------------------
    async def get_json(self, path: str, params: Params = None, *,
                       subject: str | None = None) -> Any:
        """GET one JSON document (at most `max_document_bytes`)."""
        async with self._open(path, params, subject=subject) as response:
            return json.loads(await self._read(response, self.max_document_bytes, "answer"))

    async def get_list(self, path: str, params: Params, project: Callable[[dict[str, Any]], T],
                       *, prefix: str = "item", totals: tuple[str, ...] = (),
                       subject: str | None = None) -> Listing[T]:
        """GET one page of a list, projecting each item while the bytes stream in.

        `prefix` locates the array (`item` for a bare list, `items.item` for search);
        `totals` names top-level scalars to keep (`total_count`).
        """
        items: list[T] = []
        kept: dict[str, Any] = {}
        async with self._open(path, params, subject=subject) as response:
            found = ijson.sendable_list()
            parser = ijson.items_coro(found, prefix, use_float=True)
            events = ijson.sendable_list()
            scalars = ijson.parse_coro(events) if totals else None
            received = 0
            try:
                async for chunk in response.aiter_bytes():
                    received += len(chunk)
                    if received > self.max_list_bytes:
                        raise too_large(f"answer to {path}", self.max_list_bytes)
                    parser.send(chunk)
                    items.extend(project(item) for item in found)
                    del found[:]
                    if scalars is not None:
                        scalars.send(chunk)
                        kept.update((p, value) for p, event, value in events
                                    if p in totals and event in ("number", "boolean", "string"))
                        del events[:]
                parser.close()
                items.extend(project(item) for item in found)
                if scalars is not None:
                    scalars.close()
                    kept.update((p, value) for p, event, value in events if p in totals)
            except ijson.JSONError as exc:
                raise UpstreamError(f"GitHub sent malformed JSON for {path} ({exc}).",
                                    hint="Check that GITHUB_API_URL points at the GitHub API "
                                         "(GitHub Enterprise: https://HOST/api/v3).",
                                    retryable=True) from None
            except httpx.TransportError as exc:
                raise transport_error(exc, url=self.api_url, timeout=self.timeout) from None
            links = parse_link(response.headers.get("link"))
        return Listing(items, links, kept)

    async def download(self, path: str, *, subject: str | None = None) -> bytes:
        """GET a binary archive that GitHub serves through a redirect to a signed URL.

        The signed URL authenticates itself; the token is not sent there (it may be another
        host, and storage hosts reject bearer tokens).
        """
        async with self._open(path, None, subject=subject, redirects=True) as response:
            if not response.is_redirect:
                return await self._read(response, self.max_archive_bytes, "archive")
            location = response.headers.get("location", "")
        if not location:
            raise UpstreamError(f"GitHub redirected {path} without a location.", retryable=True)
        target = httpx.URL(self.api_url).join(location)
        try:
            async with self._http.stream("GET", target, headers={"Accept": "*/*"}) as archive:
                if archive.status_code >= 400:
                    body = await self._read(archive, 64 * 1024, "error body")
                    detail = self._redact(error_message(body)) or f"HTTP {archive.status_code}"
                    raise UpstreamError(
                        f"The archive host refused the download of {subject or path} "
                        f"({detail}).", hint="Ask again: GitHub signs a fresh link for every "
                                             "request, valid for about a minute.",
                        retryable=True)
                return await self._read(archive, self.max_archive_bytes, "archive")
        except httpx.TransportError as exc:
            raise transport_error(exc, url=str(target.copy_with(query=None)),
                                  timeout=self.timeout) from None

    # -- plumbing ---------------------------------------------------------------------------
    async def _read(self, response: httpx.Response, limit: int, kind: str) -> bytes:
        parts, size = [], 0
        try:
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise too_large(kind, limit)
                parts.append(chunk)
        except httpx.TransportError as exc:
            raise transport_error(exc, url=self.api_url, timeout=self.timeout) from None
        return b"".join(parts)

    def _note_quota(self, response: httpx.Response) -> Quota | None:
        remaining = _header_int(response, "x-ratelimit-remaining")
        if remaining is None:
            return None
        resource = response.headers.get("x-ratelimit-resource", "core")
        quota = Quota(_header_int(response, "x-ratelimit-limit"), remaining,
                      float(_header_int(response, "x-ratelimit-reset") or 0) or None)
        self.quotas[resource] = quota
        return quota

    async def _wait_for_reset(self, resource: str, limit: int | None, reset_at: float, *,
                              secondary: bool = False) -> None:
        """Sleep until `reset_at` if that is soon enough, else raise the rate-limit error."""
        now = time.time()
        wait = max(0.0, reset_at - now)
        if wait > self.max_rate_limit_wait:
            raise rate_limited(resource, limit, reset_at, now, secondary=secondary)
        log.info("GitHub %s rate limit spent; waiting %.1f s for the reset", resource, wait)
        # A quarter second of slack: the reset header has one-second resolution.
        await self._sleep(wait + 0.25)

    @asynccontextmanager
    async def _open(self, path: str, params: Params, *, subject: str | None,
                    redirects: bool = False) -> AsyncIterator[httpx.Response]:
        """GET with retries and rate-limit waits; yield a 2xx (or 3xx) response or raise."""
        resource = "search" if path.startswith("/search/") else "core"
        attempt = waits = 0
        while True:
            known = self.quotas.get(resource)
            if known and known.remaining == 0 and known.reset_at and known.reset_at > time.time():
                # Spent, as the last answer said: wait or fail without spending a request.
                waits += 1
                await self._wait_for_reset(resource, known.limit, known.reset_at)
                self.quotas.pop(resource, None)
            headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
            request = self._http.build_request("GET", path, params=params, headers=headers)
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                if attempt < self.retries:
                    attempt += 1
                    log.info("GitHub GET %s failed (%s); retry %d", path, type(exc).__name__,
                             attempt)
                    await self._sleep(self.backoff * 2 ** (attempt - 1))
                    continue
                raise transport_error(exc, url=self.api_url, timeout=self.timeout) from None
            try:
                quota = self._note_quota(response)
                status = response.status_code
                if status < 300 or (redirects and response.is_redirect):
                    yield response
                    return
                error_body = await self._read(response, 64 * 1024, "error body")
            finally:
                await response.aclose()
            retry_after = _header_int(response, "retry-after")
            if status in (403, 429) and quota is not None and quota.remaining == 0 \
                    and quota.reset_at and waits < MAX_RATE_WAITS:
                waits += 1
                await self._wait_for_reset(resource, quota.limit, quota.reset_at)
                self.quotas.pop(resource, None)
                continue
            if status in (403, 429) and retry_after is not None and waits < MAX_RATE_WAITS:
                waits += 1
                await self._wait_for_reset(resource, None, time.time() + retry_after,
                                           secondary=True)
                continue
            if status in RETRY_STATUSES and attempt < self.retries:
                attempt += 1
                log.info("GitHub GET %s answered %d; retry %d", path, status, attempt)
                await self._sleep(self.backoff * 2 ** (attempt - 1))
                continue
            if status in (403, 429) and quota is not None and quota.remaining == 0:
                raise rate_limited(resource, quota.limit, quota.reset_at or time.time(),
                                   time.time())
            if status in (403, 429) and retry_after is not None:  # still throttled: say so
                now = time.time()
                raise rate_limited(resource, None, now + retry_after, now, secondary=True)
            raise http_error(status, error_body, subject=subject, has_token=bool(self._token),
                             redact=self._redact)
