"""Who may call: one authentication layer in front of every route of `pilothouse serve`.

`AuthMiddleware` sits outermost (inside CORS) and decides for the REST API, the web UI's API,
A2A JSON-RPC and the A2A REST binding alike: a request that does work carries a configured key
(`Authorization: Bearer <key>`) and runs as that key's identity, or, when no key is configured,
comes from this machine and runs as the anonymous local identity. What stays open holds no
conversation data: health and readiness probes, the page shell and its assets, the API
description and the agent cards (which declare the bearer scheme). `/metrics` is open to this
machine, and to other hosts with a key. Request bodies are bounded before the app reads them.

An address that sends too many wrong keys (PILOTHOUSE_AUTH_FAILURES_PER_MINUTE) is answered 429
with `Retry-After` before its next key is compared: guessing costs the server nothing more.

An API that runs shell commands after approval must not be open to a network by accident, so
without keys `pilothouse serve` refuses to start on anything but a loopback address, and
refuses requests that do not come from this machine (a reverse proxy on the same host would
otherwise turn it into an open service).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Annotated, Literal

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.authentication import AuthCredentials, UnauthenticatedUser
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, error_body
from pilothouse.http_guard import bearer_token, is_loopback
from pilothouse.interfaces.api.errors import ApiError
from pilothouse.interfaces.api.identity import LOCAL, Identity, KeyRing
from pilothouse.rate_limit import RateLimiter, retry_after

logger = logging.getLogger("pilothouse.api")

#: Paths that answer without a key: they carry no conversation data.
OPEN_PATHS = frozenset({"/", "/healthz", "/readyz", "/openapi.json", "/docs", "/favicon.ico"})
OPEN_PREFIXES = ("/static/", "/docs-static/")
AGENT_CARD = re.compile(r"^(/a2a/[A-Za-z0-9_-]+)?/\.well-known/agent-card\.json$")
METRICS = "/metrics"
# Declares the scheme in the OpenAPI description; the middleware does the checking.
_bearer = HTTPBearer(auto_error=False, description="An API key from PILOTHOUSE_API_KEYS.")
KEY_HINT = "Send 'Authorization: Bearer <key>' with a key from PILOTHOUSE_API_KEYS."
#: The window of PILOTHOUSE_AUTH_FAILURES_PER_MINUTE.
MINUTE = 60.0


def check_exposure(keyring: KeyRing, bind_host: str) -> None:
    """Refuse to serve without keys on a non-loopback address; log how requests are checked."""
    if keyring:
        logger.info("API keys required: %d identit(ies) configured: %s.", len(keyring.names),
                    ", ".join(keyring.names))
        return
    if not is_loopback(bind_host):
        raise ConfigurationError(
            f"No API keys are configured, so Pilothouse may only listen on 127.0.0.1, "
            f"not {bind_host}.",
            hint="Set PILOTHOUSE_API_KEYS=<name>=<key>[,...] to serve other hosts "
                 "(`pilothouse keys new --name NAME` prints an entry), or bind to 127.0.0.1.",
        )
    logger.warning(
        "No API keys configured: the API accepts unauthenticated requests from this machine "
        "only (bound to %s). Set PILOTHOUSE_API_KEYS to require keys.", bind_host,
    )


def is_open(path: str) -> bool:
    """True for paths anyone may read: probes, the page shell, API docs and agent cards."""
    return path in OPEN_PATHS or path.startswith(OPEN_PREFIXES) or bool(AGENT_CARD.match(path))


class AuthMiddleware:
    """Sets `scope["user"]` to the caller's `Identity`, or refuses the request (401/403, 429
    for an address over its wrong-key limit).

    `failures` counts wrong keys per client address (default: the setting's default per
    minute); give the one of `ApiLimits` so every door of a process shares it.
    """

    def __init__(self, app: ASGIApp, keyring: KeyRing,
                 failures: RateLimiter | None = None) -> None:
        self.app = app
        self.keyring = keyring
        self.failures = (failures if failures is not None
                         else RateLimiter(Settings.auth_failures_per_minute, MINUTE))

    def authenticate(self, scope: Scope) -> Identity | ApiError:
        """The caller's identity, or the error that refuses it."""
        if not self.keyring:
            if _from_loopback(scope):
                return LOCAL
            return ApiError(403, "This server has no API keys configured and only serves "
                                 "this machine.",
                            "Call it from 127.0.0.1, or configure PILOTHOUSE_API_KEYS.")
        token = bearer_token(scope)
        if token is None:
            return _unauthorized("Missing API key.")  # not a guess: not counted
        address = _client_address(scope)
        wait = self.failures.blocked(address)
        if wait is not None:  # refused before any comparison: a further guess learns nothing
            return too_many(f"Too many wrong API keys from {address}.",
                            "Wait, then send a key from the server's PILOTHOUSE_API_KEYS.",
                            wait)
        identity = self.keyring.identify(token)
        if identity is not None:
            return identity
        if self.failures.hit(address) is None and self.failures.blocked(address) is not None:
            logger.warning("%s sent %d wrong API keys within a minute; its requests with a "
                           "key are refused (429) until it slows down.", address,
                           self.failures.limit)
        return _unauthorized("Invalid API key.")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        found = self.authenticate(scope)
        path = scope.get("path", "")
        if isinstance(found, Identity):
            scope["user"], scope["auth"] = found, AuthCredentials(["authenticated"])
        elif is_open(path) or (path == METRICS and _from_loopback(scope)):
            scope["user"], scope["auth"] = UnauthenticatedUser(), AuthCredentials()
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # policy violation
            return
        else:
            await found.response()(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _from_loopback(scope: Scope) -> bool:
    client = scope.get("client")
    return is_loopback(client[0] if client else None)


def _client_address(scope: Scope) -> str:
    # uvicorn has already replaced a trusted local proxy's address with X-Forwarded-For's.
    client = scope.get("client")
    return str(client[0]) if client else "an unknown address"


def too_many(error: str, suggestion: str, wait: float) -> ApiError:
    """A 429 that says when to come back, in `Retry-After` and in the suggestion."""
    after = retry_after(wait)
    return ApiError(429, error, f"{suggestion} Retry after {after} s.",
                    headers={"Retry-After": after})


def _unauthorized(error: str) -> ApiError:
    return ApiError(401, error, KEY_HINT, headers={"WWW-Authenticate": "Bearer"})


def current_identity(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Identity:
    """A FastAPI dependency: who is calling, as `AuthMiddleware` established it.

    The middleware already refused anyone it could not identify; this refuses again should a
    route ever be reached without it (an app assembled without the middleware).
    """
    user = request.scope.get("user")
    if not isinstance(user, Identity):
        raise _unauthorized("Missing API key.")
    return user


class BodyLimitMiddleware:
    """Answers 413 for a request body over `max_bytes`, 408 for one not complete within
    `timeout` seconds, both read before the app sees it.

    The body is buffered (it is small by construction) and replayed to the app, so the limit
    holds for chunked uploads without a Content-Length too. The time limit is for the whole
    body, not per chunk: a client trickling a byte a second would otherwise hold a connection
    and a buffer for as long as it likes. (uvicorn has no such limit; the request head's is
    in `interfaces.listen`.) The 408 closes the connection: the rest of the body is not read.
    """

    def __init__(self, app: ASGIApp, max_bytes: int,
                 timeout: float = Settings.api_body_timeout_seconds) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        chunks: list[bytes] = []
        try:
            async with asyncio.timeout(self.timeout):
                read = await self._read(receive, chunks)
        except TimeoutError:
            await self._refuse(send, 408, f"The request body did not arrive within "
                                          f"{self.timeout:g} s.",
                               "Send the whole body at once (it is small), or raise "
                               "PILOTHOUSE_API_BODY_TIMEOUT for a slow link.")
            return
        if read == "too large":
            await self._too_large(send)
        if read != "complete":
            return  # answered, or the client went away
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive,
                    chunks: list[bytes]) -> Literal["complete", "too large", "gone"]:
        """Read the body into `chunks`, stopping as soon as it is over the limit."""
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return "gone"
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                return "too large"
            if not message.get("more_body", False):
                return "complete"

    async def _too_large(self, send: Send) -> None:
        await self._refuse(send, 413, f"The request body is larger than {self.max_bytes:,} "
                                      "bytes.",
                           "Send a shorter question, or raise PILOTHOUSE_API_MAX_BODY_BYTES.")

    async def _refuse(self, send: Send, status: int, error: str, suggestion: str) -> None:
        body = json.dumps(error_body(error, suggestion)).encode()
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode())]
        if status == 408:
            headers.append((b"connection", b"close"))  # the unread rest must not be parsed
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
