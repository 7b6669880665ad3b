"""Map what an HTTP API answers (status, error body, transport failure) to Pilothouse errors.

The parts that do not depend on which API it is: transport failures (TLS, unreachable, timeout,
broken connection), the size caps, malformed JSON, and the generic status classes (a rejected
request, a server failure). Each API's `errors.py` maps the statuses it means something special
by (Argo CD's 403 for a hidden app, GitHub's 410 for expired logs) and falls back to
`status_error`. Text from the wire passes through the client's `Redactor` before it gets here,
and URLs are shown without their user-info part.
"""

from __future__ import annotations

import json
import ssl
from dataclasses import dataclass

import httpx

from pilothouse.errors import ConfigurationError, PilothouseError, UpstreamError, UserInputError


@dataclass(frozen=True)
class ApiProfile:
    """What an API's errors say about it: its name and the hints that fit it."""

    #: "Argo CD", "GitHub": how messages name the API.
    name: str
    #: What to check when the API is unreachable.
    unreachable_hint: str
    #: What to do when its TLS certificate does not verify.
    tls_hint: str
    #: The setting that raises the time limit (ARGOCD_TIMEOUT, GITHUB_TIMEOUT).
    timeout_setting: str
    #: How to ask for less when an answer is over its byte cap.
    narrow_hint: str
    #: What to check when the API answers with something that is not its JSON.
    url_hint: str
    #: What to do when it rejects a request (400, 409, 422).
    rejected_hint: str = "Correct the arguments and try again."
    #: What to do when it fails (5xx).
    failed_hint: str = "Try again shortly; if it persists, check the server."


def display_url(url: str) -> str:
    """`url` without user-info (`https://user:secret@host` must never reach a message)."""
    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


def body_json(body: bytes) -> object | None:
    """An error body parsed as JSON, or None when it is not JSON."""
    try:
        return json.loads(body)
    except ValueError:
        return None


def plain_text(body: bytes, limit: int = 300) -> str:
    """The start of a plain-text error body."""
    return body.decode("utf-8", "replace").strip()[:limit]


def status_error(api: ApiProfile, status: int, message: str) -> PilothouseError:
    """The error for a status the API's own mapping does not single out."""
    if status in (400, 409, 422):
        return UserInputError(f"{api.name} rejected the request: {message}.",
                              hint=api.rejected_hint)
    if status >= 500:
        return UpstreamError(f"{api.name} failed with HTTP {status}: {message}.",
                             hint=api.failed_hint, retryable=True)
    return UpstreamError(f"{api.name} answered HTTP {status}: {message}.")


def transport_error(api: ApiProfile, exc: httpx.TransportError, *, url: str,
                    timeout: float) -> PilothouseError:
    """The error for a request that got no HTTP answer."""
    shown = display_url(url)
    if isinstance(exc, httpx.ConnectError) and is_tls_failure(exc):
        return ConfigurationError(
            f"The TLS certificate of {api.name} at {shown} could not be verified.",
            hint=api.tls_hint)
    if isinstance(exc, httpx.ConnectError):
        return UpstreamError(f"{api.name} is unreachable at {shown} (connection failed).",
                             hint=api.unreachable_hint, retryable=True)
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamError(f"{api.name} at {shown} did not answer within {timeout:g} s.",
                             hint="Check that the server is healthy, narrow the request, or "
                                  f"raise {api.timeout_setting}.", retryable=True)
    return UpstreamError(f"The connection to {api.name} at {shown} broke "
                         f"({type(exc).__name__}).",
                         hint="Try again; if it persists, check the network and the server.",
                         retryable=True)


def is_tls_failure(exc: BaseException) -> bool:
    """Whether a connect failure was a certificate that did not verify."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def too_large(api: ApiProfile, kind: str, limit: int) -> UpstreamError:
    """An answer over its byte cap: dropped, and the caller told how to ask for less."""
    return UpstreamError(
        f"{api.name}'s {kind} exceeded the {limit // (1024 * 1024)} MiB safety cap and was "
        "dropped.", hint=api.narrow_hint)


def malformed_json(api: ApiProfile, path: str, detail: object) -> UpstreamError:
    """An answer that did not parse as the API's JSON."""
    return UpstreamError(f"{api.name} sent malformed JSON for {path} ({detail}).",
                         hint=api.url_hint, retryable=True)
