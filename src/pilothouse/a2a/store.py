"""Where A2A tasks persist: SQLite under PILOTHOUSE_HOME, or PostgreSQL by PILOTHOUSE_DATABASE_URL.

The SDK's `DatabaseTaskStore` over SQLAlchemy's async engine. Tasks get their own SQLite file
beside the checkpoints (two drivers writing one file would contend for its lock) and one table
per agent, so agents sharing a database never see each other's tasks. With PostgreSQL every
replica of an agent shares the table: a task outlives the process that ran it.

A task left submitted or working by a process that died must be failed (its client would
poll it forever), but with several replicas a task in that state may be running right now in
another one. So on PostgreSQL each unfinished task records which replica runs it (its
liveness-lock key, `runtime.shared_locks`) in `a2a_task_runners`, written *before* the task
row, and a sweep (at start-up, then every minute) fails only the tasks whose runner no longer
holds its liveness lock:
PostgreSQL frees a session's advisory locks the moment its process dies, so this needs no
heartbeat, no clock and no lease to expire, and a live replica's tasks are never touched.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from a2a.helpers import new_text_part
from a2a.server.context import ServerCallContext
from a2a.server.models import TaskModel, create_task_model
from a2a.server.tasks import DatabaseTaskStore
from a2a.types.a2a_pb2 import Message, Role, Task, TaskState, TaskStatus
from sqlalchemy import BigInteger, Column, MetaData, String, Table, event, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.orm import DeclarativeBase

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.private_files import private_db
from pilothouse.runtime.database import (
    LOCK_NAMESPACE,
    SCHEMA_LOCK,
    SCHEMA_POLL_SECONDS,
    conninfo,
    is_postgres,
)

log = logging.getLogger("pilothouse.a2a")


def task_database_url(settings: Settings) -> str:
    """The SQLAlchemy async URL for the A2A task tables."""
    url = settings.database_url
    if is_postgres(url):
        assert url is not None
        # psycopg 3 is the driver LangGraph's Postgres checkpointer already needs.
        return "postgresql+psycopg://" + conninfo(url).split("://", 1)[1]
    if url and not url.startswith("sqlite:///"):
        raise ConfigurationError(
            f"PILOTHOUSE_DATABASE_URL has an unsupported scheme: {url.split(':', 1)[0]!r}.",
            hint="Use sqlite:///path/to/file.sqlite or postgresql://user@host/db.")
    checkpoints: Path = (settings.checkpoint_path if not url
                         else settings.home.joinpath(url[len("sqlite:///"):]))
    path = checkpoints.with_name(checkpoints.stem + "-a2a-tasks.sqlite")
    private_db(path)  # 0600 in a 0700 folder; SQLite gives its -wal and -shm the same mode
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
        options: dict[str, Any] = {}
        if url.startswith("postgresql"):
            # A checked connection (pre-ping) reconnects after an outage; a short wait for
            # one and for connecting makes a request during it fail fast.
            options = {"pool_pre_ping": True, "pool_timeout": 5,
                       "connect_args": {"connect_timeout": 5}}
        engine = create_async_engine(url, **options)
    except ModuleNotFoundError as exc:
        raise ConfigurationError(
            f"The A2A task store needs the database driver {exc.name}.",
            hint="pip install 'psycopg[binary]' for PostgreSQL, aiosqlite for SQLite.") from exc
    if url.startswith("sqlite"):
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
    try:
        yield engine
    finally:
        for sweep in _SWEEPS.pop(id(engine), set()):
            sweep.cancel()
        await engine.dispose()


#: Periodic sweeps of orphaned tasks (PostgreSQL), by engine, cancelled when it closes.
_SWEEPS: dict[int, set[asyncio.Task[None]]] = {}
#: How often a replica looks for tasks of replicas that died since it started.
SWEEP_SECONDS = 60.0


async def _sweep_forever(store: DatabaseTaskStore, agent: str) -> None:
    # A replica that dies while the others keep running is noticed here, not only at the
    # next start-up; an outage just skips a round.
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            _log_failed(agent, await fail_orphaned_tasks(store))
        except Exception as error:
            log.warning("Looking for orphaned %s tasks failed (%s); trying again in %g s.",
                        agent, type(error).__name__, SWEEP_SECONDS)


def _log_failed(agent: str, failed: list[str]) -> None:
    if failed:
        log.warning("Marked %d task(s) of the %s agent failed: the server running them "
                    "stopped (%s).", len(failed), agent, ", ".join(failed[:10]))


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


def _mark_interrupted(task: Task) -> None:
    status = TaskStatus(state=TaskState.TASK_STATE_FAILED)
    status.timestamp.FromDatetime(datetime.now(UTC))
    status.message.CopyFrom(Message(
        role=Role.ROLE_AGENT, message_id=f"{task.id}-interrupted", task_id=task.id,
        context_id=task.context_id, parts=[new_text_part(INTERRUPTED_REASON)]))
    task.status.CopyFrom(status)


async def fail_interrupted_tasks(store: DatabaseTaskStore) -> list[str]:
    """Mark tasks a dead process left submitted or working as failed; return their ids.

    Run at start-up on SQLite, before the server takes requests: the file belongs to this
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
            _mark_interrupted(task)
            await session.merge(store._to_orm(task, row.owner))
            failed.append(task.id)
    return failed


_RUNNERS = Table("a2a_task_runners", MetaData(),
                 Column("task_table", String(128), primary_key=True),
                 Column("task_id", String(128), primary_key=True),
                 Column("replica_key", BigInteger, nullable=False))


class ReplicaTaskStore(DatabaseTaskStore):
    """A task store that records which replica runs each unfinished task (PostgreSQL)."""

    replica_key: int | None = None
    _recorded: set[str]

    async def save(self, task: Task, context: ServerCallContext) -> None:
        state = TaskState.Name(task.status.state)
        if self.replica_key is not None and state in _UNFINISHED \
                and task.id not in self._recorded:
            # Before the task row: a sweep never sees this replica's new task without a runner.
            statement = pg_insert(_RUNNERS).values(
                task_table=self.task_model.__tablename__, task_id=task.id,
                replica_key=self.replica_key)
            async with self.engine.begin() as connection:
                await connection.execute(statement.on_conflict_do_update(
                    index_elements=["task_table", "task_id"],
                    set_={"replica_key": self.replica_key}))
            self._recorded.add(task.id)
        await super().save(task, context)
        if state not in _UNFINISHED and task.id in self._recorded:
            # Settled: nobody needs to know who ran it (and the table stays small).
            self._recorded.discard(task.id)
            async with self.engine.begin() as connection:
                await connection.execute(_RUNNERS.delete().where(
                    _RUNNERS.c.task_table == self.task_model.__tablename__,
                    _RUNNERS.c.task_id == task.id))


async def _runner_alive(connection: AsyncConnection, key: int | None,
                        cache: dict[int, bool]) -> bool:
    """Whether the replica whose liveness lock is `key` still runs (it holds the lock)."""
    if key is None:
        return False  # recorded by no replica: left by a version before runners
    if key not in cache:
        taken = (await connection.execute(text("SELECT pg_try_advisory_lock(:k)"),
                                          {"k": key})).scalar()
        if taken:  # nobody held it: that replica is gone; give the lock straight back
            await connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
        cache[key] = not taken
    return cache[key]


async def fail_orphaned_tasks(store: DatabaseTaskStore) -> list[str]:
    """Fail the unfinished tasks whose runner replica is gone (PostgreSQL); return their ids.

    The rows are locked while they are checked, so a replica taking one over now (an
    approval arriving) waits and then writes its own state over ours.
    """
    model = store.task_model
    table = model.__tablename__
    failed: list[str] = []
    alive: dict[int, bool] = {}
    async with store.async_session_maker.begin() as session:
        connection = await session.connection()
        rows = (await session.execute(
            select(model, _RUNNERS.c.replica_key)
            .outerjoin(_RUNNERS, (_RUNNERS.c.task_table == table)
                       & (_RUNNERS.c.task_id == model.id))
            .where(model.protocol_version == "1.0",
                   model.status["state"].as_string().in_(_UNFINISHED))
            .with_for_update(of=model))).all()
        for row, key in rows:
            if await _runner_alive(connection, key, alive):
                continue
            task = store._from_orm(row)
            _mark_interrupted(task)
            await session.merge(store._to_orm(task, row.owner))
            failed.append(task.id)
        if failed:
            await session.execute(_RUNNERS.delete().where(
                _RUNNERS.c.task_table == table, _RUNNERS.c.task_id.in_(failed)))
    return failed


async def _create_tables(store: DatabaseTaskStore) -> None:
    """The task table (and runners table), created once even when replicas start together."""
    tables = [store.task_model.__table__]
    while True:
        async with store.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                # CREATE TABLE IF NOT EXISTS races with itself in PostgreSQL: serialize it, by
                # polling (see runtime.database.schema_lock for why never by waiting).
                taken = (await connection.execute(
                    text("SELECT pg_try_advisory_xact_lock(:ns, :k)"),
                    {"ns": LOCK_NAMESPACE, "k": SCHEMA_LOCK})).scalar()
                if not taken:
                    await connection.rollback()
                    await asyncio.sleep(SCHEMA_POLL_SECONDS)
                    continue
                tables.append(_RUNNERS)
            await connection.run_sync(
                lambda sync: MetaData().create_all(sync, tables=tables))  # type: ignore[arg-type]
        break
    store._initialized = True


async def agent_task_store(engine: AsyncEngine, agent: str, *,
                           replica_key: int | None = None) -> DatabaseTaskStore:
    """The task table of one agent (created if missing), with crash leftovers failed.

    SQLite (one process per file): every unfinished task is a leftover. PostgreSQL: only
    those whose replica is gone, known by `replica_key`s (this replica's is `replica_key`,
    required there, so that its own tasks are recorded for the others).
    """
    store = ReplicaTaskStore(engine)
    store.task_model = _task_model(f"a2a_tasks_{agent}")
    store._recorded = set()
    await _create_tables(store)
    if engine.dialect.name == "sqlite":
        failed = await fail_interrupted_tasks(store)
    else:
        if replica_key is None:
            raise ConfigurationError(
                "A task store on PostgreSQL needs this replica's liveness lock.",
                hint="Open it through `pilothouse serve`, which takes the lock.")
        store.replica_key = replica_key
        failed = await fail_orphaned_tasks(store)
        sweep = asyncio.get_running_loop().create_task(_sweep_forever(store, agent),
                                                       name=f"a2a-sweep-{agent}")
        _SWEEPS.setdefault(id(engine), set()).add(sweep)
    _log_failed(agent, failed)
    return store
