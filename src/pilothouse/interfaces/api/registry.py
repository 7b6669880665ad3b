"""The list of conversations (thread id, title, timestamps) the API, web UI and TUI show.

The checkpointer stores each thread's messages but cannot list threads cheaply or hold a title,
so a small table beside it does: SQLite here, PostgreSQL (`registry_postgres`) when the
checkpoints are there too, so that every replica lists the same conversations. Rows are
upserted whenever a conversation is used, so threads started elsewhere (`pilothouse ask
--thread`) appear once they are touched here. Each row records its owner (the identity that
started it); a row from before owners existed belongs to the anonymous local identity.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import aiosqlite

from pilothouse.a2a.namespaces import ANONYMOUS
from pilothouse.errors import ConfigurationError
from pilothouse.runtime.input_limits import ID_PATTERN

TITLE_LIMIT = 80
THREAD_ID = ID_PATTERN  # the one id rule of every door (runtime.input_limits)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_updated ON conversations (updated_at DESC);
"""
_OWNER_COLUMN = f"ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT '{ANONYMOUS}'"
_OWNER_INDEX = ("CREATE INDEX IF NOT EXISTS conversations_owner "
                "ON conversations (owner, updated_at DESC)")
#: The agent that answers in a conversation ('' until one is recorded): one thread is one
#: agent's or the supervisor's, never a mix (`pilothouse ask --thread` checks it).
_AGENT_COLUMN = "ALTER TABLE conversations ADD COLUMN agent TEXT NOT NULL DEFAULT ''"
_COLUMNS = "id, title, created_at, updated_at, owner, agent"


def new_thread_id() -> str:
    """A fresh thread id, the same shape the CLI uses."""
    return uuid.uuid4().hex[:12]


def title_from(text: str) -> str:
    """A one-line title from the first question."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class ConversationRecord:
    """One conversation as listed."""

    id: str
    title: str
    created_at: float
    updated_at: float
    owner: str = ANONYMOUS
    agent: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created_at": _iso(self.created_at),
                "updated_at": _iso(self.updated_at), "owner": self.owner, "agent": self.agent}


class ConversationStore(Protocol):
    """Where the conversation list lives; `ConversationRegistry` is the SQLite one."""

    async def create(self, title: str = "", thread_id: str | None = None, *,
                     owner: str = ANONYMOUS) -> ConversationRecord: ...

    async def touch(self, thread_id: str, question: str = "", *,
                    owner: str = ANONYMOUS) -> ConversationRecord: ...

    async def get(self, thread_id: str) -> ConversationRecord | None: ...

    async def list(self, limit: int = 50, offset: int = 0, *,
                   owner: str | None = None) -> tuple[list[ConversationRecord], int]: ...

    async def delete(self, thread_id: str) -> bool: ...

    async def ping(self) -> None: ...


class ConversationRegistry:
    """Conversations in one SQLite file; open it with `ConversationRegistry.open(path)`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    @classmethod
    @asynccontextmanager
    async def open(cls, path: Path) -> AsyncIterator[ConversationRegistry]:
        """Open (creating if needed) the registry at `path`; closed on exit."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigurationError(
                f"Cannot create the directory for the conversation list {path.parent}: "
                f"{exc.strerror}.", hint="Set PILOTHOUSE_HOME to a writable directory.",
            ) from exc
        async with aiosqlite.connect(path) as db:
            await db.executescript(_SCHEMA)
            async with db.execute("PRAGMA table_info(conversations)") as cursor:
                columns = {row[1] for row in await cursor.fetchall()}
            if "owner" not in columns:  # a registry from before owners
                await db.execute(_OWNER_COLUMN)
            if "agent" not in columns:  # a registry from before agents were recorded
                await db.execute(_AGENT_COLUMN)
            await db.execute(_OWNER_INDEX)
            await db.commit()
            yield cls(db)

    async def create(self, title: str = "", thread_id: str | None = None, *,
                     owner: str = ANONYMOUS, agent: str = "") -> ConversationRecord:
        """Register a new conversation of `owner` (a fresh id unless one is given)."""
        now = time.time()
        record = ConversationRecord(thread_id or new_thread_id(), title_from(title), now, now,
                                    owner, agent)
        await self._db.execute(
            f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, record.title, record.created_at, record.updated_at, record.owner,
             record.agent),
        )
        await self._db.commit()
        return record

    async def touch(self, thread_id: str, question: str = "", *,
                    owner: str = ANONYMOUS, agent: str = "") -> ConversationRecord:
        """Mark a conversation as used now; it gets a title from `question` if it has none.

        A conversation not listed yet is listed as `owner`'s; a listed one keeps its owner,
        and its agent once one is recorded.
        """
        now = time.time()
        await self._db.execute(
            f"INSERT INTO conversations ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at, "
            "title = CASE WHEN conversations.title = '' THEN excluded.title "
            "ELSE conversations.title END, "
            "agent = CASE WHEN conversations.agent = '' THEN excluded.agent "
            "ELSE conversations.agent END",
            (thread_id, title_from(question), now, now, owner, agent),
        )
        await self._db.commit()
        record = await self.get(thread_id)
        assert record is not None
        return record

    async def get(self, thread_id: str) -> ConversationRecord | None:
        async with self._db.execute(
            f"SELECT {_COLUMNS} FROM conversations WHERE id = ?",
            (thread_id,),
        ) as cursor:
            row = await cursor.fetchone()
        return ConversationRecord(*row) if row else None

    async def list(self, limit: int = 50, offset: int = 0, *,
                   owner: str | None = None) -> tuple[list[ConversationRecord], int]:
        """`owner`'s (None: everyone's) most recently used conversations first, and how many
        there are in all."""
        where, args = ("WHERE owner = ? ", (owner,)) if owner is not None else ("", ())
        async with self._db.execute(
            f"SELECT {_COLUMNS} FROM conversations {where}"
            "ORDER BY updated_at DESC, id LIMIT ? OFFSET ?", (*args, limit, offset),
        ) as cursor:
            rows = await cursor.fetchall()
        async with self._db.execute(f"SELECT COUNT(*) FROM conversations {where}",
                                    args) as cursor:
            total = await cursor.fetchone()
        return [ConversationRecord(*row) for row in rows], int(total[0]) if total else 0

    async def delete(self, thread_id: str) -> bool:
        """Forget a conversation; False when it was not listed."""
        cursor = await self._db.execute("DELETE FROM conversations WHERE id = ?", (thread_id,))
        await self._db.commit()
        return cursor.rowcount > 0

    async def ping(self) -> None:
        """Raise when the database cannot be read (for readiness checks)."""
        async with self._db.execute("SELECT 1") as cursor:
            await cursor.fetchone()
