"""The SDK's request handler, plus one rule: a stream abandoned mid-task cancels the task.

In a2a-sdk 1.x the agent runs in a background task; a client that disconnects only detaches its
subscription, and the agent would go on calling the model for nobody. Here a streaming request
that ends before its task reached a final or waiting state (completed, failed, canceled,
input-required) cancels the task through the SDK's own cancel path, which stops the run and
resolves its open tool calls (see `ConversationExecutor.cancel`). Logged once per task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.agent_execution.active_task import (
    INTERRUPTED_TASK_STATES,
    TERMINAL_TASK_STATES,
)
from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

log = logging.getLogger("pilothouse.a2a")

_SETTLED = TERMINAL_TASK_STATES | INTERRUPTED_TASK_STATES


def _task_id(event: Event) -> str | None:
    if isinstance(event, Task):
        return event.id or None
    if isinstance(event, TaskStatusUpdateEvent | TaskArtifactUpdateEvent):
        return event.task_id or None
    return None


def _settles(event: Event) -> bool:
    """True when the stream may end after `event` without abandoning the task."""
    if isinstance(event, Message):
        return True
    if isinstance(event, Task | TaskStatusUpdateEvent):
        return event.status.state in _SETTLED
    return False


class CancellingRequestHandler(DefaultRequestHandlerV2):
    """`DefaultRequestHandlerV2` that cancels tasks whose streaming client went away."""

    def __init__(self, *args: Any, agent: str = "agent", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.agent = agent
        self._cancellations: set[asyncio.Task[None]] = set()

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        task_id: str | None = params.message.task_id or None
        settled = False
        try:
            async for event in super().on_message_send_stream(params, context):
                task_id = task_id or _task_id(event)
                settled = _settles(event)
                yield event
        finally:
            if not settled and task_id is not None:
                self._cancel_later(task_id, context)

    def _cancel_later(self, task_id: str, context: ServerCallContext) -> None:
        # A task, not an await: the stream's own task is being cancelled right now.
        log.warning("The client streaming task %s (%s agent) went away before the task "
                    "ended; cancelling its run.", task_id, self.agent)
        job = asyncio.create_task(self._cancel(task_id, context), name=f"cancel-{task_id}")
        self._cancellations.add(job)
        job.add_done_callback(self._cancellations.discard)

    async def _cancel(self, task_id: str, context: ServerCallContext) -> None:
        try:
            await self.on_cancel_task(CancelTaskRequest(id=task_id), context)
        except (TaskNotCancelableError, TaskNotFoundError):
            pass  # it ended (or was cancelled) meanwhile
        except Exception:
            log.exception("Cancelling abandoned task %s failed.", task_id)

    async def aclose(self) -> None:
        """Finish pending cancellations, then drain the SDK's active tasks."""
        if self._cancellations:
            await asyncio.gather(*self._cancellations, return_exceptions=True)
        await super().aclose()
