"""Unexpected failures: the whole story to the log under a reference, only the reference out.

A caller must never see a stack trace, SQL or a file path (they may hold data or secrets and
help nobody act); the operator needs all of it. Both get the same short reference, so a
report from a caller finds its log entry.
"""

from __future__ import annotations

import logging
import uuid

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pilothouse.errors import error_body

_log = logging.getLogger("pilothouse.errors")


def new_reference() -> str:
    """A short id that names one failure in the log and in the caller's error."""
    return uuid.uuid4().hex[:12]


def log_internal_error(logger: logging.Logger, what: str, error: BaseException) -> str:
    """Log `error` with its traceback under a new reference; return the reference."""
    reference = new_reference()
    logger.error("%s [reference %s]", what, reference,
                 exc_info=(type(error), error, error.__traceback__))
    return reference


def internal_error_text(reference: str) -> str:
    """What a caller is told about an unexpected failure: what happened and what to do."""
    return (f"The server failed to handle this request (reference {reference}). Try again; if "
            "it repeats, give this reference to the operator: the details are in the server log.")


async def internal_error_response(request: Request, exc: Exception) -> Response:
    """A Starlette/FastAPI exception handler for `Exception`: JSON with the reference only.

    Registered by the REST API and by the A2A app alike, so an unexpected failure on either
    door reads the same and is logged the same.
    """
    reference = log_internal_error(_log, f"Unexpected error on {request.method} "
                                         f"{request.url.path}", exc)
    return JSONResponse(error_body(internal_error_text(reference),
                                   "Try again; if it repeats, check the server log."),
                        status_code=500, headers={"X-Error-Reference": reference})
