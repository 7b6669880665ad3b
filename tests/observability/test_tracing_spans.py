"""Tracing: model and tool spans from a real agent run, A2A context propagation, OTLP export."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from obs_support import TOOLS, JsonLogs, RunAgent
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanKind, StatusCode

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.models.registry import ModelSetup
from pilothouse.observability.middleware import ObservabilityMiddleware
from pilothouse.observability.tracing import (
    TracingSetup,
    a2a_span,
    configure_tracing,
    get_tracer,
    shutdown_tracing,
    turn_span,
)
from pilothouse.runtime.builder import build_agent
from pilothouse.testing.scripted_model import tool_call


def attribute(span: ReadableSpan, key: str) -> Any:
    return (span.attributes or {})[key]


def by_name(setup: TracingSetup) -> dict[str, list[ReadableSpan]]:
    assert setup.memory is not None
    found: dict[str, list[ReadableSpan]] = {}
    for span in setup.memory.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


async def test_agent_run_yields_model_and_tool_spans_with_tokens_and_status(
    run_agent: RunAgent, spans: TracingSetup
) -> None:
    steps = [
        tool_call("get_application", name="payments-api"),
        tool_call("broken_tool", reason="maintenance"),
        "payments-api is Healthy; the other backend is down.",
    ]
    with turn_span("argocd", conversation_id="conv-9") as turn:
        await run_agent(steps, [ObservabilityMiddleware("argocd", model_name="openai:gpt-4")])

    found = by_name(spans)
    chats = found["chat openai:gpt-4"]
    assert len(chats) == 3
    for chat in chats:
        assert attribute(chat, "gen_ai.agent.name") == "argocd"
        assert attribute(chat, "gen_ai.request.model") == "openai:gpt-4"
        assert attribute(chat, "gen_ai.usage.input_tokens") > 0
        assert attribute(chat, "gen_ai.usage.output_tokens") == 10
        assert chat.kind is SpanKind.CLIENT and chat.status.status_code is StatusCode.OK
    assert [attribute(c, "pilothouse.response.tool_calls") for c in chats] == [1, 1, 0]

    (ok,) = found["execute_tool get_application"]
    assert attribute(ok, "pilothouse.status") == "ok"
    assert attribute(ok, "pilothouse.tool.result_chars") > 20
    (failed,) = found["execute_tool broken_tool"]
    assert failed.status.status_code is StatusCode.ERROR
    assert "backend unavailable: maintenance" in (failed.status.description or "")
    assert [e.name for e in failed.events] == ["exception"]

    # Every call joins the turn's trace, as children of the turn span.
    trace_id = turn.get_span_context().trace_id
    turn_span_id = turn.get_span_context().span_id
    for span in [*chats, ok, failed]:
        assert span.context is not None and span.context.trace_id == trace_id
        assert span.parent is not None and span.parent.span_id == turn_span_id


def test_sync_invoke_is_traced_too(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
    spans: TracingSetup,
) -> None:
    graph = build_agent(make_settings(), scripted_setup(
        [tool_call("broken_tool", reason="disk"), "The backend is down."]), tools=TOOLS,
        extra_middleware=[ObservabilityMiddleware("devops", model_name="m")])
    result = graph.invoke({"messages": [HumanMessage(content="status?")]})
    assert result["messages"][-1].content == "The backend is down."
    found = by_name(spans)
    assert len(found["chat m"]) == 2
    (failed,) = found["execute_tool broken_tool"]
    assert failed.status.status_code is StatusCode.ERROR
    assert attribute(failed, "pilothouse.status") == "error"


async def test_model_label_comes_from_the_chat_model_without_a_name(
    run_agent: RunAgent, spans: TracingSetup
) -> None:
    await run_agent(["hello"], [ObservabilityMiddleware("devops")])
    assert list(by_name(spans)) == ["chat scripted"]


async def test_tool_log_line_has_sizes_and_redacted_args_not_contents(
    run_agent: RunAgent, spans: TracingSetup, json_logs: JsonLogs
) -> None:
    steps = [tool_call("get_application", name="payments-api", token="ghp_abcdefghijklmnop"),
             "done"]
    await run_agent(steps, [ObservabilityMiddleware("argocd")])

    (line,) = json_logs.events("tool call")
    assert line["tool"] == "get_application" and line["status"] == "ok"
    assert '"token": "[REDACTED]"' in line["tool_args"] and "payments-api" in line["tool_args"]
    assert line["result_chars"] > 0 and line["agent"] == "argocd"
    assert "Healthy" not in json_logs.text, "tool results are sized, never logged"
    assert "ghp_abcdefghijklmnop" not in json_logs.text
    models = json_logs.events("model call")
    assert len(models) == 2 and all(m["input_tokens"] > 0 for m in models)
    assert all(m["trace_id"] for m in [line, *models])


def test_a2a_hop_carries_the_trace_from_client_to_server(spans: TracingSetup) -> None:
    headers: dict[str, str] = {}
    with a2a_span("argocd", role="client", carrier=headers, task_id="task-1") as client:
        assert headers["traceparent"].split("-")[1] == f"{client.get_span_context().trace_id:032x}"
        # The remote agent's side, handed only the headers (as Starlette gives them).
        with pytest.raises(ValueError), a2a_span("argocd", role="server", caller="supervisor",
                                                  carrier=dict(headers)) as server:
            raise ValueError("bad token ghp_abcdefghijklmnop")

    hops = by_name(spans)["a2a SendMessage argocd"]
    (served,) = [s for s in hops if s.kind is SpanKind.SERVER]
    (called,) = [s for s in hops if s.kind is SpanKind.CLIENT]
    assert served.parent is not None and served.parent.is_remote
    assert served.parent.span_id == client.get_span_context().span_id
    assert server.get_span_context().trace_id == client.get_span_context().trace_id
    assert served.status.status_code is StatusCode.ERROR
    assert served.status.description == "ValueError: bad token [REDACTED]"
    assert attribute(served, "pilothouse.a2a.caller") == "supervisor"
    assert attribute(called, "pilothouse.a2a.task_id") == "task-1"
    assert attribute(called, "rpc.system") == "a2a" and attribute(called, "rpc.service") == "argocd"


def test_an_a2a_request_without_trace_context_starts_a_trace(spans: TracingSetup) -> None:
    # Only the request names the server span's parent; a span current in the server's own
    # context (or a malformed header) must not adopt the request.
    with get_tracer().start_as_current_span("unrelated") as unrelated:
        with a2a_span("argocd", role="server", carrier={}) as bare:
            pass
        with a2a_span("argocd", role="server", carrier={"traceparent": "garbage"}) as broken:
            pass
    ids = {bare.get_span_context().trace_id, broken.get_span_context().trace_id,
           unrelated.get_span_context().trace_id}
    assert len(ids) == 3
    assert all(s.parent is None for s in by_name(spans)["a2a SendMessage argocd"])


def test_without_configuration_spans_are_no_ops() -> None:
    shutdown_tracing()
    with get_tracer().start_as_current_span("nothing") as span:
        assert not span.get_span_context().is_valid


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Collector.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Keep the test output clean."""


@pytest.fixture
def collector() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Collector.received.clear()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_otlp_endpoint_receives_spans_over_http(collector: str) -> None:
    setup = configure_tracing("pilothouse-otlp", collector, install_global=False)
    try:
        with get_tracer().start_as_current_span("exported"):
            pass
        assert setup.flush()
    finally:
        shutdown_tracing()

    (path, body), *_ = _Collector.received
    assert path == "/v1/traces"
    request = ExportTraceServiceRequest.FromString(body)
    (resource_spans,) = request.resource_spans
    service = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
    assert service["service.name"] == "pilothouse-otlp"
    assert [s.name for scope in resource_spans.scope_spans for s in scope.spans] == ["exported"]


def test_unknown_otlp_protocol_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="OTEL_EXPORTER_OTLP_PROTOCOL='udp'"):
        configure_tracing("pilothouse", "http://127.0.0.1:4318", protocol="udp",
                          install_global=False)
