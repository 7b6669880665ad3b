"""Where A2A tasks persist: SQLite under PILOTHOUSE_HOME, or PostgreSQL by PILOTHOUSE_DATABASE_URL.

The SDK's `DatabaseTaskStore` over SQLAlchemy's async engine. Tasks get their own SQLite file
beside the checkpoints (two drivers writing one file would contend for its lock) and one table
per agent, so agents sharing a database never see each other's tasks. With PostgreSQL every
replica of an agent shares the table: a task outlives the process that ran it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from a2a.helpers import new_text_part
from a2a.server.models import TaskModel, create_task_model
from a2a.server.tasks import DatabaseTaskStore
from a2a.types.a2a_pb2 import Message, Role, TaskState, TaskStatus
from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError

log = logging.getLogger("pilothouse.a2a")


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


#: What a task interrupted by a crash says, for the client polling it.
INTERRUPTED_REASON = "The server stopped during this task; ask again."
_UNFINISHED = ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING")


async def fail_interrupted_tasks(store: DatabaseTaskStore) -> list[str]:
    """Mark tasks a dead process left submitted or working as failed; return their ids.

    Run at start-up, before the server takes requests: with SQLite the file belongs to this
    one process, so no run of those tasks can still be alive. Owners, history and artifacts
    (a partial answer) are kept; only the status changes, with the reason as its message.
    """
    model = store.task_model
    failed: list[str] = []
    async with store.async_session_maker.begin() as session:
        rows = (await session.execute(select(model).where(
            model.protocol_version == "1.0",
            model.status["state"].as_string().in_(_UNFINISHED)))).scalars().all()
        for row in rows:
            task = store._from_orm(row)  # the SDK's own row <-> proto mapping
            status = TaskStatus(state=TaskState.TASK_STATE_FAILED)
            status.timestamp.FromDatetime(datetime.now(UTC))
            status.message.CopyFrom(Message(
                role=Role.ROLE_AGENT, message_id=f"{task.id}-interrupted", task_id=task.id,
                context_id=task.context_id, parts=[new_text_part(INTERRUPTED_REASON)]))
            task.status.CopyFrom(status)
            await session.merge(store._to_orm(task, row.owner))
            failed.append(task.id)
    return failed


async def agent_task_store(engine: AsyncEngine, agent: str) -> DatabaseTaskStore:
    """The task table of one agent (created if missing), with crash leftovers failed.

    With PostgreSQL, replicas share the table and another one may be running those tasks
    right now, so only SQLite (one process per file) fails them at start-up.
    """
    store = DatabaseTaskStore(engine)
    store.task_model = _task_model(f"a2a_tasks_{agent}")
    await store.initialize()
    if engine.dialect.name == "sqlite":
        failed = await fail_interrupted_tasks(store)
        if failed:
            log.warning("Marked %d task(s) of the %s agent failed: the server stopped while "
                        "they ran (%s).", len(failed), agent, ", ".join(failed[:10]))
    return store
