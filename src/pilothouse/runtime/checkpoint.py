"""Checkpointers: SQLite in PILOTHOUSE_HOME by default, PostgreSQL by PILOTHOUSE_DATABASE_URL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """A durable checkpointer for the configured database, closed on exit."""
    url = settings.database_url
    if url and url.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError as exc:
            raise ConfigurationError(
                "PILOTHOUSE_DATABASE_URL points at PostgreSQL, but its checkpointer is missing.",
                hint="pip install langgraph-checkpoint-postgres psycopg[binary]",
            ) from exc
        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
        return
    if url and not url.startswith("sqlite:///"):
        raise ConfigurationError(
            f"PILOTHOUSE_DATABASE_URL has an unsupported scheme: {url.split(':', 1)[0]!r}.",
            hint="Use sqlite:///path/to/file.sqlite or postgresql://user@host/db.",
        )
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = settings.checkpoint_path if not url else settings.home.joinpath(url[len("sqlite:///"):])
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot create the data directory {path.parent}: {exc.strerror}.",
            hint="Set PILOTHOUSE_HOME to a writable directory.",
        ) from exc
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
