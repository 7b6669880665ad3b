"""Context actions (summarized, truncated, repaired, ...) made visible to users and metrics.

Each layer reports what it did through LangGraph's custom stream, so the CLI, TUI, web UI and
A2A clients can show "summarized 34 older messages" as it happens; a process-wide tally feeds
metrics and evaluations.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from langgraph.config import get_stream_writer

logger = logging.getLogger("pilothouse.context")

ACTIONS = ("summarized", "deleted", "shrunk", "truncated", "refused_output", "repaired",
           "overflow_recovered", "tool_failed", "tool_timeout", "repeat_blocked",
           "correlated", "expanded")


@dataclass(frozen=True)
class ContextAction:
    """One thing a context-safety layer did to the conversation."""

    action: str
    detail: str
    layer: str
    numbers: dict[str, int] = field(default_factory=dict)

    def as_event(self) -> dict[str, Any]:
        return {"type": "context", **asdict(self)}


class _Tally:
    """Thread-safe counts of actions since process start (for metrics and evals)."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, action: str) -> None:
        with self._lock:
            self._counts[action] += 1

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


TALLY = _Tally()


def report(action: ContextAction) -> None:
    """Send `action` to the run's stream (when inside a graph run), the log and the tally."""
    TALLY.add(action.action)
    logger.info("context %s: %s", action.action, action.detail)
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (unit tests, benchmarks)
        return
    writer(action.as_event())
