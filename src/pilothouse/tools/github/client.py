"""A memory-bounded async client for the GitHub REST API (github.com or GitHub Enterprise).

A list page of 100 pull requests is ~1.8 MB of JSON; `get_list` feeds the byte stream to an
incremental parser and hands each item to a `project` function as soon as it is complete, so
only the projections (~0.5 KB each) outlive the parse. Every response has a byte cap; connect
failures and 5xx answers are retried with backoff; a spent rate limit is waited out when it
resets soon (`max_rate_limit_wait`), otherwise it becomes a clear error naming the reset time.
The token is sent per request, never logged, and never forwarded to the log-archive host. The
streaming, byte caps, backoff and transport errors come from `HttpApiClient`.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx

from pilothouse.errors import PilothouseError, UpstreamError
from pilothouse.tools.github.errors import GITHUB, error_message, http_error, rate_limited
from pilothouse.tools.github.paging import parse_link
from pilothouse.tools.http_api.client import ERROR_BODY_BYTES, HttpApiClient

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
MiB = 1024 * 1024
RETRY_STATUSES = frozenset({500, 502, 503, 504})
#: At most this many rate-limit waits for one request, however short each is.
MAX_RATE_WAITS = 2
#: Pages (100 each) of the token's repositories read to name the one a 404 may have meant.
MAX_REPO_PAGES = 3
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


class GitHubClient(HttpApiClient):
    """Talks to one GitHub API root; use as `async with GitHubClient(...) as client`."""

    api = GITHUB

    def __init__(self, api_url: str = DEFAULT_API_URL, token: str | None = None, *,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.5,
                 max_rate_limit_wait: float = 10.0, max_document_bytes: int = 4 * MiB,
                 max_list_bytes: int = 16 * MiB, max_archive_bytes: int = 32 * MiB,
                 transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        super().__init__(
            api_url, headers={"Accept": "application/vnd.github+json",
                              "X-GitHub-Api-Version": API_VERSION,
                              "User-Agent": "pilothouse-github"},
            secrets=[token], timeout=timeout, retries=retries, backoff=backoff,
            max_document_bytes=max_document_bytes, max_list_bytes=max_list_bytes,
            transport=transport, sleep=sleep)
        self.max_rate_limit_wait = max_rate_limit_wait
        self.max_archive_bytes = max_archive_bytes
        self.quotas: dict[str, Quota] = {}
        self._token = token

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
        async with self._open(path, params, subject=subject) as response:
            streamed = await self._stream_array(response, path, prefix,
                                                lambda item: items.append(project(item)),
                                                scalars=totals)
            links = parse_link(response.headers.get("link"))
        return Listing(items, links, streamed.scalars)

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
        target = httpx.URL(self.url).join(location)
        try:
            async with self._http.stream("GET", target, headers={"Accept": "*/*"}) as archive:
                if archive.status_code >= 400:
                    body = await self._read(archive, ERROR_BODY_BYTES, "error body")
                    detail = self._redact(error_message(body)) or f"HTTP {archive.status_code}"
                    raise UpstreamError(
                        f"The archive host refused the download of {subject or path} "
                        f"({detail}).", hint="Ask again: GitHub signs a fresh link for every "
                                             "request, valid for about a minute.",
                        retryable=True)
                return await self._read(archive, self.max_archive_bytes, "archive")
        except httpx.TransportError as exc:
            raise self._transport_error(exc, str(target.copy_with(query=None))) from None

    async def visible_repositories(self) -> list[str]:
        """`owner/name` of the repositories the token can see (the first `MAX_REPO_PAGES`
        pages of `GET /user/repos`)."""
        names: list[str] = []
        for page in range(1, MAX_REPO_PAGES + 1):
            listing = await self.get_list("/user/repos", {"per_page": 100, "page": page},
                                          lambda doc: str(doc.get("full_name") or ""),
                                          subject="The token's repository list")
            names += [name for name in listing.items if name]
            if "next" not in listing.links:
                break
        return names

    async def repository_labels(self, full_name: str) -> list[str]:
        """The names of the labels of repository `full_name` (`owner/name`): the first 100,
        more than a repository's label set holds in practice."""
        listing = await self.get_list(f"/repos/{full_name}/labels", {"per_page": 100},
                                      lambda doc: str(doc.get("name") or ""),
                                      subject=f"The labels of {full_name}")
        return [name for name in listing.items if name]

    async def meant_repositories(self, path: str) -> list[str]:
        """For a 404 under `/repos/<owner>/<name>`: the repositories the token can see that
        the caller may have meant, the same name under another owner, else a close spelling.

        The owner comes from the person or from what the token can see, never from a guess:
        a model that filled in an owner nobody said (an example's) learns the real one here.
        Empty when the repository itself is visible (the 404 is about something in it), when
        there is no token, or when the token may not list repositories. Bounded: a token
        with more than `MAX_REPO_PAGES` pages of repositories is asked about the first ones.
        """
        parts = path.split("/")
        if len(parts) < 4 or parts[1] != "repos" or not self._token:
            return []
        wanted = f"{parts[2]}/{parts[3]}".lower()
        try:
            visible = await self.visible_repositories()
        except PilothouseError:
            return []  # the 404 stands on its own
        by_lower = {name.lower(): name for name in visible}
        if wanted in by_lower:
            return []
        same_name = [name for name in visible
                     if name.partition("/")[2].lower() == parts[3].lower()]
        close = difflib.get_close_matches(wanted, list(by_lower), n=3, cutoff=0.8)
        return same_name[:3] or [by_lower[name] for name in close]

    # -- plumbing ---------------------------------------------------------------------------
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
                attempt += 1
                if await self._retry(attempt, request, type(exc).__name__):
                    continue
                raise self._transport_error(exc) from None
            try:
                quota = self._note_quota(response)
                status = response.status_code
                if status < 300 or (redirects and response.is_redirect):
                    yield response
                    return
                error_body = await self._read(response, ERROR_BODY_BYTES, "error body")
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
            if status in RETRY_STATUSES:
                attempt += 1
                if await self._retry(attempt, request, f"answered {status}"):
                    continue
            if status in (403, 429) and quota is not None and quota.remaining == 0:
                raise rate_limited(resource, quota.limit, quota.reset_at or time.time(),
                                   time.time())
            if status in (403, 429) and retry_after is not None:  # still throttled: say so
                now = time.time()
                raise rate_limited(resource, None, now + retry_after, now, secondary=True)
            meant = await self.meant_repositories(path) if status == 404 else []
            raise http_error(status, error_body, subject=subject, has_token=bool(self._token),
                             redact=self._redact, meant=meant)
