"""Who may call the API: bearer keys, or this machine only when no key is configured.

An API that runs shell commands after approval must not be open to a network by accident, so
an unauthenticated API refuses to start on anything but a loopback address, and also refuses
requests that do not come from this machine (a reverse proxy on the same host would otherwise
turn it into an open service). Request bodies are bounded before the app reads them.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Sequence
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pilothouse.errors import ConfigurationError
from pilothouse.interfaces.api.errors import ApiError, error_body

logger = logging.getLogger("pilothouse.api")

LOOPBACK_NAMES = frozenset({"localhost"})
_bearer = HTTPBearer(auto_error=False, description="An API key from PILOTHOUSE_API_KEYS.")


def is_loopback(host: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and `localhost`."""
    if not host:
        return False
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(api_keys: Sequence[str], bind_host: str) -> None:
    """Refuse to serve without keys on a non-loopback address; log how requests are checked."""
    if api_keys:
        logger.info("API keys required: %d key(s) configured.", len(api_keys))
        return
    if not is_loopback(bind_host):
        raise ConfigurationError(
            f"No API keys are configured, so the API may only listen on 127.0.0.1, "
            f"not {bind_host}.",
            hint="Set PILOTHOUSE_API_KEYS=<key>[,<key>...] to serve other hosts, "
                 "or bind to 127.0.0.1.",
        )
    logger.warning(
        "No API keys configured: the API accepts unauthenticated requests from this machine "
        "only (bound to %s). Set PILOTHOUSE_API_KEYS to require keys.", bind_host,
    )


def _unauthorized(error: str) -> ApiError:
    return ApiError(
        401, error, "Send 'Authorization: Bearer <key>' with a key from PILOTHOUSE_API_KEYS.",
        headers={"WWW-Authenticate": "Bearer"},
    )


async def require_api_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> None:
    """A FastAPI dependency: the request carries a configured key (or comes from loopback)."""
    keys: Sequence[str] = request.app.state.api_keys
    if not keys:
        client = request.client.host if request.client else None
        if not is_loopback(client):
            raise ApiError(403, "This API has no keys configured and only serves this machine.",
                           "Call it from 127.0.0.1, or configure PILOTHOUSE_API_KEYS.")
        return
    if credentials is None:
        raise _unauthorized("Missing API key.")
    given = credentials.credentials.encode()
    # Compare against every key in constant time, so timing does not reveal a prefix.
    if not any(hmac.compare_digest(given, key.encode()) for key in keys):
        raise _unauthorized("Invalid API key.")


class BodyLimitMiddleware:
    """Answers 413 for a request body over `max_bytes`, read before the app sees it.

    The body is buffered (it is small by construction) and replayed to the app, so the limit
    holds for chunked uploads without a Content-Length too.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_bytes:
                await self._too_large(send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send) -> None:
        body = json.dumps(error_body(
            f"The request body is larger than {self.max_bytes:,} bytes.",
            "Send a shorter question, or raise PILOTHOUSE_API_MAX_BODY_BYTES.",
        )).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        ]})
        await send({"type": "http.response.body", "body": body})
