"""A memory-bounded async client for the Argo CD REST API.

Argo CD cannot page (`reference/argocd/README.md`), so a list is read as a stream: `scan` feeds
httpx's byte stream to an incremental ijson parser and hands each item to a callback, which keeps
what it needs (a count, a page of rows) and drops the rest. Memory is one network chunk plus one
item, whatever the fleet size. The streaming, byte caps, backoff and transport errors come from
`HttpApiClient`; this adds Argo CD's authentication (a token, or a session from a login that is
renewed once when it expires) and which failures are retried.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import httpx

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, UpstreamError
from pilothouse.tools.argocd.errors import ARGOCD, CREDENTIALS_HINT, http_error
from pilothouse.tools.http_api.client import (
    ERROR_BODY_BYTES,
    HttpApiClient,
    HttpMethod,
    ItemCallback,
)
from pilothouse.tools.http_api.errors import too_large

MiB = 1024 * 1024
#: Statuses worth a retry: the gateway or server is briefly unavailable.
RETRY_STATUSES = frozenset({502, 503, 504})
#: Failures where the request never reached the server, so even a POST may be resent.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)
Params = Mapping[str, str | int | list[str]] | None


class ArgoCDClient(HttpApiClient):
    """Talks to one Argo CD server; use as `async with ArgoCDClient(...) as client`."""

    api = ARGOCD

    def __init__(self, url: str, *, token: str | None = None, username: str | None = None,
                 password: str | None = None, verify: bool | ssl.SSLContext = True,
                 timeout: float = 30.0, retries: int = 2, backoff: float = 0.25,
                 max_document_bytes: int = 16 * MiB, max_list_bytes: int = 512 * MiB,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        super().__init__(
            url, headers={"Accept": "application/json", "User-Agent": "pilothouse-argocd"},
            secrets=[token, password], timeout=timeout, retries=retries, backoff=backoff,
            max_document_bytes=max_document_bytes, max_list_bytes=max_list_bytes,
            verify=verify, transport=transport)
        self._token = token
        self._login = (username, password) if username and password and not token else None
        self._login_lock = asyncio.Lock()

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> ArgoCDClient:
        """A client for the server in `settings`; a `ConfigurationError` says what is missing."""
        if not settings.argocd_url:
            raise ConfigurationError(
                "ARGOCD_URL is not set.",
                hint="Set ARGOCD_URL to your Argo CD server, or start a local sandbox with "
                     "`pilothouse sandbox argocd`.")
        if not settings.argocd_token and not (settings.argocd_username and
                                              settings.argocd_password):
            raise ConfigurationError("No Argo CD credentials are configured.",
                                     hint=CREDENTIALS_HINT)
        verify: bool | ssl.SSLContext = settings.argocd_verify_ssl
        if settings.argocd_ca_bundle is not None:
            try:
                verify = ssl.create_default_context(cafile=str(settings.argocd_ca_bundle))
            except (OSError, ssl.SSLError):
                raise ConfigurationError(
                    f"ARGOCD_CA_BUNDLE={settings.argocd_ca_bundle} is not a readable CA file.",
                    hint="Point it at a PEM file with the CA that signed the server.") from None
        options: dict[str, Any] = {
            "token": settings.argocd_token, "username": settings.argocd_username,
            "password": settings.argocd_password, "verify": verify,
            "timeout": settings.argocd_timeout_seconds, **overrides}
        return cls(settings.argocd_url, **options)

    # -- requests ---------------------------------------------------------------------------
    async def get(self, path: str, params: Params = None, *, subject: str | None = None) -> Any:
        """GET one JSON document (at most `max_document_bytes`)."""
        async with self._open("GET", path, params=params, subject=subject) as response:
            return json.loads(await self._read(response, self.max_document_bytes, "response"))

    async def post(self, path: str, body: Mapping[str, Any], *,
                   subject: str | None = None) -> Any:
        """POST a JSON body and return the JSON answer."""
        async with self._open("POST", path, body=body, subject=subject) as response:
            return json.loads(await self._read(response, self.max_document_bytes, "response"))

    async def patch(self, path: str, body: Mapping[str, Any], *,
                    subject: str | None = None) -> Any:
        """PATCH a JSON body and return the JSON answer (never resent: it changes things)."""
        async with self._open("PATCH", path, body=body, subject=subject) as response:
            return json.loads(await self._read(response, self.max_document_bytes, "response"))

    async def scan(self, path: str, on_item: ItemCallback, *, params: Params = None,
                   prefix: str = "items.item", subject: str | None = None) -> int:
        """Stream the array at `prefix` item by item into `on_item` (True stops early).

        Returns the bytes read. Only the current chunk and item are held in memory.
        """
        async with self._open("GET", path, params=params, subject=subject) as response:
            return (await self._stream_array(response, path, prefix, on_item)).received

    async def scan_lines(self, path: str, on_entry: ItemCallback, *, params: Params = None,
                         subject: str | None = None, max_line_bytes: int = MiB) -> None:
        """Stream an NDJSON answer (`{"result": ...}` per line) into `on_entry`."""
        received, pending = 0, b""
        async with self._open("GET", path, params=params, subject=subject) as response:
            try:
                async for chunk in response.aiter_bytes():
                    received += len(chunk)
                    if received > self.max_list_bytes:
                        raise too_large(ARGOCD, f"stream from {path}", self.max_list_bytes)
                    *lines, pending = (pending + chunk).split(b"\n")
                    if len(pending) > max_line_bytes:
                        pending = b""  # one absurd line is dropped, not buffered forever
                    for line in lines:
                        if line.strip() and self._entry(line, path, on_entry):
                            return
                if pending.strip():
                    self._entry(pending, path, on_entry)
            except httpx.TransportError as exc:
                raise self._transport_error(exc) from None

    def _entry(self, line: bytes, path: str, on_entry: ItemCallback) -> bool:
        try:
            message = json.loads(line)
        except ValueError:
            raise UpstreamError(f"Argo CD sent a malformed stream line for {path}.",
                                retryable=True) from None
        if "error" in message:
            detail = self._redact(str(message["error"].get("message", message["error"])))
            raise UpstreamError(f"Argo CD's stream for {path} failed: {detail}", retryable=True)
        result = message.get("result", {})
        return bool(on_entry(result)) or bool(result.get("last"))

    # -- plumbing ---------------------------------------------------------------------------
    async def _headers(self) -> dict[str, str]:
        if self._token is None and self._login is not None:
            async with self._login_lock:
                if self._token is None:
                    await self._create_session(*self._login)
        if not self._token:
            return {}
        # The server reads a bearer token only when it looks like a JWT; else the cookie.
        if self._token.count(".") == 2:
            return {"Authorization": f"Bearer {self._token}"}
        return {"Cookie": f"argocd.token={self._token}"}

    async def _create_session(self, username: str, password: str) -> None:
        body = {"username": username, "password": password}
        try:
            response = await self._http.post("/api/v1/session", json=body)
        except httpx.TransportError as exc:
            raise self._transport_error(exc) from None
        if response.status_code != 200:
            raise ConfigurationError(
                f"Argo CD refused to log in as ARGOCD_USERNAME (HTTP {response.status_code}).",
                hint="Check ARGOCD_USERNAME and ARGOCD_PASSWORD, or set ARGOCD_TOKEN instead.")
        self._token = response.json().get("token")
        self._redact.add(self._token)

    @asynccontextmanager
    async def _open(self, method: HttpMethod, path: str, *, params: Params = None,
                    body: Mapping[str, Any] | None = None,
                    subject: str | None = None) -> AsyncIterator[httpx.Response]:
        """Send with retries; yield a streaming 2xx response or raise the mapped error."""
        attempt, relogged = 0, False
        while True:
            request = self._http.build_request(method, path, params=params, json=body,
                                               headers=await self._headers())
            try:
                response = await self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                resendable = isinstance(exc, _NOT_SENT) or method == "GET"
                attempt += 1
                if resendable and await self._retry(attempt, request, type(exc).__name__):
                    continue
                raise self._transport_error(exc) from None
            try:
                if response.status_code < 400:
                    yield response
                    return
                error_body = await self._read(response, ERROR_BODY_BYTES, "error body")
            finally:
                await response.aclose()
            status = response.status_code
            if status == 401 and self._login is not None and not relogged:
                self._token, relogged = None, True  # a session token expired: log in again
                continue
            if status in RETRY_STATUSES and method == "GET":
                attempt += 1
                if await self._retry(attempt, request, f"answered {status}"):
                    continue
            raise http_error(status, error_body, subject=subject, redact=self._redact)
