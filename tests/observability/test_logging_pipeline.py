"""Structured logging: JSON lines, request ids from contextvars, secrets never rendered."""

from __future__ import annotations

import io
import json
import logging

import pytest
import structlog
from obs_support import JsonLogs

from pilothouse.observability.logging import (
    bind_request_context,
    configure_logging,
    get_logger,
    remove_logging,
)
from pilothouse.observability.tracing import TracingSetup, get_tracer
from pilothouse.redaction import MASK


def test_structlog_and_stdlib_lines_are_json_with_level_logger_and_time(
    json_logs: JsonLogs,
) -> None:
    get_logger("pilothouse.test").info("app listed", app="payments-api", items=3)
    logging.getLogger("pilothouse.std").warning("disk %s at %d%%", "/var", 91)

    first, second = json_logs.lines()
    assert first["event"] == "app listed" and first["app"] == "payments-api"
    assert first["items"] == 3 and first["level"] == "info"
    assert first["logger"] == "pilothouse.test" and first["timestamp"].endswith("Z")
    assert second["event"] == "disk /var at 91%" and second["level"] == "warning"
    assert second["logger"] == "pilothouse.std"


def test_level_filters_both_kinds_of_logger(json_logs: JsonLogs) -> None:
    get_logger("pilothouse.test").debug("hidden")
    logging.getLogger("pilothouse.std").debug("hidden too")
    assert json_logs.lines() == []


def test_request_context_binds_ids_and_restores_outer_ones(json_logs: JsonLogs) -> None:
    log = get_logger("pilothouse.test")
    with bind_request_context(conversation_id="conv-1", agent="supervisor") as outer_id:
        log.info("routing")
        with bind_request_context(agent="argocd", request_id="req-inner"):
            logging.getLogger("pilothouse.std").info("listing")
        log.info("answered")
    log.info("outside")

    routing, listing, answered, outside = json_logs.lines()
    assert routing["conversation_id"] == "conv-1" and routing["agent"] == "supervisor"
    assert len(outer_id) == 16 and routing["request_id"] == outer_id
    assert listing["agent"] == "argocd" and listing["request_id"] == "req-inner"
    assert listing["conversation_id"] == "conv-1", "outer ids stay bound in the inner block"
    assert answered["agent"] == "supervisor" and answered["request_id"] == outer_id
    assert "conversation_id" not in outside and "request_id" not in outside


def test_secret_fields_and_secret_looking_text_are_masked(json_logs: JsonLogs) -> None:
    log = get_logger("pilothouse.test")
    log.info("calling github", token="ghp_abcdefghijklmnop", input_tokens=1234,
             headers={"Authorization": "Basic dXNlcjpwYXNz", "Accept": "json"},
             argocd_password="hunter2", note="used Bearer abcdefghijklmnopqrstuvwxyz")
    logging.getLogger("pilothouse.std").info("key is %s", "sk-proj-Abcdefghijklmnopqrstu")

    line, std = json_logs.lines()
    assert line["token"] == MASK and line["argocd_password"] == MASK
    assert line["headers"] == {"Authorization": MASK, "Accept": "json"}
    assert line["input_tokens"] == 1234, "a count named *_tokens is not a secret"
    assert line["note"] == f"used Bearer {MASK}"
    assert std["event"] == f"key is {MASK}"
    for secret in ("ghp_abcdefghijklmnop", "hunter2", "dXNlcjpwYXNz", "sk-proj-Abcdefghij"):
        assert secret not in json_logs.text


def test_other_handlers_never_see_a_structlog_secret(
    json_logs: JsonLogs, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        get_logger("pilothouse.test").info("login", api_key="AKIAABCDEFGHIJKLMNOP")
    assert "login" in caplog.text and "AKIAABCDEFGHIJKLMNOP" not in caplog.text


def test_tracebacks_are_rendered_then_redacted(json_logs: JsonLogs) -> None:
    try:
        raise ValueError("login failed for token ghp_zyxwvutsrqponmlk")
    except ValueError:
        logging.getLogger("pilothouse.std").exception("request failed")
    (line,) = json_logs.lines()
    assert f"ValueError: login failed for token {MASK}" in line["exception"]
    assert "ghp_zyxwvutsrqponmlk" not in json_logs.text


def test_open_span_ids_join_the_log_line(json_logs: JsonLogs, spans: TracingSetup) -> None:
    with get_tracer().start_as_current_span("work") as span:
        get_logger("pilothouse.test").info("inside")
    (line,) = json_logs.lines()
    assert line["trace_id"] == format(span.get_span_context().trace_id, "032x")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_gets_readable_lines_and_a_pipe_gets_json() -> None:
    root_level = logging.getLogger().level
    terminal, pipe = _Terminal(), io.StringIO()
    try:
        handler = configure_logging("INFO", json=False, stream=terminal)
        get_logger("pilothouse.test").info("synced", app="web", token="ghp_abcdefghijklmnop")
        handler = configure_logging("INFO", json=False, stream=pipe)
        get_logger("pilothouse.test").info("synced", app="web")
        remove_logging(handler)
    finally:
        logging.getLogger().setLevel(root_level)
        structlog.reset_defaults()
    shown = terminal.getvalue()
    assert "synced" in shown and "web" in shown and "ghp_abcdefghijklmnop" not in shown
    assert not shown.lstrip().startswith("{")
    assert json.loads(pipe.getvalue())["app"] == "web"
    assert not any(getattr(h, "_pilothouse_handler", False) for h in logging.getLogger().handlers)


def test_reconfiguring_replaces_only_our_handler(json_logs: JsonLogs) -> None:
    root = logging.getLogger()
    before = [h for h in root.handlers if not getattr(h, "_pilothouse_handler", False)]
    second = io.StringIO()
    handler = configure_logging("INFO", json=True, stream=second)
    try:
        get_logger("pilothouse.test").info("once")
        assert json_logs.text == "" and json.loads(second.getvalue())["event"] == "once"
        ours = [h for h in root.handlers if getattr(h, "_pilothouse_handler", False)]
        assert ours == [handler]
        assert [h for h in root.handlers if h is not handler] == before
    finally:
        root.removeHandler(handler)
