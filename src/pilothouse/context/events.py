"""Context actions (summarized, truncated, repaired, ...) made visible to users and metrics.

Each layer reports what it did through LangGraph's custom stream, so the CLI, TUI, web UI and
A2A clients can show "summarized 34 older messages" as it happens. The same report counts the
action in the process's Prometheus counter and in the counts of the run it happened in.

A run's counts travel with the run, not in a process global that callers compare before and
after: `counting_actions()` binds fresh counts in a context variable, which every task and
thread the run starts inherits (asyncio tasks and LangChain's executors copy the context), so
a sub-agent's actions count in the turn that asked it, and twenty conversations answered at
once each see only their own.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from langgraph.config import get_stream_writer

from pilothouse.observability.metrics import record_context_action

logger = logging.getLogger("pilothouse.context")

ActionName = Literal["summarized", "deleted", "shrunk", "truncated", "refused_output",
                     "repaired", "overflow_recovered", "tool_failed", "tool_timeout",
                     "repeat_blocked", "correlated", "expanded", "grounding"]
ACTIONS: tuple[ActionName, ...] = get_args(ActionName)


@dataclass(frozen=True)
class ContextAction:
    """One thing a context-safety layer did to the conversation."""

    action: ActionName
    detail: str
    layer: str
    numbers: dict[str, int] = field(default_factory=dict)

    def as_event(self) -> dict[str, Any]:
        """The action as JSON (the `data` of a `context` event on the wire)."""
        return {"type": "context", **asdict(self)}


class ActionCounts:
    """How often each context action happened in one run (and the runs it started).

    Thread-safe: a run's tools and model calls may report from executor threads. Counts added
    here are added to the enclosing run's counts too, so nesting `counting_actions()` (a turn
    inside an evaluation case) never hides an action from the outer count.
    """

    def __init__(self, parent: ActionCounts | None = None) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._parent = parent

    def add(self, action: ActionName) -> None:
        with self._lock:
            self._counts[action] += 1
        if self._parent is not None:
            self._parent.add(action)

    def snapshot(self) -> dict[str, int]:
        """The counts so far, by action (actions that never happened are absent)."""
        with self._lock:
            return dict(self._counts)


_RUN_COUNTS: ContextVar[ActionCounts | None] = ContextVar("pilothouse_run_actions", default=None)


@contextmanager
def counting_actions() -> Iterator[ActionCounts]:
    """Count the context actions of every run started inside the block, and only those.

    Enter it in the task that starts the run (or before creating that task): a context
    variable set inside an async generator would leak into whoever iterates it.
    """
    counts = ActionCounts(parent=_RUN_COUNTS.get())
    token = _RUN_COUNTS.set(counts)
    try:
        yield counts
    finally:
        _RUN_COUNTS.reset(token)


def report(action: ContextAction) -> None:
    """Send `action` to the run's stream (when inside a graph run), the log and the counts."""
    record_context_action(action.action)
    counts = _RUN_COUNTS.get()
    if counts is not None:
        counts.add(action.action)
    logger.info("context %s: %s", action.action, action.detail)
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (unit tests, benchmarks)
        return
    writer(action)  # the typed action itself: the conversation turns it into an event
