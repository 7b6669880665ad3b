"""Errors grouped by who must act; every message says what to do next.

- `UserInputError`: the person asking must change the request (bad argument, unknown app).
- `ConfigurationError`: whoever runs Pilothouse must change a setting or install something.
- `UpstreamError`: a system we talk to (model provider, Argo CD, GitHub) failed; retry or check it.
- `ContextBudgetError`: the conversation cannot be made to fit the model's window.
- `ApprovalRequired` / `CommandRefused`: a safety policy stopped an action.
"""

from __future__ import annotations


def error_body(error: str, suggestion: str, **extra: object) -> dict[str, object]:
    """The JSON shape of every error an HTTP endpoint returns: what happened, what to do."""
    return {"error": error, "suggestion": suggestion, **extra}


class PilothouseError(Exception):
    """Base class: `message` says what happened, `hint` says what to do."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        self.message = message
        self.hint = hint
        super().__init__(message if hint is None else f"{message} ({hint})")

    def to_payload(self) -> dict[str, str]:
        """Render as a JSON-able error body for tools and APIs."""
        body = {"error": self.message, "kind": type(self).__name__}
        if self.hint:
            body["suggestion"] = self.hint
        return body


class UserInputError(PilothouseError):
    """The request itself is wrong: the person must change it."""


class ConfigurationError(PilothouseError):
    """A setting, file or package is missing or invalid: the operator must fix it."""


class UpstreamError(PilothouseError):
    """A remote system failed; `retryable` says whether trying again may help."""

    def __init__(self, message: str, *, hint: str | None = None, retryable: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.retryable = retryable


class ModelProviderError(UpstreamError):
    """The language model provider returned an error."""


class ContextBudgetError(PilothouseError):
    """The conversation cannot be reduced to fit the model's context window."""


class ToolTimeoutError(UpstreamError):
    """A tool did not answer within its time limit."""

    def __init__(self, tool: str, seconds: float) -> None:
        super().__init__(
            f"Tool '{tool}' did not answer within {seconds:g} s and was stopped.",
            hint="Narrow the request (smaller page, a filter) or raise PILOTHOUSE_TOOL_TIMEOUT.",
            retryable=True,
        )
        self.tool = tool
        self.seconds = seconds


class ResourceExhaustedError(UpstreamError):
    """The process is near its memory budget; new work is refused until it drops."""


class CommandRefused(PilothouseError):
    """A shell command was refused by policy and will never run as written."""


class ApprovalRequired(PilothouseError):
    """An action needs a person's approval before it runs."""
