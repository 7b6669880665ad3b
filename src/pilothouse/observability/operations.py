"""Process start-up for every door: logs and traces from Settings (redacted with its secrets)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pilothouse.config import Settings
from pilothouse.observability.logging import configure_logging, remove_logging
from pilothouse.observability.tracing import configure_tracing
from pilothouse.redaction import Redactor


@contextmanager
def operations(settings: Settings) -> Iterator[None]:
    """Configure logging and (when an endpoint or the console is set) tracing for a process."""
    redactor = Redactor(settings.secret_values())  # configured credentials, masked everywhere
    handler = configure_logging(settings.log_level, settings.log_json, redactor=redactor)
    tracing = None
    if settings.otel_endpoint or settings.trace_console:
        tracing = configure_tracing(settings.otel_service_name, settings.otel_endpoint,
                                    protocol=settings.otel_protocol,
                                    console=settings.trace_console, redactor=redactor)
    try:
        yield
    finally:
        if tracing is not None:
            tracing.shutdown()
        remove_logging(handler)
