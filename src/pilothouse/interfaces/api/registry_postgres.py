"""The conversation list in PostgreSQL, shared by every replica (same rows as the SQLite one).

Every method borrows a pooled connection for one statement, so a connection lost in an outage
is replaced on the next call; an unreachable database raises `DatabaseUnavailable` (503).
Timestamps stay seconds since the epoch (double precision), as in SQLite, so both stores
order and render rows the same way.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from pilothouse.a2a.namespaces import ANONYMOUS
from pilothouse.interfaces.api.registry import ConversationRecord, new_thread_id, title_from
from pilothouse.runtime.database import open_pool, outage, schema_lock

T = TypeVar("T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS conversations ("
    " id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '',"
    " created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
    f" owner TEXT NOT NULL DEFAULT '{ANONYMOUS}')",
    "CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated_at DESC)",
    "CREATE INDEX IF NOT EXISTS conversations_owner ON conversations (owner, updated_at DESC)",
)
_COLUMNS = "id, title, created_at, updated_at, owner"


def _record(row: dict[str, Any]) -> ConversationRecord:
    return ConversationRecord(row["id"], row["title"], row["created_at"], row["updated_at"],
                              row["owner"])


class PostgresConversationRegistry:
    """Conversations in PostgreSQL; open with `PostgresConversationRegistry.open(url)`."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @classmethod
    @asynccontextmanager
    async def open(cls, url: str) -> AsyncIterator[PostgresConversationRegistry]:
        async with open_pool(url, name="conversations", max_size=4) as pool:
            async with pool.connection() as connection, schema_lock(connection):
                for statement in _SCHEMA:
                    await connection.execute(statement)
            yield cls(pool)

    async def _run(self, work: Callable[[Any], Coroutine[Any, Any, T]]) -> T:
        try:
            async with self._pool.connection() as connection:
                return await work(connection)
        except Exception as error:
            down = outage(error)
            if down is None:
                raise
            raise down from None

    async def _fetch(self, sql: str, args: tuple[Any, ...]) -> list[dict[str, Any]]:
        async def fetch(connection: Any) -> list[dict[str, Any]]:
            return list(await (await connection.execute(sql, args)).fetchall())

        return await self._run(fetch)

    async def create(self, title: str = "", thread_id: str | None = None, *,
                     owner: str = ANONYMOUS) -> ConversationRecord:
        now = time.time()
        record = ConversationRecord(thread_id or new_thread_id(), title_from(title), now, now,
                                    owner)
        await self._fetch(f"INSERT INTO conversations ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s) "
                          "RETURNING id", (record.id, record.title, record.created_at,
                                           record.updated_at, record.owner))
        return record

    async def touch(self, thread_id: str, question: str = "", *,
                    owner: str = ANONYMOUS) -> ConversationRecord:
        now = time.time()
        rows = await self._fetch(
            f"INSERT INTO conversations ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at, "
            "title = CASE WHEN conversations.title = '' THEN excluded.title "
            f"ELSE conversations.title END RETURNING {_COLUMNS}",
            (thread_id, title_from(question), now, now, owner))
        return _record(rows[0])

    async def get(self, thread_id: str) -> ConversationRecord | None:
        rows = await self._fetch(f"SELECT {_COLUMNS} FROM conversations WHERE id = %s",
                                 (thread_id,))
        return _record(rows[0]) if rows else None

    async def list(self, limit: int = 50, offset: int = 0, *,
                   owner: str | None = None) -> tuple[list[ConversationRecord], int]:
        where, args = ("WHERE owner = %s ", (owner,)) if owner is not None else ("", ())
        rows = await self._fetch(
            f"SELECT {_COLUMNS}, COUNT(*) OVER () AS total FROM conversations {where}"
            "ORDER BY updated_at DESC, id LIMIT %s OFFSET %s", (*args, limit, offset))
        if rows:
            return [_record(r) for r in rows], int(rows[0]["total"])
        total = await self._fetch(f"SELECT COUNT(*) AS total FROM conversations {where}", args)
        return [], int(total[0]["total"])

    async def delete(self, thread_id: str) -> bool:
        rows = await self._fetch("DELETE FROM conversations WHERE id = %s RETURNING id",
                                 (thread_id,))
        return bool(rows)

    async def ping(self) -> None:
        await self._fetch("SELECT 1 AS ok", ())
