"""Locks every replica on one PostgreSQL sees: one turn per conversation, and who is alive.

The in-process `TurnLocks` stop two turns of one conversation inside one process; behind a load
balancer the second request may reach another replica, and an approval decided on replica B
while replica A also resumes it would run the action twice. So, with PostgreSQL, a turn also
takes a session-level advisory lock on its thread (`pg_try_advisory_lock`), on one dedicated
connection per process:
- a replica that dies (SIGKILL, a lost node) loses its connection and PostgreSQL frees its
  locks at once: no lease to wait out before another replica may continue the conversation;
- advisory locks of one session are counted, so a release that reaches the connection after
  the next claim of the same thread by this process still leaves the count right.
The same session holds the replica's *liveness lock* (`replica_key`) for its whole life: other
replicas learn that it is alive by failing to take that lock (`a2a.store` uses it to fail only
the tasks of replicas that are gone). If the connection drops (the database restarted) every
lock of the session is gone; the next claim reconnects, takes the liveness lock again, and logs
that running turns were unprotected meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.runtime.database import (
    CONNECT_TIMEOUT_SECONDS,
    DatabaseUnavailable,
    conninfo,
    describe_url,
    is_postgres,
    lock_key,
    outage,
)

log = logging.getLogger("pilothouse.database")

#: A replica releases a turn's lock just after the answer's last byte: a client that asks
#: the next question at once through another replica waits this long for it, not a 409.
HANDOFF_SECONDS = 2.0
HANDOFF_POLL_SECONDS = 0.05


class PostgresLocks:
    """Cross-replica turn locks and this replica's liveness lock, on one connection."""

    def __init__(self, url: str, replica_id: str | None = None) -> None:
        self._url = url
        self.replica_id = replica_id or uuid.uuid4().hex
        self.replica_key = lock_key(f"replica:{self.replica_id}")
        self._connection: Any = None
        self._held: Counter[int] = Counter()
        self._serial = asyncio.Lock()  # one statement at a time on the session
        self._releases: set[asyncio.Task[None]] = set()

    async def _session(self) -> Any:
        connection = self._connection
        if connection is not None and not connection.closed and not connection.broken:
            return connection
        import psycopg

        if connection is not None:
            lost = sum(self._held.values())
            if lost:
                log.warning("The lock session to PostgreSQL was lost; %d running turn(s) were "
                            "not protected from other replicas meanwhile.", lost)
            self._held.clear()
            await connection.close()
        self._connection = None
        connection = await psycopg.AsyncConnection.connect(
            conninfo(self._url), autocommit=True, connect_timeout=int(CONNECT_TIMEOUT_SECONDS))
        await connection.execute("SELECT pg_advisory_lock(%s)", (self.replica_key,))
        self._connection = connection
        return connection

    async def _execute(self, sql: str, key: int) -> bool:
        async with self._serial:
            for attempt in (1, 2):  # a connection broken by a restart: reconnect once
                try:
                    session = await self._session()
                    async with asyncio.timeout(CONNECT_TIMEOUT_SECONDS):
                        row = await (await session.execute(sql, (key,))).fetchone()
                    return bool(row[0])
                except Exception as error:
                    down = outage(error) if not isinstance(error, TimeoutError) else \
                        DatabaseUnavailable("the lock session did not answer in time")
                    if down is None:
                        raise
                    if self._connection is not None:
                        await self._connection.close()
                    if attempt == 2:
                        raise down from None
        raise AssertionError("unreachable")

    async def open(self) -> PostgresLocks:
        """Connect and take the liveness lock (raises DatabaseUnavailable)."""
        async with self._serial:
            try:
                await self._session()
            except Exception as error:
                raise (outage(error) or error) from None
        return self

    async def acquire(self, thread_id: str, *,
                      handoff_seconds: float = HANDOFF_SECONDS) -> bool:
        """Take `thread_id`'s turn lock; False when another replica still holds it after
        `handoff_seconds` (polled: a waiting statement would pin the shared session)."""
        key = lock_key(f"turn:{thread_id}")
        deadline = asyncio.get_running_loop().time() + handoff_seconds
        while True:
            if await self._execute("SELECT pg_try_advisory_lock(%s)", key):
                self._held[key] += 1
                return True
            if asyncio.get_running_loop().time() >= deadline:
                return False
            await asyncio.sleep(HANDOFF_POLL_SECONDS)

    def release(self, thread_id: str) -> None:
        """Give the lock back (in the background: leases are released from sync code)."""
        key = lock_key(f"turn:{thread_id}")
        if self._held[key] <= 0:
            return  # lost with a broken session: nothing to give back
        self._held[key] -= 1
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop left: the process is exiting, and its session with it
        task = loop.create_task(self._unlock(key))
        self._releases.add(task)
        task.add_done_callback(self._releases.discard)

    async def _unlock(self, key: int) -> None:
        async with self._serial:
            session = self._connection
            if session is None or session.closed or session.broken:
                return  # the session is gone, and its locks with it
            try:
                await session.execute("SELECT pg_advisory_unlock(%s)", (key,))
            except Exception as error:
                if outage(error) is None:
                    raise
                await session.close()

    async def close(self) -> None:
        if self._releases:
            await asyncio.gather(*self._releases, return_exceptions=True)
        if self._connection is not None:
            await self._connection.close()


@asynccontextmanager
async def open_shared_locks(settings: Settings) -> AsyncIterator[PostgresLocks | None]:
    """This replica's session of shared locks on PostgreSQL; None with SQLite (one process)."""
    url = settings.database_url
    if not is_postgres(url):
        yield None
        return
    assert url is not None
    try:
        locks = await PostgresLocks(url).open()
    except DatabaseUnavailable:
        raise ConfigurationError(
            f"Cannot connect to PostgreSQL at {describe_url(url)} for the replica locks.",
            hint="Check that it runs and that PILOTHOUSE_DATABASE_URL is right.") from None
    try:
        yield locks
    finally:
        await locks.close()
