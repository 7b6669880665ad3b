"""One turn at a time per conversation, whichever door the turn came in by (REST or A2A).

Two turns on one thread at once would interleave their messages in the checkpointer and one of
them would be lost, so every path that runs a turn claims the thread first. A claim that finds
the thread busy is refused at once with `ConversationBusy` (the REST API answers 409, A2A an
error): a caller is told to retry, never left waiting behind a turn that may take minutes.
Internal callers (a supervisor's in-process sub-agents) may instead wait their turn.

Several replicas on one PostgreSQL also share `SharedLocks` (`runtime.shared_locks`): a claim
from a door (`claim`, `try_claim_everywhere`) holds the process's lock and the database's, so
a conversation runs one turn at a time across replicas. Internal callers need only the
process's lock: they run under a conversation a door already claimed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Protocol

from pilothouse.errors import PilothouseError

#: How long a new claim waits for a turn whose client left to finish winding down.
WIND_DOWN_SECONDS = 10.0


class ConversationBusy(PilothouseError):
    """Another turn of this conversation is running."""

    def __init__(self, thread_id: str) -> None:
        super().__init__(f"Conversation {thread_id} is busy with another turn.",
                         hint="Retry after the current turn ends.")
        self.thread_id = thread_id


class SharedLocks(Protocol):
    """Turn locks every replica sees (PostgreSQL advisory locks)."""

    replica_key: int

    async def acquire(self, thread_id: str) -> bool:
        """Take the thread's lock; False when another replica holds it."""
        ...

    def release(self, thread_id: str) -> None:
        """Give it back (may complete in the background)."""
        ...


class TurnLease:
    """A thread's claim on running one turn; `release()` frees it (idempotent)."""

    def __init__(self, thread_id: str, locks: TurnLocks) -> None:
        self.thread_id = thread_id
        self.leaving = False
        self.adopted = False
        self.released = asyncio.Event()
        self.shared = False  # also holds the replicas' lock
        self._locks = locks

    def client_left(self) -> None:
        """The client disconnected: the turn is being cancelled and will release soon."""
        self.leaving = True

    def adopt(self) -> None:
        """Whoever runs the turn now owns the lease (and releases it when the turn ends)."""
        self.adopted = True

    def release(self) -> None:
        if self.released.is_set():
            return
        self._locks._forget(self)
        if self.shared and self._locks.shared is not None:
            self._locks.shared.release(self.thread_id)
        self.released.set()


class TurnLocks:
    """The running turns of one process, by thread id (and of every replica with `shared`)."""

    def __init__(self, shared: SharedLocks | None = None) -> None:
        self._leases: dict[str, TurnLease] = {}
        self.shared = shared

    def busy(self, thread_id: str) -> bool:
        return thread_id in self._leases

    def try_claim(self, thread_id: str) -> TurnLease | None:
        """The lease of a free thread, or None when a turn is running on it."""
        if thread_id in self._leases:
            return None
        lease = self._leases[thread_id] = TurnLease(thread_id, self)
        return lease

    async def claim(self, thread_id: str, *,
                    wind_down_seconds: float = WIND_DOWN_SECONDS) -> TurnLease:
        """Claim `thread_id`, or raise `ConversationBusy`.

        A turn whose client just left is still being cancelled: wait for it rather than
        refuse, so a client that reconnects and asks again is not told to wait.
        """
        current = self._leases.get(thread_id)
        if current is not None and current.leaving:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wind_down_seconds):
                    await current.released.wait()
        lease = await self.try_claim_everywhere(thread_id)
        if lease is None:
            raise ConversationBusy(thread_id)
        return lease

    async def try_claim_everywhere(self, thread_id: str) -> TurnLease | None:
        """The lease of a thread no turn runs on in any replica, or None.

        Raises `DatabaseUnavailable` when the shared locks cannot be reached: running a turn
        unprotected could run an approved action twice.
        """
        lease = self.try_claim(thread_id)
        if lease is None or self.shared is None:
            return lease
        try:
            taken = await self.shared.acquire(thread_id)
        except BaseException:
            lease.release()
            raise
        if not taken:
            lease.release()
            return None
        lease.shared = True
        return lease

    @contextlib.asynccontextmanager
    async def queued(self, thread_id: str) -> AsyncIterator[TurnLease]:
        """Wait until `thread_id` is free, hold it for the block (for internal callers)."""
        while (lease := self.try_claim(thread_id)) is None:
            await self._leases[thread_id].released.wait()
        try:
            yield lease
        finally:
            lease.release()

    def _forget(self, lease: TurnLease) -> None:
        if self._leases.get(lease.thread_id) is lease:
            del self._leases[lease.thread_id]
