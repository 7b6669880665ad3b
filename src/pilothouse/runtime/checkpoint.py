"""Checkpointers: SQLite in PILOTHOUSE_HOME by default, PostgreSQL by PILOTHOUSE_DATABASE_URL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langgraph.checkpoint.base import BaseCheckpointSaver

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.private_files import private_db
from pilothouse.runtime.database import is_postgres, open_pool, schema_lock


@asynccontextmanager
async def open_checkpointer(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """A durable checkpointer for the configured database, closed on exit."""
    url = settings.database_url
    if is_postgres(url):
        assert url is not None
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError as exc:
            raise ConfigurationError(
                "PILOTHOUSE_DATABASE_URL points at PostgreSQL, but its checkpointer is missing.",
                hint="pip install 'pilothouse[postgres]'",
            ) from exc
        # A pool, not the saver's single connection: a connection lost in an outage is
        # replaced on the next checkout, so checkpoints resume when the database is back.
        async with open_pool(url, name="checkpoints", max_size=10) as pool:
            shared = AsyncPostgresSaver(pool)
            async with pool.connection() as connection, schema_lock(connection):
                await shared.setup()  # idempotent; serialized with other replicas' set-up
            yield shared
        return
    if url and not url.startswith("sqlite:///"):
        raise ConfigurationError(
            f"PILOTHOUSE_DATABASE_URL has an unsupported scheme: {url.split(':', 1)[0]!r}.",
            hint="Use sqlite:///path/to/file.sqlite or postgresql://user@host/db.",
        )
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = settings.checkpoint_path if not url else settings.home.joinpath(url[len("sqlite:///"):])
    private_db(path)  # 0600 in a 0700 folder; SQLite gives its -wal and -shm the same mode
    async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
        yield saver
