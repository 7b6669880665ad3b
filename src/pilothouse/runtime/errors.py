"""Turn any failure during a run into a `PilothouseError` that says what to do."""

from __future__ import annotations

import logging

from langgraph.errors import GraphRecursionError

from pilothouse.context.overflow import is_context_overflow
from pilothouse.errors import (
    ContextBudgetError,
    ModelProviderError,
    PilothouseError,
    UpstreamError,
)
from pilothouse.observability.incidents import log_internal_error
from pilothouse.redaction import redact

# A storage failure's text carries SQL and file paths: the log gets it, the caller a reference.
_STORAGE_MODULES = ("sqlite3", "sqlalchemy", "aiosqlite", "psycopg")
log = logging.getLogger("pilothouse.runtime")


def describe_failure(error: BaseException) -> PilothouseError:
    """Classify `error` by who must act; the message is redacted and bounded."""
    if isinstance(error, PilothouseError):
        return error
    if any(type(error).__module__.startswith(m) for m in _STORAGE_MODULES):
        reference = log_internal_error(log, "A run failed in the conversation store", error)
        return UpstreamError(
            f"The conversation store failed (reference {reference}).",
            hint="Ask again; if it repeats, give this reference to the operator: the details "
                 "are in the server log.", retryable=True,
        )
    detail = redact(f"{type(error).__name__}: {error}")[:400]
    lowered = detail.lower()
    if isinstance(error, GraphRecursionError):
        return UpstreamError(
            "The agent took too many steps without finishing.",
            hint="Ask a narrower question, or raise PILOTHOUSE_MODEL_CALL_LIMIT.",
        )
    if is_context_overflow(error):
        return ContextBudgetError(
            "The conversation no longer fits the model's window.",
            hint="Start a new conversation or use a model with a larger window.",
        )
    if any(s in lowered for s in ("401", "authentication", "api key", "api_key", "unauthorized")):
        return ModelProviderError(
            f"The model provider rejected the credentials ({detail}).",
            hint="Check the provider's API key variable (see `pilothouse models`).",
        )
    if any(s in lowered for s in ("429", "rate limit", "ratelimit", "quota")):
        return ModelProviderError(
            f"The model provider is rate limiting requests ({detail}).",
            hint="Wait a minute and ask again.", retryable=True,
        )
    if any(s in lowered for s in ("connect", "timed out", "timeout", "unreachable", "503", "502")):
        return ModelProviderError(
            f"The model provider could not be reached ({detail}).",
            hint="Check the network and the provider's base URL, then ask again.",
            retryable=True,
        )
    return ModelProviderError(
        f"The run failed: {detail}",
        hint="Ask again; if it repeats, run `pilothouse doctor` and check the logs.",
        retryable=True,
    )
