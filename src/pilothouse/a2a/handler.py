"""The SDK's request handler, plus its rules: a request over the limits is refused before any
work, a caller starts only so many conversations a minute, a stream abandoned mid-task cancels
the task, and an unexpected failure reaches the caller as a reference, never as SQL or a trace.

Every request's ids and message text are checked first (`request_checks`: the REST API's
limits), the same for any caller and without a lookup. A message that starts a conversation
(no task id, and a context the caller has not used) counts against the caller's
`new_conversations` limiter, the one `POST /conversations` uses, so a caller cannot start
unbounded conversations by inventing context ids either.

In a2a-sdk 1.x the agent runs in a background task; a client that disconnects only detaches its
subscription, and the agent would go on calling the model for nobody. Here a streaming request
that ends before its task reached a final or waiting state (completed, failed, canceled,
input-required) cancels the task through the SDK's own cancel path, which stops the run and
resolves its open tool calls (see `ConversationExecutor.cancel`). Logged once per task.

Any exception that is not one of the protocol's own errors (a locked task database, a bug) is
logged whole with a reference, and the caller gets an A2A internal error that carries only the
reference; the SDK would otherwise put `str(exception)` (SQL included) in the response.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
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
from a2a.utils.errors import (
    A2AError,
    InternalError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from pilothouse.a2a.namespaces import caller_name
from pilothouse.a2a.request_checks import check_request
from pilothouse.observability.incidents import internal_error_text, log_internal_error
from pilothouse.rate_limit import RateLimiter, retry_after
from pilothouse.runtime.turn_locks import TurnLease

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

    def __init__(self, *args: Any, agent: str = "agent",
                 new_conversations: RateLimiter | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.agent = agent
        self.new_conversations = new_conversations
        self._cancellations: set[asyncio.Task[None]] = set()

    async def _claim_turn(self, params: SendMessageRequest,
                          context: ServerCallContext) -> TurnLease | None:
        await self._count_new_conversation(params, context)
        # One turn per conversation: refused as busy before the SDK creates a task.
        claim = getattr(self.agent_executor, "claim", None)
        return None if claim is None else await claim(params.message, context)

    async def _count_new_conversation(self, params: SendMessageRequest,
                                      context: ServerCallContext) -> None:
        if self.new_conversations is None:
            return
        starts = getattr(self.agent_executor, "starts_conversation", None)
        if starts is None or not await starts(params.message, context):
            return
        wait = self.new_conversations.hit(caller_name(context))
        if wait is not None:
            raise UnsupportedOperationError(
                message=f"Too many new conversations: at most {self.new_conversations.limit} "
                        "a minute per caller. Continue an existing context, or retry after "
                        f"{retry_after(wait)} s (PILOTHOUSE_NEW_CONVERSATIONS_PER_MINUTE).",
                data={"retry_after_seconds": int(retry_after(wait))})

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        lease = await self._claim_turn(params, context)
        try:
            return await super().on_message_send(params, context)
        finally:
            if lease is not None and not lease.adopted:
                lease.release()  # the executor never ran (the request failed first)

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        task_id: str | None = params.message.task_id or None
        settled = False
        lease = await self._claim_turn(params, context)
        try:
            async for event in super().on_message_send_stream(params, context):
                task_id = task_id or _task_id(event)
                settled = _settles(event)
                yield event
        finally:
            if lease is not None and not lease.adopted:
                lease.release()  # the executor never ran (the request failed first)
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


def _internal(method: str, error: BaseException) -> A2AError:
    """The error a caller sees for `error`: protocol errors as they are, the rest referenced."""
    if isinstance(error, A2AError) and not isinstance(error, InternalError):
        return error
    reference = log_internal_error(log, f"A2A {method} failed unexpectedly", error)
    return InternalError(message=internal_error_text(reference))


def _guard_call(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def guarded(self: Any, params: Any, *args: Any, **kwargs: Any) -> Any:
        check_request(params)  # over a limit: refused before any work
        try:
            return await method(self, params, *args, **kwargs)
        except Exception as error:
            safe = _internal(method.__name__, error)
            if safe is error:
                raise
            raise safe from None
    return guarded


def _guard_stream(method: Callable[..., AsyncGenerator[Any, None]]
                  ) -> Callable[..., AsyncGenerator[Any, None]]:
    @functools.wraps(method)
    async def guarded(self: Any, params: Any, *args: Any,
                      **kwargs: Any) -> AsyncGenerator[Any, None]:
        check_request(params)
        try:
            async for event in method(self, params, *args, **kwargs):
                yield event
        except Exception as error:
            safe = _internal(method.__name__, error)
            if safe is error:
                raise
            raise safe from None
    return guarded


_CALLS = ("on_get_task", "on_list_tasks", "on_cancel_task", "on_message_send",
          "on_create_task_push_notification_config", "on_get_task_push_notification_config",
          "on_list_task_push_notification_configs", "on_delete_task_push_notification_config",
          "on_get_extended_agent_card")
_STREAMS = ("on_message_send_stream", "on_subscribe_to_task")

# Wrapped after the class body, so overrides defined in it (or added later above) are covered.
for _name in _CALLS:
    setattr(CancellingRequestHandler, _name, _guard_call(getattr(CancellingRequestHandler, _name)))
for _name in _STREAMS:
    setattr(CancellingRequestHandler, _name,
            _guard_stream(getattr(CancellingRequestHandler, _name)))
