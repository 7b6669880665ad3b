"""Map what Argo CD answers (HTTP status, gRPC error body, transport failure) to Pilothouse errors.

Each message says what happened and what to do, and none carries a credential: text that came
from the wire passes through the client's `Redactor` (pilothouse.redaction) before it reaches
an exception.
"""

from __future__ import annotations

import json
import ssl

import httpx

from pilothouse.errors import ConfigurationError, PilothouseError, UpstreamError, UserInputError
from pilothouse.redaction import Redactor

CREDENTIALS_HINT = (
    "The token is missing or expired: set ARGOCD_TOKEN to a valid token "
    "(`argocd account generate-token`), or set ARGOCD_USERNAME and ARGOCD_PASSWORD."
)


def error_message(body: bytes) -> str:
    """The `message` of an Argo CD error body, or the start of a plain-text one."""
    try:
        data = json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace").strip()[:300]
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or "")[:300]
    return ""


def http_error(status: int, body: bytes, *, subject: str | None,
               redact: Redactor) -> PilothouseError:
    """The error for an HTTP failure; `subject` (e.g. "Application 'x'") names what was asked."""
    message = redact(error_message(body)) or f"HTTP {status}"
    if status == 401:
        return ConfigurationError(f"Argo CD rejected the credentials ({message}).",
                                  hint=CREDENTIALS_HINT)
    if status == 403 and subject:
        # Argo CD answers 403, not 404, for an app it will not confirm exists.
        return UserInputError(
            f"{subject} was not found, or this account is not permitted to see it.",
            hint="Check the exact name with search_argocd_resources or list_applications.")
    if status == 403:
        return ConfigurationError(f"Argo CD denied permission ({message}).",
                                  hint="The account's RBAC policy does not allow this; "
                                       "ask an Argo CD admin to grant it.")
    if status == 404:
        return UserInputError(f"{subject or 'The resource'} was not found ({message}).",
                              hint="Check the name and project.")
    if status == 400 and "another operation is already in progress" in message:
        return UserInputError(f"Argo CD refused: {message}.",
                              hint="Wait for the running operation to finish; get_application "
                                   "with include_operation=true shows it.")
    if status in (400, 409, 422):
        return UserInputError(f"Argo CD refused the request: {message}.",
                              hint="Correct the arguments and try again.")
    if "selector" in message and status == 500:
        return UserInputError(f"Invalid label selector: {message}.",
                              hint="Use Kubernetes syntax, e.g. env=production,team in (a,b).")
    if status >= 500:
        return UpstreamError(f"Argo CD failed with HTTP {status}: {message}.",
                             hint="Try again shortly; if it persists, check the Argo CD server.",
                             retryable=True)
    return UpstreamError(f"Argo CD answered HTTP {status}: {message}.")


def transport_error(exc: httpx.TransportError, *, url: str, timeout: float) -> PilothouseError:
    """The error for a request that got no HTTP answer."""
    if isinstance(exc, httpx.ConnectError) and _is_tls_failure(exc):
        return ConfigurationError(
            f"The TLS certificate of Argo CD at {url} could not be verified.",
            hint="Set ARGOCD_CA_BUNDLE to the CA file that signed it, or "
                 "ARGOCD_VERIFY_SSL=false for a test server you trust.")
    if isinstance(exc, httpx.ConnectError):
        return UpstreamError(f"Argo CD is unreachable at {url} (connection failed).",
                             hint="Check ARGOCD_URL and that the Argo CD server is running "
                                  "and reachable from here.", retryable=True)
    if isinstance(exc, httpx.TimeoutException):
        return UpstreamError(f"Argo CD at {url} did not answer within {timeout:g} s.",
                             hint="Check that the server is healthy, narrow the request, or "
                                  "raise ARGOCD_TIMEOUT.", retryable=True)
    return UpstreamError(f"The connection to Argo CD at {url} broke ({type(exc).__name__}).",
                         hint="Try again; if it persists, check the network and the server.",
                         retryable=True)


def _is_tls_failure(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def too_large(kind: str, limit: int) -> UpstreamError:
    return UpstreamError(
        f"Argo CD's {kind} exceeded the {limit // (1024 * 1024)} MiB safety cap and was dropped.",
        hint="Narrow the request (a project, a label selector or a name).")
