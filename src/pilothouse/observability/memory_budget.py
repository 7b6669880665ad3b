"""The memory budget of a process and the monitor that samples it, without the agent runtime.

`MemoryBudget` says how much this process may use and refuses new work above its high-water
mark; `MemoryMonitor` samples it in the background. The agents' `memory.MemoryGuardMiddleware`
enforces it per turn; `pilothouse doctor` only reads it, so this module imports no LangChain.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from pilothouse.errors import ResourceExhaustedError
from pilothouse.observability import metrics
from pilothouse.observability.limits import (
    detect_memory_limit,
    peak_resident_bytes,
    resident_bytes,
)
from pilothouse.sizes import format_bytes

logger = logging.getLogger("pilothouse.memory")

# A full collection can take tens of milliseconds on a large heap: at most one per interval.
_COLLECT_INTERVAL_SECONDS = 5.0


@dataclass(frozen=True)
class MemorySample:
    """One reading of the process's memory against its budget."""

    rss: int
    peak: int
    limit: int
    fraction: float


class MemoryBudget:
    """The memory this process may use; `check()` refuses new work above `high_water` of it."""

    def __init__(
        self,
        limit_bytes: int,
        high_water: float = 0.85,
        *,
        source: str = "configured",
        read_rss: Callable[[], int] = resident_bytes,
    ) -> None:
        if limit_bytes <= 0:
            raise ValueError(f"limit_bytes must be positive, not {limit_bytes}")
        if not 0.0 < high_water <= 1.0:
            raise ValueError(f"high_water must be in (0, 1], not {high_water}")
        self.limit_bytes = limit_bytes
        self.high_water = high_water
        self.source = source
        self.read_rss = read_rss
        self._last_collect = float("-inf")

    @classmethod
    def detect(cls, override_bytes: int | None = None, high_water: float = 0.85) -> MemoryBudget:
        """The budget from PILOTHOUSE_MEMORY_LIMIT (parsed) if set, else the cgroup or RAM."""
        if override_bytes is not None:
            return cls(override_bytes, high_water, source="PILOTHOUSE_MEMORY_LIMIT")
        limit = detect_memory_limit()
        return cls(limit.bytes, high_water, source=limit.source)

    @property
    def threshold(self) -> int:
        """Resident bytes above which new work is refused."""
        return int(self.limit_bytes * self.high_water)

    def sample(self) -> MemorySample:
        rss = self.read_rss()
        peak = max(peak_resident_bytes(), rss)
        return MemorySample(rss, peak, self.limit_bytes, rss / self.limit_bytes)

    def check(self) -> int:
        """Return the resident bytes, or raise `ResourceExhaustedError` above the high water."""
        rss = self.read_rss()
        if rss <= self.threshold:
            return rss
        now = time.monotonic()
        if now - self._last_collect >= _COLLECT_INTERVAL_SECONDS:
            # Garbage from finished requests may be all that stands above the mark.
            self._last_collect = now
            gc.collect()
            rss = self.read_rss()
            if rss <= self.threshold:
                return rss
        raise self._refusal(rss)

    def _refusal(self, rss: int) -> ResourceExhaustedError:
        metrics.record_memory_refusal()
        logger.warning("memory guard refused new work", extra={
            "rss_bytes": rss, "limit_bytes": self.limit_bytes, "high_water": self.high_water,
            "limit_source": self.source,
        })
        return ResourceExhaustedError(
            f"Pilothouse is near its memory budget: {format_bytes(rss)} in use, "
            f"{rss / self.limit_bytes:.0%} of {format_bytes(self.limit_bytes)} (new requests "
            f"are refused above {self.high_water:.0%} so the running ones can finish).",
            hint="Retry shortly, when running requests have finished. If it keeps happening, "
                 f"raise PILOTHOUSE_MEMORY_LIMIT (now {format_bytes(self.limit_bytes)}, from "
                 f"{self.source}) or give the container more memory.",
            retryable=True,
        )


class MemoryMonitor:
    """Samples the budget every `interval` seconds in an asyncio task and logs its crossings.

    Logs once when memory crosses the high-water mark and once when it is back below, not on
    every sample. `on_sample` sees every reading (the TUI's status bar, tests). Resident and
    peak memory reach `/metrics` at scrape time (the metrics module reads them); a sample
    exports only the budget they are judged against.
    """

    def __init__(
        self,
        budget: MemoryBudget,
        interval: float = 5.0,
        on_sample: Callable[[MemorySample], None] | None = None,
    ) -> None:
        self.budget = budget
        self.interval = interval
        self.on_sample = on_sample
        self.last: MemorySample | None = None
        self._above = False
        self._task: asyncio.Task[None] | None = None

    def sample(self) -> MemorySample:
        """Take one reading now, export the budget and log a crossing of the high-water mark."""
        reading = self.budget.sample()
        self.last = reading
        metrics.record_memory_budget(reading.limit)
        above = reading.fraction > self.budget.high_water
        if above != self._above:
            self._above = above
            fields = {"rss_bytes": reading.rss, "limit_bytes": reading.limit,
                      "fraction": round(reading.fraction, 3)}
            if above:
                logger.warning("memory above the high-water mark", extra=fields)
            else:
                logger.info("memory back below the high-water mark", extra=fields)
        if self.on_sample is not None:
            self.on_sample(reading)
        return reading

    async def run(self) -> None:
        """Sample until cancelled; a failed sample is logged and the next one still runs."""
        while True:
            try:
                self.sample()
            except Exception:
                logger.exception("memory sample failed")
            await asyncio.sleep(self.interval)

    def start(self) -> asyncio.Task[None]:
        """Start sampling in the running event loop (once; later calls return the same task)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self.run(), name="pilothouse-memory-monitor"
            )
        return self._task

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def __aenter__(self) -> MemoryMonitor:
        self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
