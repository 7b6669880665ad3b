"""A small in-memory rate limiter: so many events per key in so many seconds, then a wait.

A token bucket per key: `limit` events may come at once, then one more each
`per_seconds / limit` seconds. `hit` records an event and says how long to wait when there was
no room for it (an HTTP `Retry-After`); `blocked` asks the same without recording, so a caller
can refuse before doing the work an event would cost (comparing a key, opening a task).

Memory stays bounded whatever the callers send: at most `max_keys` keys are remembered, the
one touched longest ago forgotten first. Forgetting a key only forgives it, which an attacker
with that many addresses could have had anyway. One process, no shared state: replicas each
limit their own share.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

#: Refills are floating point: waiting exactly the time `hit` named must be enough.
_ROUNDING = 1e-9


class RateLimiter:
    """At most `limit` events per `per_seconds` for each key, in a bucket per key."""

    def __init__(self, limit: int, per_seconds: float, *,
                 clock: Callable[[], float] = time.monotonic, max_keys: int = 10_000) -> None:
        if limit < 1 or not per_seconds > 0 or max_keys < 1:  # `not >` also refuses nan
            raise ValueError("limit and max_keys must be at least 1, per_seconds above 0")
        self.limit = limit
        self.per_seconds = per_seconds
        self.max_keys = max_keys
        self._clock = clock
        self._refill = limit / per_seconds  # events earned back per second
        # key -> (events still allowed now, when that was computed); oldest touch first.
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        # A2A handlers may run in worker threads; the event loop's calls never wait long here.
        self._lock = threading.Lock()

    def hit(self, key: str) -> float | None:
        """Record one event for `key`: None when it was allowed, else seconds until one is."""
        with self._lock:
            tokens, now = self._level(key)
            if tokens >= 1 - _ROUNDING:
                self._store(key, max(0.0, tokens - 1), now)
                return None
            self._store(key, tokens, now)  # refused events are not counted again
            return self._wait(tokens)

    def blocked(self, key: str) -> float | None:
        """Seconds until `key` may have an event, or None when it may now; records nothing."""
        with self._lock:
            tokens, _ = self._level(key)
            return None if tokens >= 1 - _ROUNDING else self._wait(tokens)

    @property
    def tracked_keys(self) -> int:
        """How many keys are remembered now (at most `max_keys`)."""
        return len(self._buckets)

    def _level(self, key: str) -> tuple[float, float]:
        now = self._clock()
        stored = self._buckets.get(key)
        if stored is None:
            return float(self.limit), now
        tokens, then = stored
        return min(float(self.limit), tokens + max(0.0, now - then) * self._refill), now

    def _store(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)

    def _wait(self, tokens: float) -> float:
        return (1 - tokens) / self._refill


def retry_after(seconds: float) -> str:
    """An HTTP `Retry-After` value: whole seconds, rounded up, at least 1."""
    return str(max(1, math.ceil(seconds)))
