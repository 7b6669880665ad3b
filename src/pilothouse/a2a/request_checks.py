"""What an A2A request may hold, checked before any work, and how a caller's mistake is logged.

The limits are the REST API's (`runtime.input_limits`): a context, task or reference id matches
the one id rule, a message id is at most as long, and a message's text is at most as long as a
REST question. A request over them is refused with the protocol's "invalid params" error
(JSON-RPC -32602, HTTP 400 on the REST binding) whose message says the limit, before a turn is
claimed, a task created or anything stored. The check is the same for every caller and does not
look anything up, so it says nothing about whether an id exists.

A caller's mistake (malformed JSON-RPC, params of the wrong shape, an unknown task) is the
caller's to fix, not the operator's: the SDK logs those at ERROR with a traceback or at
WARNING; `install_client_error_filter` brings them down to one INFO line. Failures of the
server itself (internal errors) keep their level.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from a2a.helpers import get_message_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import InvalidParamsError

from pilothouse.runtime.input_limits import MAX_ID_CHARS, id_problem, message_problem


def _ids(params: object) -> Iterable[tuple[str, str]]:
    """(what, value) of every id `params` names that must follow the id rule."""
    match params:
        case SendMessageRequest(message=message):
            yield "context id", message.context_id
            yield "task id", message.task_id
            for reference in message.reference_task_ids:
                yield "reference task id", reference
        case GetTaskRequest() | CancelTaskRequest() | SubscribeToTaskRequest():
            yield "task id", params.id
        case ListTasksRequest(context_id=context_id):
            yield "context id", context_id
        case TaskPushNotificationConfig(task_id=task_id) \
                | ListTaskPushNotificationConfigsRequest(task_id=task_id):
            yield "task id", task_id
        case GetTaskPushNotificationConfigRequest() | DeleteTaskPushNotificationConfigRequest():
            yield "task id", params.task_id
            yield "push notification config id", params.id


def check_request(params: object) -> None:
    """Raise InvalidParamsError when `params` is over a limit; an empty id is the SDK's to judge
    (a message without a context id starts one; a get without an id is refused there)."""
    for what, value in _ids(params):
        problem = id_problem(value, what) if value else None
        if problem is not None:
            raise InvalidParamsError(message=problem)
    if isinstance(params, SendMessageRequest):
        message = params.message
        if len(message.message_id) > MAX_ID_CHARS:
            # Any client's own shape is fine (it is never a key here), only not its size.
            raise InvalidParamsError(
                message=f"The message id is {len(message.message_id):,} characters long; the "
                        f"limit is {MAX_ID_CHARS}.")
        problem = message_problem(get_message_text(message), "message text")
        if problem is not None:
            raise InvalidParamsError(message=problem)


#: The SDK's loggers that report a caller's malformed or refused request.
_DISPATCH_LOGGERS = ("a2a.server.routes.jsonrpc_dispatcher", "a2a.utils.error_handlers")
#: What the JSON-RPC dispatcher logs (`logger.exception`: ERROR and a traceback) for a request
#: the caller got wrong, just before its "Request Error" line for the same request, which
#: already carries the reason (`parseError`): dropped.
_TRACEBACKS = ("Failed to validate base JSON-RPC request", "Failed to parse request params")
#: The line for an error answered to the caller (and the REST binding's unparsable body);
#: internal errors (-32603) keep their level.
_ANSWERED = ("Request Error (", "Request error: ", "Parse error: ")
_INTERNAL_CODES = ("Code=-32603",)


class CallerMistakeFilter(logging.Filter):
    """Logs a caller's malformed or refused request as one INFO line, without a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        if message.startswith(_TRACEBACKS):
            return False
        if not message.startswith(_ANSWERED) or record.levelno <= logging.INFO \
                or any(code in record.getMessage() for code in _INTERNAL_CODES):
            return True
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        # Lowered after the logger's own level check: drop it where INFO is not wanted.
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)


def install_client_error_filter() -> None:
    """Attach `CallerMistakeFilter` to the SDK's dispatch loggers (idempotent)."""
    for name in _DISPATCH_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, CallerMistakeFilter) for f in logger.filters):
            logger.addFilter(CallerMistakeFilter())
