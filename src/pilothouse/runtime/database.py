"""PostgreSQL as the shared state of several replicas: URLs, pools, schema set-up, outages.

Every store that lives in PostgreSQL (checkpoints, the conversation list, A2A tasks, turn and
replica locks) goes through here, so the rules are the same for all of them:
- a pool that checks a connection before lending it and reconnects on its own, so a database
  that went away and came back needs no restart of Pilothouse;
- a short wait for a connection, so a request during an outage fails in seconds with
  `DatabaseUnavailable` (the API's 503) instead of hanging;
- schema set-up under one advisory lock, so replicas starting at once do not race on
  `CREATE TABLE IF NOT EXISTS` (which is not safe concurrently in PostgreSQL);
- the URL's password never appears in a message (`describe_url`).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pilothouse.errors import ConfigurationError, PilothouseError
from pilothouse.redaction import redact

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

log = logging.getLogger("pilothouse.database")

#: How long a request waits for a pooled connection before the database counts as unavailable.
CONNECT_TIMEOUT_SECONDS = 5.0
#: The first key of the two-key advisory locks Pilothouse takes (turn locks use one bigint key).
LOCK_NAMESPACE = 0x50_48_53  # "PHS"
SCHEMA_LOCK = 1


class DatabaseUnavailable(PilothouseError):
    """The shared database does not answer; whoever runs it must act, callers may retry."""

    def __init__(self, detail: str = "") -> None:
        text = "The conversation database (PostgreSQL) is unavailable"
        super().__init__(f"{text}: {redact(detail)}" if detail else f"{text}.",
                         hint="Retry in a moment; if it persists, check that PostgreSQL at "
                              "PILOTHOUSE_DATABASE_URL is running and reachable.")


def is_postgres(url: str | None) -> bool:
    return bool(url) and str(url).startswith(("postgres://", "postgresql://"))


def conninfo(url: str) -> str:
    """A libpq URL (`postgres://` is accepted as `postgresql://`)."""
    return "postgresql://" + url.split("://", 1)[1]


def describe_url(url: str) -> str:
    """`host:port/database` of a URL, for messages: never the user's password."""
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.hostname or 'localhost'}{port}{parts.path or '/'}"


def outage(error: BaseException) -> DatabaseUnavailable | None:
    """`error` as `DatabaseUnavailable` when it means the database cannot be reached.

    Matched by the driver's own classes, imported lazily: PostgreSQL support is an extra.
    """
    if isinstance(error, DatabaseUnavailable):
        return error
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        return None
    if isinstance(error, psycopg_pool.PoolTimeout | psycopg_pool.PoolClosed):
        return DatabaseUnavailable("no connection could be made in time")
    if isinstance(error, psycopg.OperationalError | psycopg.errors.AdminShutdown):
        return DatabaseUnavailable(str(error).splitlines()[0] if str(error) else "")
    cause = getattr(error, "orig", None)  # SQLAlchemy's wrapper around the driver's error
    return outage(cause) if isinstance(cause, BaseException) else None


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for `name` (a thread or replica id)."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big",
                          signed=True)


def _driver() -> Any:
    try:
        import psycopg_pool
    except ImportError as exc:
        raise ConfigurationError(
            "PILOTHOUSE_DATABASE_URL points at PostgreSQL, but its driver is missing.",
            hint="pip install 'pilothouse[postgres]' (psycopg with its pool and LangGraph's "
                 "Postgres checkpointer).") from exc
    return psycopg_pool


@asynccontextmanager
async def open_pool(url: str, *, name: str, max_size: int = 10,
                    min_size: int = 1) -> AsyncIterator[AsyncConnectionPool[Any]]:
    """A checked, self-reconnecting pool of autocommit connections to `url`, closed on exit.

    Opening waits for the database: a replica that cannot reach it at start-up says so in one
    line (ConfigurationError) rather than serving requests that would all fail.
    """
    pool_module = _driver()
    from psycopg.rows import dict_row

    pool = pool_module.AsyncConnectionPool(
        conninfo(url), name=f"pilothouse-{name}", min_size=min_size, max_size=max_size,
        open=False, timeout=CONNECT_TIMEOUT_SECONDS, check=pool_module.AsyncConnectionPool
        .check_connection,
        # LangGraph's saver needs autocommit and dict rows; no prepared statements so that
        # a pooler (PgBouncer in transaction mode) in front of the database works too.
        kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row,
                "connect_timeout": int(CONNECT_TIMEOUT_SECONDS)})
    try:
        await pool.open(wait=True, timeout=30)
    except Exception as exc:
        await pool.close()
        raise ConfigurationError(
            f"Cannot connect to PostgreSQL at {describe_url(url)} "
            f"({type(exc).__name__}).",
            hint="Check that it runs and that PILOTHOUSE_DATABASE_URL (user, password, "
                 "database) is right.") from None
    try:
        yield pool
    finally:
        await pool.close()


#: How often a replica waiting for another's schema set-up tries again.
SCHEMA_POLL_SECONDS = 0.1


@asynccontextmanager
async def schema_lock(connection: AsyncConnection[Any]) -> AsyncIterator[None]:
    """Hold the cluster-wide schema lock for the block: one replica migrates at a time.

    Taken by polling `pg_try_advisory_lock`, never by waiting in `pg_advisory_lock`: a
    waiting statement is an open transaction, and the holder's `CREATE INDEX CONCURRENTLY`
    (LangGraph's migrations) waits for every open transaction to end, a deadlock PostgreSQL
    does not detect.
    """
    while True:
        row = await (await connection.execute("SELECT pg_try_advisory_lock(%s, %s) AS taken",
                                              (LOCK_NAMESPACE, SCHEMA_LOCK))).fetchone()
        if row is not None and row["taken"]:
            break
        await asyncio.sleep(SCHEMA_POLL_SECONDS)
    try:
        yield
    finally:
        await connection.execute("SELECT pg_advisory_unlock(%s, %s)",
                                 (LOCK_NAMESPACE, SCHEMA_LOCK))
