"""Map what Argo CD answers (HTTP status, gRPC error body) to Pilothouse errors.

Transport failures, size caps and the generic status classes are `tools.http_api.errors`,
described for Argo CD by `ARGOCD`; this adds what Argo CD's statuses mean. Each message says what
happened and what to do, and none carries a credential: text that came from the wire passes
through the client's `Redactor` (pilothouse.redaction) before it reaches an exception.
"""

from __future__ import annotations

from pilothouse.errors import ConfigurationError, PilothouseError, UserInputError
from pilothouse.redaction import Redactor
from pilothouse.tools.http_api.errors import ApiProfile, body_json, plain_text, status_error

CREDENTIALS_HINT = (
    "The token is missing or expired: set ARGOCD_TOKEN to a valid token "
    "(`argocd account generate-token`), or set ARGOCD_USERNAME and ARGOCD_PASSWORD."
)

ARGOCD = ApiProfile(
    name="Argo CD",
    unreachable_hint="Check ARGOCD_URL and that the Argo CD server is running and reachable "
                     "from here.",
    tls_hint="Set ARGOCD_CA_BUNDLE to the CA file that signed it, or ARGOCD_VERIFY_SSL=false "
             "for a test server you trust.",
    timeout_setting="ARGOCD_TIMEOUT",
    narrow_hint="Narrow the request (a project, a label selector or a name).",
    url_hint="Check that ARGOCD_URL points at the Argo CD API.",
    failed_hint="Try again shortly; if it persists, check the Argo CD server.",
)


def error_message(body: bytes) -> str:
    """The `message` of an Argo CD error body, or the start of a plain-text one."""
    data = body_json(body)
    if data is None:
        return plain_text(body)
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or "")[:300]
    return ""


class AppSubject(str):
    """What a request is about when that is one application: "Application 'name'"."""

    app: str

    def __new__(cls, app: str) -> AppSubject:
        subject = super().__new__(cls, f"Application '{app}'")
        subject.app = app
        return subject


class NotFound(UserInputError):
    """The object does not exist (in the project asked for), or this account may not see it;
    `application` names the application asked for, when it was one."""

    def __init__(self, message: str, *, hint: str | None = None,
                 application: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.application = application


def http_error(status: int, body: bytes, *, subject: str | None,
               redact: Redactor) -> PilothouseError:
    """The error for an HTTP failure; `subject` (e.g. "Application 'x'") names what was asked."""
    message = redact(error_message(body)) or f"HTTP {status}"
    if status == 401:
        return ConfigurationError(f"Argo CD rejected the credentials ({message}).",
                                  hint=CREDENTIALS_HINT)
    application = subject.app if isinstance(subject, AppSubject) else None
    if status == 403 and subject:
        # Argo CD answers 403, not 404, for an app it will not confirm exists.
        return NotFound(
            f"{subject} was not found, or this account is not permitted to see it.",
            hint="Check the exact name with search_argocd_resources or list_applications.",
            application=application)
    if status == 403:
        return ConfigurationError(f"Argo CD denied permission ({message}).",
                                  hint="The account's RBAC policy does not allow this; "
                                       "ask an Argo CD admin to grant it.")
    if status == 404:
        return NotFound(f"{subject or 'The resource'} was not found ({message}).",
                        hint="Check the name and project.", application=application)
    if status == 400 and "another operation is already in progress" in message:
        return UserInputError(f"Argo CD refused: {message}.",
                              hint="Wait for the running operation to finish; get_application "
                                   "with include_operation=true shows it.")
    if "selector" in message and status == 500:
        return UserInputError(f"Invalid label selector: {message}.",
                              hint="Use Kubernetes syntax, e.g. env=production,team in (a,b).")
    return status_error(ARGOCD, status, message)
