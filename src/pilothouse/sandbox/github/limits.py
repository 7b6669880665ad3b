"""GitHub's rate limits, with switches to exhaust them on purpose.

Each identity (the token, or anonymous) has a `core` bucket of 5,000 requests an hour and a
`search` bucket of 30 a minute; anonymous callers get 60 and 10. Every answer carries the
`x-ratelimit-*` headers. Tests call `exhaust` (primary limit: 403, remaining 0, a reset time) or
`throttle` (secondary limit: 403 with `retry-after`) to exercise a client's handling. The lock
matters because tests flip these switches from their own thread while the server runs.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field


@dataclass
class Bucket:
    """One resource's quota: `limit` requests per `window` seconds."""

    resource: str
    limit: int
    window: float
    used: int = 0
    reset_at: float = 0.0

    def _roll(self, now: float) -> None:
        if now >= self.reset_at:
            self.used, self.reset_at = 0, now + self.window

    def take(self, now: float) -> bool:
        """Count one request; False (and nothing counted) when the quota is spent."""
        self._roll(now)
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    def status(self, now: float) -> dict[str, int]:
        self._roll(now)
        return {"limit": self.limit, "used": self.used,
                "remaining": max(0, self.limit - self.used),
                "reset": math.ceil(self.reset_at)}

    def headers(self, now: float) -> dict[str, str]:
        status = self.status(now)
        return {"x-ratelimit-limit": str(status["limit"]),
                "x-ratelimit-remaining": str(status["remaining"]),
                "x-ratelimit-reset": str(status["reset"]),
                "x-ratelimit-used": str(status["used"]),
                "x-ratelimit-resource": self.resource}


@dataclass
class Quota:
    """The buckets of one identity, and a secondary-limit block."""

    core: Bucket
    search: Bucket
    blocked_until: float = 0.0

    def bucket(self, resource: str) -> Bucket:
        return self.search if resource == "search" else self.core


@dataclass
class RateLimits:
    """Quotas for the sandbox's token and for anonymous callers."""

    core_limit: int = 5000
    search_limit: int = 30
    _quotas: dict[bool, Quota] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _quota(self, authenticated: bool) -> Quota:
        quota = self._quotas.get(authenticated)
        if quota is None:
            core, search = (self.core_limit, self.search_limit) if authenticated else (60, 10)
            quota = Quota(Bucket("core", core, 3600.0), Bucket("search", search, 60.0))
            self._quotas[authenticated] = quota
        return quota

    def take(self, authenticated: bool, resource: str) -> tuple[str | None, dict[str, str]]:
        """(None, headers) when the request may proceed, else (why, headers) for a 403."""
        now = time.time()
        with self._lock:
            quota = self._quota(authenticated)
            bucket = quota.bucket(resource)
            if now < quota.blocked_until:
                wait = math.ceil(quota.blocked_until - now)
                return "secondary", {**bucket.headers(now), "retry-after": str(wait)}
            allowed = bucket.take(now)
            return (None if allowed else "primary"), bucket.headers(now)

    def snapshot(self, authenticated: bool) -> dict[str, dict[str, int]]:
        """Every bucket's status, as `GET /rate_limit` reports it (not counted)."""
        now = time.time()
        with self._lock:
            quota = self._quota(authenticated)
            return {"core": quota.core.status(now), "search": quota.search.status(now)}

    def exhaust(self, resource: str = "core", *, reset_in: float = 3600.0,
                authenticated: bool = True) -> None:
        """Spend a bucket: requests get 403 until `reset_in` seconds from now."""
        with self._lock:
            bucket = self._quota(authenticated).bucket(resource)
            bucket.used, bucket.reset_at = bucket.limit, time.time() + reset_in

    def throttle(self, seconds: float, *, authenticated: bool = True) -> None:
        """Trip the secondary limit: 403 with `retry-after` for `seconds`."""
        with self._lock:
            self._quota(authenticated).blocked_until = time.time() + seconds

    def restore(self) -> None:
        """Fresh quotas for everyone."""
        with self._lock:
            self._quotas.clear()
