"""Publish one task's conversation events to its A2A event queue, knowing when it has closed.

The events themselves are built and sent by the SDK's `TaskUpdater` (status updates with their
timestamps and agent messages, artifact chunks, no event after a final state); this module adds
what it does not do. The queue of a task closes under a running agent when its consumer stops
(a failure, a server shutdown), and the SDK then warns once per dropped event: dozens of
identical lines per task. Here the state is kept per task: the first dropped event logs one
warning naming the task, later ones are dropped silently, and the executor learns it should
stop the run (nobody is listening).

Tokens are coalesced (a store write per token would be one SQLite write per word) into chunks
of the `answer` artifact; the final answer replaces the chunks with one clean part, and only
then comes the final status: artifacts before the status, as the SDK requires.
"""

from __future__ import annotations

import contextvars
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from a2a.helpers import new_data_part, new_text_part
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Message, Part, Task, TaskState, TaskStatus

log = logging.getLogger("pilothouse.a2a")

ANSWER_ARTIFACT = "answer"
# The SDK's warnings per dropped event (v2 queues, then the legacy queue of the seed's logs).
_SDK_DROP_WARNINGS = ("Queue was closed during enqueuing", "Queue is closed. Event will not")
_enqueuing: contextvars.ContextVar[TaskPublisher | None] = contextvars.ContextVar(
    "pilothouse_a2a_enqueuing", default=None)


class QueueClosedFilter(logging.Filter):
    """Folds the SDK's per-event "queue closed" warning into the publisher's one per task."""

    def filter(self, record: logging.LogRecord) -> bool:
        publisher = _enqueuing.get()
        if publisher is not None and any(w in record.getMessage() for w in _SDK_DROP_WARNINGS):
            publisher.mark_closed()
            return False
        return True


def install_queue_log_filter() -> None:
    """Attach `QueueClosedFilter` to the SDK's queue loggers (idempotent)."""
    for name in ("a2a.server.events.event_queue_v2", "a2a.server.events.event_queue"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, QueueClosedFilter) for f in logger.filters):
            logger.addFilter(QueueClosedFilter())


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


class TaskPublisher:
    """The events of one task, in an order the SDK accepts, dropped once the queue closes."""

    def __init__(self, queue: EventQueue, task_id: str, context_id: str, *, agent: str,
                 flush_chars: int = 160, flush_seconds: float = 0.1) -> None:
        self.queue = queue
        self.task_id = task_id
        self.context_id = context_id
        self.agent = agent
        self.closed = False
        self.flush_chars = flush_chars
        self.flush_seconds = flush_seconds
        self.updater = TaskUpdater(queue, task_id, context_id)
        self._pending: list[str] = []
        self._streamed: list[str] = []
        self._last_flush = time.monotonic()

    def mark_closed(self) -> None:
        """Note that the queue is closed; the first call per task logs it."""
        if not self.closed:
            self.closed = True
            log.warning("A2A event queue closed for task %s (%s agent); dropping its further "
                        "events and stopping the run.", self.task_id, self.agent)

    async def _send(self, publish: Callable[[], Awaitable[None]]) -> bool:
        """Run `publish` (one enqueue) unless the queue is known closed; False once it is."""
        # Every concrete queue has `is_closed`; the abstract base does not declare it.
        is_closed = getattr(self.queue, "is_closed", None)
        if self.closed or (is_closed is not None and is_closed()):
            self.mark_closed()
            return False
        token = _enqueuing.set(self)
        try:
            await publish()
        finally:
            _enqueuing.reset(token)
        return not self.closed

    def _message(self, text: str, data: dict[str, Any] | None = None) -> Message:
        parts: list[Part] = [new_text_part(text)] if text else []
        if data:
            parts.append(new_data_part(_json_safe(data)))
        return self.updater.new_agent_message(parts)

    async def open_task(self, user_message: Message) -> bool:
        """Announce a new task (the first event of a task must be the Task itself, which
        `TaskUpdater` does not send)."""
        return await self._send(lambda: self.queue.enqueue_event(Task(
            id=self.task_id, context_id=self.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            history=[user_message])))

    async def status(self, state: TaskState, text: str = "",
                     data: dict[str, Any] | None = None) -> bool:
        """A status update; pending answer chunks go out first."""
        await self.flush()
        message = self._message(text, data) if text or data else None
        return await self._send(lambda: self.updater.update_status(state, message=message))

    async def token(self, text: str) -> bool:
        """Buffer streamed answer text; flush when enough has gathered."""
        self._pending.append(text)
        due = time.monotonic() - self._last_flush >= self.flush_seconds
        if due or sum(len(t) for t in self._pending) >= self.flush_chars:
            return await self.flush()
        return not self.closed

    async def flush(self) -> bool:
        """Send buffered answer text as the next chunk of the answer artifact."""
        if not self._pending:
            return not self.closed
        text = "".join(self._pending)
        self._pending.clear()
        self._last_flush = time.monotonic()
        first = not self._streamed
        self._streamed.append(text)
        return await self._artifact(text, append=not first, last=False)

    async def answer(self, text: str) -> bool:
        """The final answer: replaces the streamed chunks with one part holding all of it."""
        self._pending.clear()
        self._streamed = [text]
        return await self._artifact(text, append=False, last=True)

    async def _artifact(self, text: str, *, append: bool, last: bool) -> bool:
        return await self._send(lambda: self.updater.add_artifact(
            [new_text_part(text)], artifact_id=f"{self.task_id}-{ANSWER_ARTIFACT}",
            name=ANSWER_ARTIFACT, append=append, last_chunk=last))
