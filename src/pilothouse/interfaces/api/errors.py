"""Every API failure as JSON `{error, suggestion}`: what happened and what the caller can do."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pilothouse.errors import (
    ConfigurationError,
    PilothouseError,
    UpstreamError,
    UserInputError,
    error_body,
)
from pilothouse.observability.incidents import internal_error_response
from pilothouse.redaction import redact
from pilothouse.runtime.database import DatabaseUnavailable, outage

logger = logging.getLogger("pilothouse.api")


class ApiError(Exception):
    """A failure the API answers with `status` and a JSON body that says what to do."""

    def __init__(self, status: int, error: str, suggestion: str, *,
                 headers: Mapping[str, str] | None = None, **extra: Any) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.suggestion = suggestion
        self.headers = dict(headers or {})
        self.extra = extra

    def response(self) -> JSONResponse:
        body = {"error": self.error, "suggestion": self.suggestion, **self.extra}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


# Starlette raises plain HTTP errors for routing problems; give each a useful suggestion.
_HTTP_SUGGESTIONS = {
    404: "Check the path; the endpoints are listed at /docs.",
    405: "Check the HTTP method; the endpoints are listed at /docs.",
}


def _status_for(error: PilothouseError) -> int:
    if isinstance(error, DatabaseUnavailable):
        return 503
    if isinstance(error, UserInputError):
        return 400
    if isinstance(error, UpstreamError):
        return 502
    if isinstance(error, ConfigurationError):
        return 503
    return 500


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    suggestion = _HTTP_SUGGESTIONS.get(exc.status_code, "See /docs for how to call this API.")
    return JSONResponse(error_body(str(exc.detail), suggestion), status_code=exc.status_code,
                        headers=getattr(exc, "headers", None))


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [
        f"{'.'.join(str(p) for p in item.get('loc', ()) if p != 'body') or 'body'}: "
        f"{item.get('msg', 'invalid')}"
        for item in exc.errors()
    ]
    return JSONResponse(
        error_body("The request is invalid: " + "; ".join(problems),
                   "Fix the fields named above; the request schemas are at /docs.",
                   problems=problems),
        status_code=422,
    )


async def _pilothouse_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PilothouseError)
    return JSONResponse(
        error_body(redact(exc.message), exc.hint or "See the server log for details."),
        status_code=_status_for(exc),
    )


async def _unexpected(request: Request, exc: Exception) -> Any:
    # A driver's error for a database that went away is an outage, not a bug: say so (503).
    down = outage(exc)
    if down is not None:
        logger.warning("%s %s: %s", request.method, request.url.path, down.message)
        return await _pilothouse_error(request, down)
    return await internal_error_response(request, exc)


def install_error_handlers(app: FastAPI) -> None:
    """Make every error response of `app` a JSON `{error, suggestion}` body."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(PilothouseError, _pilothouse_error)
    app.add_exception_handler(Exception, _unexpected)
