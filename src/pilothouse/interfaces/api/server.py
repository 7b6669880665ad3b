"""`pilothouse serve`: the API and web UI over the configured assistant, run by uvicorn."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from pilothouse.config import Settings
from pilothouse.interfaces.api.app import OpenAgent, create_api_app
from pilothouse.models.registry import ModelSetup

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080  # the port `pilothouse serve` uses for A2A too


def registry_path(settings: Settings) -> Path:
    """Where the conversation list lives: beside the checkpoints in PILOTHOUSE_HOME."""
    return settings.home / "state" / "conversations.sqlite"


def open_configured_assistant(
    settings: Settings, model: ModelSetup | None = None
) -> OpenAgent:
    """An `open_agent` factory for the assistant `settings` describe (and `model`, if given)."""

    @asynccontextmanager
    async def open_agent() -> AsyncIterator[object]:
        from pilothouse.agents.assistant import open_assistant

        async with open_assistant(settings, model=model) as assistant:
            yield assistant

    return open_agent


def assistant_app(
    settings: Settings,
    *,
    model: ModelSetup | None = None,
    host: str = DEFAULT_HOST,
    api_keys: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = 64_000,
) -> FastAPI:
    """The API app over the assistant `settings` describe (opened when the app starts)."""
    return create_api_app(open_configured_assistant(settings, model), api_keys=api_keys,
                          admin_keys=settings.admin_keys, bind_host=host,
                          registry_path=registry_path(settings),
                          max_body_bytes=max_body_bytes, cors_origins=cors_origins)


def serve_api(
    settings: Settings,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    api_keys: Sequence[str] = (),
    cors_origins: Sequence[str] = (),
    max_body_bytes: int = 64_000,
) -> None:
    """Serve the API and web UI until interrupted (ConfigurationError if it may not start)."""
    app = assistant_app(settings, host=host, api_keys=api_keys, cors_origins=cors_origins,
                        max_body_bytes=max_body_bytes)
    # ws="none": no websockets here, and their import warnings would only add noise.
    uvicorn.run(app, host=host, port=port, ws="none",
                log_level=settings.log_level.lower(), timeout_graceful_shutdown=10)
