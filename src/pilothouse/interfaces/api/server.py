"""Where the API and the TUI keep the conversation list.

`pilothouse serve` (interfaces/serve.py) is the one server; it mounts the API over the agents
the factory (`pilothouse.agents.factory`) built.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from pilothouse.config import Settings
from pilothouse.interfaces.api.registry import ConversationRegistry, ConversationStore
from pilothouse.runtime.database import is_postgres


def registry_path(settings: Settings) -> Path:
    """Where the SQLite conversation list lives: beside the checkpoints in PILOTHOUSE_HOME."""
    return settings.home / "state" / "conversations.sqlite"


@asynccontextmanager
async def open_registry(settings: Settings) -> AsyncIterator[ConversationStore]:
    """The conversation list where the checkpoints are: PostgreSQL by PILOTHOUSE_DATABASE_URL
    (every replica sees the same list), else SQLite in PILOTHOUSE_HOME."""
    if is_postgres(settings.database_url):
        from pilothouse.interfaces.api.registry_postgres import PostgresConversationRegistry

        assert settings.database_url is not None
        async with PostgresConversationRegistry.open(settings.database_url) as shared:
            yield shared
        return
    async with ConversationRegistry.open(registry_path(settings)) as local:
        yield local
