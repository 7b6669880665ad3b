"""Map what GitHub answers (status, error body, rate-limit headers) to Pilothouse errors whose
messages say what to do.

Transport failures, size caps and the generic status classes are `tools.http_api.errors`,
described for GitHub by `GITHUB`. No message carries the token: wire text passes through the
client's `Redactor` (pilothouse.redaction) first, and URLs are shown without any user-info part.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from pilothouse.errors import ConfigurationError, PilothouseError, UpstreamError, UserInputError
from pilothouse.redaction import Redactor
from pilothouse.tools.http_api.errors import ApiProfile, body_json, plain_text, status_error

TOKEN_HINT = ("Set GITHUB_TOKEN to a valid token: a fine-grained token with read access to "
              "Metadata, Pull requests, Issues and Actions of the repositories, or a classic "
              "token with the `repo` scope.")

GITHUB = ApiProfile(
    name="GitHub",
    unreachable_hint="Check GITHUB_API_URL (GitHub Enterprise: https://HOST/api/v3), the network "
                     "and any proxy.",
    tls_hint="For GitHub Enterprise with a private CA, install the CA in the system trust store "
             "(or point SSL_CERT_FILE at it).",
    timeout_setting="GITHUB_TIMEOUT",
    narrow_hint="Ask for a smaller page (per_page) or a narrower filter.",
    url_hint="Check that GITHUB_API_URL points at the GitHub API (GitHub Enterprise: "
             "https://HOST/api/v3).",
    rejected_hint="Correct the arguments (a filter value, the query syntax or the page number) "
                  "and ask again.",
    failed_hint="Try again shortly; https://www.githubstatus.com shows incidents.",
)


class RateLimitError(UpstreamError):
    """GitHub's rate limit is spent; `reset_at` (epoch seconds) says when it refills."""

    def __init__(self, message: str, *, hint: str, reset_at: float) -> None:
        super().__init__(message, hint=hint, retryable=True)
        self.reset_at = reset_at

    def to_payload(self) -> dict[str, str]:
        body = super().to_payload()
        body["resets_at"] = clock_time(self.reset_at, with_date=True)
        return body


def clock_time(moment: float, *, with_date: bool = False) -> str:
    fmt = "%Y-%m-%dT%H:%M:%SZ" if with_date else "%H:%M:%S UTC"
    return datetime.fromtimestamp(moment, UTC).strftime(fmt)


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def rate_limited(resource: str, limit: int | None, reset_at: float, now: float, *,
                 secondary: bool = False) -> RateLimitError:
    """The error for a spent quota, naming the reset time in UTC and from now."""
    when = f"{clock_time(reset_at)} (in {_duration(reset_at - now)})"
    if secondary:
        return RateLimitError(
            f"GitHub's secondary rate limit stopped this request; retry after {when}.",
            hint="Make fewer requests in a burst: ask for one page at a time.", reset_at=reset_at)
    quota = f"0 of {limit} left" if limit else "none left"
    return RateLimitError(
        f"GitHub's API rate limit for {resource} requests is exhausted ({quota}); it resets at "
        f"{when}.",
        hint="Ask again after the reset. Meanwhile prefer one search or a filtered list over "
             "many calls; an authenticated GITHUB_TOKEN gets 5,000 requests an hour "
             "(30 searches a minute).", reset_at=reset_at)


def error_message(body: bytes) -> str:
    """GitHub's `message` plus any validation `errors`, or the start of a plain-text body."""
    data = body_json(body)
    if data is None:
        return plain_text(body)
    if not isinstance(data, dict):
        return ""
    message = str(data.get("message") or "")
    details = [str(e.get("message") or e.get("code") or "") for e in data.get("errors") or []
               if isinstance(e, dict)]
    if any(details):
        message += ": " + "; ".join(d for d in details if d)
    return message[:400]


def http_error(status: int, body: bytes, *, subject: str | None, has_token: bool,
               redact: Redactor, meant: Sequence[str] = ()) -> PilothouseError:
    """The error for an HTTP failure; `subject` (e.g. "Repository o/x") names what was asked,
    `meant` the visible repositories a 404 may have been meant for (`owner/name`)."""
    message = redact(error_message(body)) or f"HTTP {status}"
    what = subject or "The resource"
    if status == 401:
        if not has_token:
            return ConfigurationError("GitHub requires authentication for this request and "
                                      "GITHUB_TOKEN is not set.", hint=TOKEN_HINT)
        return ConfigurationError(f"GitHub rejected the token ({message}): it is invalid, "
                                  "expired or revoked.", hint=TOKEN_HINT)
    if status == 403:
        return ConfigurationError(
            f"GitHub denied access to {what.lower() if subject else 'this resource'} "
            f"({message}).",
            hint="The token lacks a permission for this, or is not authorized for the "
                 "organization's SAML SSO; grant it read access, or ask an organization owner.")
    if status == 404 and meant:
        return UserInputError(
            f"{what} was not found, or the token cannot see it.",
            hint=f"The token can see {' and '.join(meant)}: ask again with the owner and "
                 "repository name of the one meant.")
    if status == 404:
        hint = ("Check the owner and repository name (owner/name) and the "
                "number. A private repository looks missing to a token without access to it")
        hint += (": GITHUB_TOKEN is not set, so only public repositories are visible."
                 if not has_token else ": check that GITHUB_TOKEN can read it.")
        return UserInputError(f"{what} was not found, or the token cannot see it.", hint=hint)
    if status == 410:
        return UserInputError(f"{what} is gone ({message}).",
                              hint="GitHub keeps workflow logs for a limited time (90 days by "
                                   "default); pick a newer run.")
    return status_error(GITHUB, status, message)
