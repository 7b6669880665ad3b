"""One time limit per model call, whatever the provider: a stalled call ends the turn clearly.

Providers' own timeouts differ (some SDKs have none, the local model runs in its own process)
and their defaults retry a stalled request for many minutes. This layer bounds every call the
agent makes, including retries inside the provider client, with `PILOTHOUSE_MODEL_TIMEOUT`
seconds, and turns a stall (or the provider's own timeout error) into one `ModelProviderError`
that says what to do. The run ends before any answer is stored, so the conversation keeps the
question and the next turn starts from a clean history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from pilothouse.errors import ModelProviderError


def model_timeout_error(seconds: float) -> ModelProviderError:
    """The error a stalled model call ends with."""
    return ModelProviderError(
        f"The model did not answer within {seconds:g} s, so this turn was stopped; the "
        "conversation is kept.",
        hint="Ask again; raise PILOTHOUSE_MODEL_TIMEOUT for a slow model, or check the provider.",
        retryable=True,
    )


def _is_provider_timeout(error: BaseException) -> bool:
    # openai.APITimeoutError, httpx.ReadTimeout, anthropic's and Google's timeouts alike.
    return any("timeout" in cls.__name__.lower() for cls in type(error).__mro__)


class ModelTimeoutMiddleware(AgentMiddleware):
    """Bounds each model call; place it innermost so each retry of an outer layer is timed alone.

    `seconds` is the configured limit the error names; `cap` (default: `seconds`) is when the
    call is abandoned here, longer when the provider's client times out (and retries) itself.
    """

    def __init__(self, seconds: float, cap: float | None = None) -> None:
        super().__init__()
        self.seconds = seconds
        self.cap = seconds if cap is None else cap

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse],
    ) -> ModelResponse:
        # A blocking call cannot be interrupted from here; the provider's own timeout bounds it.
        try:
            return handler(request)
        except Exception as exc:
            if _is_provider_timeout(exc):
                raise model_timeout_error(self.seconds) from exc
            raise

    async def awrap_model_call(
        self, request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        try:
            async with asyncio.timeout(self.cap):
                return await handler(request)
        except TimeoutError as exc:
            raise model_timeout_error(self.seconds) from exc
        except Exception as exc:
            if _is_provider_timeout(exc):
                raise model_timeout_error(self.seconds) from exc
            raise
