"""Turns wait for the one local model in order, and the person is told how many are ahead.

The local model runs one turn at a time. Within a process, turns queue on the engine's
`TurnLock`; across processes, in the model service's queue (`local_service`). Both are a
`TurnQueue`: first come, first served (a plain `threading.Lock` wakes waiters in no particular
order), and each waiter learns how many turns are ahead of it whenever that number changes.

A turn that waits reports `ModelQueued` to the run's custom stream (LangGraph's stream
writer, as the context layers report their actions); the conversation turns it into a
`ModelWaiting` event that every interface shows ("waiting for the model (1 ahead)").
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ModelQueued:
    """This turn waits for the local model with `ahead` turns before it (0: its turn now)."""

    ahead: int


def report_waiting(ahead: int) -> None:
    """Tell the run this turn is `ahead`-th in line for the model (no-op outside a run)."""
    from langgraph.config import get_stream_writer  # only a process that runs a model gets here

    try:
        writer = get_stream_writer()
    except RuntimeError:  # outside a graph run: tests, benchmarks, `ChatLocalLlama.invoke`
        return
    writer(ModelQueued(ahead))


class WaitReporter:
    """The positions one turn reports: each new one, and 0 when it gets the model."""

    def __init__(self, report: Callable[[int], None] = report_waiting) -> None:
        self._report = report
        self._last: int | None = None

    def __call__(self, ahead: int) -> None:
        if ahead != self._last and (ahead or self._last):
            self._report(ahead)
        self._last = ahead

    def done(self) -> None:
        """The turn has the model: say so if it was told to wait."""
        self(0)


class TurnQueue:
    """First come, first served: one active turn, the rest in line."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._line: list[int] = []
        self._next = 0
        self.active: int | None = None

    def join(self) -> int:
        """A ticket at the end of the line."""
        with self._cond:
            self._next += 1
            self._line.append(self._next)
            return self._next

    def wait(self, ticket: int, position: Callable[[int], None] | None = None,
             timeout: float | None = None) -> bool:
        """Wait until `ticket` is the active turn; False if `timeout` passed first.

        `position(ahead)` is called (outside the queue's lock, so it may block on I/O) each
        time the number of turns ahead changes. On False the ticket is still in line: `leave`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        told: int | None = None
        while True:
            with self._cond:
                ahead = self._ahead(ticket)
                if ahead == 0:
                    self._line.remove(ticket)
                    self.active = ticket
                    return True
                if ahead == told:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
                    continue
            if position is not None:
                position(ahead)
            told = ahead

    def _ahead(self, ticket: int) -> int:
        return self._line.index(ticket) + (self.active is not None)

    def leave(self, ticket: int) -> None:
        """End the active turn, or give up a place in line."""
        with self._cond:
            if self.active == ticket:
                self.active = None
            elif ticket in self._line:
                self._line.remove(ticket)
            self._cond.notify_all()

    @property
    def waiting(self) -> int:
        """Turns in line, not counting the active one."""
        with self._cond:
            return len(self._line)

    @property
    def busy(self) -> bool:
        """Whether a turn is active or waiting."""
        with self._cond:
            return self.active is not None or bool(self._line)

    def wait_idle(self, timeout: float) -> bool:
        """Whether no turn is active or waiting within `timeout` seconds."""
        with self._cond:
            return self._cond.wait_for(lambda: self.active is None and not self._line, timeout)


class TurnLock:
    """`threading.Lock`'s interface over a `TurnQueue`: fair, and it says where a turn waits.

    `acquire` reports the turns ahead of it to `report` (through the turn's `reporter`, which
    the engine goes on using while the model service queues the turn); `on_release` runs
    before the next turn may start (the engine ends its turn with the service there).
    """

    def __init__(self, on_release: Callable[[], None] | None = None,
                 report: Callable[[int], None] = report_waiting) -> None:
        self._queue = TurnQueue()
        self._on_release = on_release
        self._report = report
        self.reporter = WaitReporter(report)

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        reporter = WaitReporter(self._report)
        ticket = self._queue.join()
        limit = 0.0 if not blocking else None if timeout < 0 else timeout
        if not self._queue.wait(ticket, reporter if blocking else None, limit):
            self._queue.leave(ticket)
            return False
        self.reporter = reporter  # the turn's: the model service may add to what it said
        return True

    def release(self) -> None:
        active = self._queue.active
        if active is None:
            raise RuntimeError("release unlocked lock")
        try:
            if self._on_release is not None:
                self._on_release()
        finally:
            self._queue.leave(active)

    def locked(self) -> bool:
        return self._queue.active is not None

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *_: object) -> None:
        self.release()
