"""Turn any failure during a run into a `PilothouseError` that says what to do."""

from __future__ import annotations

import re

from langgraph.errors import GraphRecursionError

from pilothouse.context.overflow import is_context_overflow
from pilothouse.errors import (
    ContextBudgetError,
    ModelProviderError,
    PilothouseError,
    UpstreamError,
)

# Bearer tokens, API keys and JWTs must not reach a terminal, a log or an API answer.
_SECRET = re.compile(
    r"(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{10,}|AKIA[0-9A-Z]{12,}|"
    r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,})"
)


def redact(text: str) -> str:
    """`text` with anything that looks like a credential replaced by `***`."""
    return _SECRET.sub("***", text)


def describe_failure(error: BaseException) -> PilothouseError:
    """Classify `error` by who must act; the message is redacted and bounded."""
    if isinstance(error, PilothouseError):
        return error
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
