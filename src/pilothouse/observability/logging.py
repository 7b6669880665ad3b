"""Structured logging: one structlog pipeline for our loggers and the standard library's.

Every line carries the conversation, agent and request it belongs to (bound in contextvars, so
concurrent conversations in one process never mix their ids), the current trace id when a span is
open, and passes a redaction step (pilothouse.redaction: secret-named fields, credential shapes,
the configured secret values) before it is rendered: a credential must never reach a log.
Logs go to stderr by default because stdout belongs to the CLI's answers and to MCP's stdio.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

import structlog
from opentelemetry import trace
from structlog.typing import EventDict, Processor, WrappedLogger

from pilothouse.redaction import Redactor

_HANDLER_MARK = "_pilothouse_handler"


def redaction_step(redactor: Redactor) -> Processor:
    """structlog processor: mask secret fields and credential-looking text in every value."""

    def redact_secrets(logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
        return {key: redactor.scrub(value, key) for key, value in event_dict.items()}

    return redact_secrets


def add_trace_ids(logger: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
    """structlog processor: the open span's trace and span ids, to join logs with traces."""
    context = trace.get_current_span().get_span_context()
    if context.is_valid:
        event_dict.setdefault("trace_id", format(context.trace_id, "032x"))
        event_dict.setdefault("span_id", format(context.span_id, "016x"))
    return event_dict


def _shared_processors() -> list[Processor]:
    """Steps for every record, whether it came from structlog or from `logging`."""
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        add_trace_ids,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def _renderer(json: bool, stream: IO[str]) -> Processor:
    isatty = getattr(stream, "isatty", None)
    if not json and isatty is not None and isatty():
        return structlog.dev.ConsoleRenderer(colors=True)
    return structlog.processors.JSONRenderer(sort_keys=False)


def configure_logging(
    level: str | int = "WARNING",
    json: bool = False,
    *,
    stream: IO[str] | None = None,
    redactor: Redactor | None = None,
) -> logging.Handler:
    """Route structlog and stdlib logging through one redacting pipeline to `stream`.

    JSON lines unless `json` is false and `stream` (default stderr) is a terminal, which gets
    readable colored lines. Calling it again replaces the handler it installed before and keeps
    everyone else's (pytest's capture, an embedding application's). `redactor` also masks the
    configured secret values (`Redactor(settings.secret_values())`); without one, secret shapes
    and secret-named fields are still masked. Returns the handler.
    """
    target = stream if stream is not None else sys.stderr
    redact_secrets = redaction_step(redactor or Redactor())
    shared = _shared_processors()
    formatter = structlog.stdlib.ProcessorFormatter(
        # Records from `logging` get the shared steps plus their `extra=` fields.
        foreign_pre_chain=[*shared, structlog.stdlib.ExtraAdder()],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            # Tracebacks become text before redaction, so a secret in an exception is masked.
            structlog.processors.format_exc_info,
            redact_secrets,
            _renderer(json, target),
        ],
    )
    handler = logging.StreamHandler(target)
    handler.setFormatter(formatter)
    setattr(handler, _HANDLER_MARK, True)

    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else level.upper())

    structlog.configure(
        processors=[
            structlog.stdlib.filter_by_level,
            *shared,
            structlog.stdlib.PositionalArgumentsFormatter(),
            # Redacted before the record exists: other handlers on the root logger (pytest's
            # capture, an embedding application's) receive the event dict too.
            structlog.processors.format_exc_info,
            redact_secrets,
            structlog.stdlib.ProcessorFormatter.wrap_for_formatter,
        ],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        # Not cached: a later configure_logging (tests, `serve` after the CLI) must take effect.
        cache_logger_on_first_use=False,
    )
    return handler


def remove_logging(handler: logging.Handler) -> None:
    """Undo `configure_logging`: detach `handler` and return structlog to its defaults."""
    logging.getLogger().removeHandler(handler)
    handler.close()
    structlog.reset_defaults()


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    """A structlog logger named `name` (fields as keyword arguments)."""
    logger: structlog.stdlib.BoundLogger = structlog.stdlib.get_logger(name)
    return logger


def new_request_id() -> str:
    """A short random id for one request (16 hex digits)."""
    return uuid.uuid4().hex[:16]


@contextmanager
def bind_request_context(
    *,
    conversation_id: str | None = None,
    agent: str | None = None,
    request_id: str | None = None,
    **extra: str | int,
) -> Iterator[str]:
    """Attach these ids to every log line written inside the block; yields the request id.

    A missing `request_id` is generated. Ids bound by an outer block stay unless overridden
    here, and are restored on exit, so nested agent hops each get their own `agent`.
    """
    rid = request_id or new_request_id()
    values: dict[str, Any] = {"request_id": rid, **extra}
    if conversation_id is not None:
        values["conversation_id"] = conversation_id
    if agent is not None:
        values["agent"] = agent
    with structlog.contextvars.bound_contextvars(**values):
        yield rid
