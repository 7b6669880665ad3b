"""A middleware that only rewrites the model request, the same way for sync and async runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse


class RequestRewriteMiddleware(AgentMiddleware):
    """Subclasses implement `rewrite`; both call paths hand its result to the model."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        raise NotImplementedError

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(self.rewrite(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(self.rewrite(request))
