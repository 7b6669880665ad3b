"""GitHub's REST conventions, shared by every sandbox endpoint: error bodies, tokens, paging.

Pages are announced only in the `Link` header (`rel` prev/next/last/first, in GitHub's order)
and there is no total count; `per_page` defaults to 30 and is silently capped at 100; a
malformed number is ignored rather than refused. Errors are
`{"message","documentation_url","status"}` with `status` as a string.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, TypeVar
from urllib.parse import urlencode

from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

DOCS = "https://docs.github.com/rest"
RATE_DOCS = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
T = TypeVar("T")


def json_response(value: Any, status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(value, separators=(",", ":"))
    return Response(body, status, headers, media_type="application/json; charset=utf-8")


def gh_error(status: int, message: str, docs: str = DOCS, **extra: Any) -> Response:
    """An error body the way GitHub writes it (`status` is a string)."""
    return json_response({"message": message, **extra, "documentation_url": docs,
                          "status": str(status)}, status)


def validation_failed(resource: str, field: str, message: str) -> Response:
    """GitHub's 422 for a parameter it will not take."""
    return gh_error(422, "Validation Failed",
                    errors=[{"resource": resource, "field": field, "code": "invalid",
                             "message": message}])


def as_int(raw: str | None, default: int) -> int:
    try:
        return int(raw) if raw is not None else default
    except ValueError:
        return default  # GitHub ignores a malformed number and uses the default


def token_of(request: Request) -> str | None:
    """The token of `Authorization: Bearer <t>` or `token <t>`; "" for another scheme."""
    header = request.headers.get("authorization")
    if header is None:
        return None
    scheme, _, value = header.partition(" ")
    return value.strip() if scheme.lower() in ("bearer", "token") else ""


def api_root(request: Request) -> str:
    """Where this API is served, mount prefix included (GitHub Enterprise: `.../api/v3`);
    `request.base_url` would drop a mount's prefix."""
    return f"{request.url.scheme}://{request.url.netloc}{request.scope.get('root_path', '')}"


def page_size(request: Request) -> int:
    per_page = as_int(request.query_params.get("per_page"), DEFAULT_PER_PAGE)
    return DEFAULT_PER_PAGE if per_page < 1 else min(per_page, MAX_PER_PAGE)


def page_of(request: Request, items: Sequence[T], link_path: str,
            cap: int | None = None) -> tuple[Sequence[T], dict[str, str]]:
    """One page of `items` and the `Link` header announcing the others (`cap`: how many are
    reachable at all, as search serves only 1,000)."""
    query = request.query_params
    per_page = page_size(request)
    page = max(1, as_int(query.get("page"), 1))
    reachable = len(items) if cap is None else min(len(items), cap)
    last = max(1, math.ceil(reachable / per_page))
    base = api_root(request) + link_path

    def link(number: int, rel: str) -> str:
        params = {**dict(query), "page": str(number)}
        return f'<{base}?{urlencode(params)}>; rel="{rel}"'

    links = []
    if page > 1:
        links.append(link(page - 1, "prev"))
    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links.append(link(1, "first"))
    chunk = items[(page - 1) * per_page: page * per_page]
    return chunk, ({"link": ", ".join(links)} if links else {})


class SandboxHeaders:
    """ASGI middleware: every answer says it comes from the sandbox, and the API version."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.append("X-Pilothouse-Sandbox", "true")
                headers.append("X-GitHub-Api-Version-Selected", "2022-11-28")
            await send(message)

        await self.app(scope, receive, stamped if scope["type"] == "http" else send)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404/405 as GitHub's JSON error."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    return gh_error(status, "Not Found" if status == 404 else str(getattr(exc, "detail", "")))
