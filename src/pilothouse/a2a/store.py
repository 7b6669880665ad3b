"""Where A2A tasks persist: SQLite under PILOTHOUSE_HOME, or PostgreSQL by PILOTHOUSE_DATABASE_URL.

The SDK's `DatabaseTaskStore` over SQLAlchemy's async engine. Tasks get their own SQLite file
beside the checkpoints (two drivers writing one file would contend for its lock) and one table
per agent, so agents sharing a database never see each other's tasks. With PostgreSQL every
replica of an agent shares the table: a task outlives the process that ran it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from a2a.server.models import TaskModel, create_task_model
from a2a.server.tasks import DatabaseTaskStore
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError


def task_database_url(settings: Settings) -> str:
    """The SQLAlchemy async URL for the A2A task tables."""
    url = settings.database_url
    if url and url.startswith(("postgres://", "postgresql://")):
        # psycopg 3 is the driver LangGraph's Postgres checkpointer already needs.
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    if url and not url.startswith("sqlite:///"):
        raise ConfigurationError(
            f"PILOTHOUSE_DATABASE_URL has an unsupported scheme: {url.split(':', 1)[0]!r}.",
            hint="Use sqlite:///path/to/file.sqlite or postgresql://user@host/db.")
    checkpoints: Path = (settings.checkpoint_path if not url
                         else settings.home.joinpath(url[len("sqlite:///"):]))
    path = checkpoints.with_name(checkpoints.stem + "-a2a-tasks.sqlite")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigurationError(f"Cannot create the data directory {path.parent}: {exc}.",
                                 hint="Set PILOTHOUSE_HOME to a writable directory.") from exc
    return f"sqlite+aiosqlite:///{path}"


def _sqlite_pragmas(connection: Any, _: Any) -> None:
    # A task is saved on every event of a turn (about twenty): with the default rollback
    # journal each save waits for an fsync. WAL with synchronous=NORMAL keeps every committed
    # save across a process crash (a power cut may lose the last few) at a fraction of it.
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


@asynccontextmanager
async def open_task_engine(settings: Settings) -> AsyncIterator[AsyncEngine]:
    """The database engine for A2A tasks, disposed on exit."""
    url = task_database_url(settings)
    try:
        engine = create_async_engine(url, pool_pre_ping=url.startswith("postgresql"))
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"The A2A task store needs the database driver {exc.name}.",
            hint="pip install 'psycopg[binary]' for PostgreSQL, aiosqlite for SQLite.") from exc
    if url.startswith("sqlite"):
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    try:
        yield engine
    finally:
        await engine.dispose()


_TASK_MODELS: dict[str, type[TaskModel]] = {}


def _task_model(table: str) -> type[TaskModel]:
    """The ORM class of one task table, made once per process.

    The SDK's `create_task_model` registers every class under one name on one declarative base
    (a warning from the second table on, an error for the same table twice), so each table
    gets a base of its own.
    """
    if table not in _TASK_MODELS:
        base = type(f"Base_{table}", (DeclarativeBase,), {})
        _TASK_MODELS[table] = create_task_model(table, base)
    return _TASK_MODELS[table]


async def agent_task_store(engine: AsyncEngine, agent: str) -> DatabaseTaskStore:
    """The task table of one agent (created if missing)."""
    store = DatabaseTaskStore(engine)
    store.task_model = _task_model(f"a2a_tasks_{agent}")
    await store.initialize()
    return store
