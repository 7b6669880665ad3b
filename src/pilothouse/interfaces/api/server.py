"""What the API and the TUI share: where conversations are listed, the configured assistant.

`pilothouse serve` (interfaces/serve.py) is the one server; it mounts the API over its agents.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pilothouse.config import Settings
from pilothouse.interfaces.api.app import OpenAgent
from pilothouse.models.registry import ModelSetup


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
