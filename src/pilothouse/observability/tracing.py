"""OpenTelemetry tracing: the process's tracer provider, turn spans and spans for A2A hops.

An A2A hop is traced on both ends (`a2a_span`): the supervisor's `RemoteSubAgent` sends the W3C
trace context in the request's headers, and the agent's executor continues it, so one trace
spans the supervisor and every agent it asked.

Spans go to an OTLP collector when an endpoint is configured, to stderr only when asked for
(a console exporter on by default would bury the CLI's output), and to memory for tests. Without
`configure_tracing` every span is a no-op, so instrumented code costs nothing when tracing is off.
Every exporter sees spans through `RedactingSpanExporter`: a span may leave the machine, a secret
may not, so attributes, event attributes and status descriptions pass pilothouse.redaction.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from opentelemetry import propagate, trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, Status, StatusCode
from opentelemetry.util.types import Attributes

from pilothouse.errors import ConfigurationError
from pilothouse.redaction import Redactor, redact

TRACER_NAME = "pilothouse"
OTLP_PROTOCOLS = ("http/protobuf", "grpc")


@dataclass
class TracingSetup:
    """The configured provider, and the in-memory exporter when one was asked for."""

    provider: TracerProvider
    memory: InMemorySpanExporter | None = None

    def tracer(self) -> trace.Tracer:
        return self.provider.get_tracer(TRACER_NAME)

    def flush(self) -> bool:
        """Export every finished span now (before exit, or before a test looks)."""
        return self.provider.force_flush()

    def shutdown(self) -> None:
        self.provider.shutdown()


_active: TracingSetup | None = None


class RedactingSpanExporter(SpanExporter):
    """Hands `inner` copies of the spans with every secret masked.

    At export, not when an attribute is set: whoever sets one (our middleware, the a2a-sdk,
    an instrumented library) cannot forget, and spans are copied off the request path when
    the exporter is batched.
    """

    def __init__(self, inner: SpanExporter, redactor: Redactor) -> None:
        self.inner = inner
        self.redactor = redactor

    def _attributes(self, attributes: Attributes) -> Attributes:
        if not attributes:
            return attributes
        shown = {}
        for key, value in attributes.items():
            if isinstance(value, tuple | list):
                value = tuple(self.redactor(v) if isinstance(v, str) else v for v in value)
            shown[key] = self.redactor.field(key, value)
        return shown

    def _copy(self, span: ReadableSpan) -> ReadableSpan:
        status = span.status
        if status.description:
            status = Status(status.status_code, self.redactor(status.description))
        events = [Event(e.name, self._attributes(e.attributes), e.timestamp) for e in span.events]
        return ReadableSpan(
            name=span.name, context=span.context, parent=span.parent, resource=span.resource,
            attributes=self._attributes(span.attributes), events=events, links=span.links,
            kind=span.kind, status=status, start_time=span.start_time, end_time=span.end_time,
            instrumentation_scope=span.instrumentation_scope,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return self.inner.export([self._copy(span) for span in spans])

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def otlp_exporter(endpoint: str, protocol: str = "http/protobuf") -> SpanExporter:
    """An OTLP span exporter for `endpoint`, the value of OTEL_EXPORTER_OTLP_ENDPOINT.

    Like the SDK does for that variable, the HTTP exporter gets `/v1/traces` appended (unless the
    URL already names it). Headers, certificates and timeouts still come from the standard
    OTEL_EXPORTER_OTLP_* variables, which the exporter reads itself.
    """
    if protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError:
            raise ConfigurationError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs opentelemetry-exporter-otlp-proto-grpc.",
                hint="Install it, or use http/protobuf (the collector's port 4318).",
            ) from None
        return GrpcExporter(endpoint=endpoint)
    if protocol != "http/protobuf":
        raise ConfigurationError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported.",
            hint="Use http/protobuf (port 4318) or grpc (port 4317).",
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    url = endpoint.rstrip("/")
    if not url.endswith("/v1/traces"):
        url += "/v1/traces"
    return OTLPSpanExporter(endpoint=url)


def configure_tracing(
    service_name: str,
    endpoint: str | None = None,
    *,
    protocol: str = "http/protobuf",
    console: bool = False,
    in_memory: bool = False,
    resource_attributes: Mapping[str, str] | None = None,
    install_global: bool = True,
    redactor: Redactor | None = None,
) -> TracingSetup:
    """Build the tracer provider Pilothouse's spans go to, replacing an earlier one.

    `endpoint` sends spans over OTLP (batched, off the request path); `console` prints them to
    stderr; `in_memory` keeps them for tests (`setup.memory.get_finished_spans()`).
    `install_global` also makes it OpenTelemetry's global provider, so libraries that trace with
    the API (the a2a-sdk does) join the same traces; OpenTelemetry allows that once per process.
    Every exporter gets the spans redacted; `redactor` adds the configured secret values
    (`Redactor(settings.secret_values())`) to the shapes masked anyway.
    """
    global _active
    resource = Resource.create({"service.name": service_name, **(resource_attributes or {})})
    provider = TracerProvider(resource=resource)
    redactor = redactor or Redactor()
    processors: list[SpanProcessor] = []
    if endpoint:
        exporter = RedactingSpanExporter(otlp_exporter(endpoint, protocol), redactor)
        processors.append(BatchSpanProcessor(exporter))
    if console:
        console_exporter = ConsoleSpanExporter(out=sys.stderr)
        processors.append(SimpleSpanProcessor(RedactingSpanExporter(console_exporter, redactor)))
    memory = InMemorySpanExporter() if in_memory else None
    if memory is not None:
        processors.append(SimpleSpanProcessor(RedactingSpanExporter(memory, redactor)))
    for processor in processors:
        provider.add_span_processor(processor)
    previous, _active = _active, TracingSetup(provider, memory)
    if previous is not None:
        previous.shutdown()
    if install_global and not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(provider)
    return _active


def shutdown_tracing() -> None:
    """Flush and stop the configured provider; spans become no-ops again."""
    global _active
    previous, _active = _active, None
    if previous is not None:
        previous.shutdown()


def get_tracer() -> trace.Tracer:
    """The tracer for Pilothouse spans: the configured provider's, else the global one."""
    if _active is not None:
        return _active.tracer()
    return trace.get_tracer(TRACER_NAME)


def mark_failed(span: Span, error: BaseException) -> None:
    """Set `span`'s status to error with a redacted, bounded description of `error`."""
    detail = redact(f"{type(error).__name__}: {error}")[:300]
    span.set_status(Status(StatusCode.ERROR, detail))
    span.add_event("exception", {"exception.type": type(error).__name__,
                                 "exception.message": detail})


@contextmanager
def turn_span(
    agent: str, *, conversation_id: str | None = None, request_id: str | None = None
) -> Iterator[Span]:
    """The parent span of one conversation turn: its model and tool calls share its trace."""
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
    if conversation_id:
        attributes["gen_ai.conversation.id"] = conversation_id
    if request_id:
        attributes["pilothouse.request_id"] = request_id
    with get_tracer().start_as_current_span(
        f"invoke_agent {agent}", kind=SpanKind.INTERNAL, attributes=attributes,
        record_exception=False, set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except BaseException as error:
            mark_failed(span, error)
            raise


@contextmanager
def a2a_span(
    agent: str,
    *,
    role: Literal["client", "server"],
    carrier: MutableMapping[str, str] | Mapping[str, str] | None = None,
    method: str = "SendMessage",
    task_id: str | None = None,
    context_id: str | None = None,
    caller: str | None = None,
) -> Iterator[Span]:
    """The span of one A2A hop to `agent`, on either end, joining the two ends' traces.

    As the `client` (the supervisor's `RemoteSubAgent`) the span's trace context is injected
    into `carrier`, the request's headers (W3C `traceparent`); as the `server` (the agent's
    executor) the parent is extracted from `carrier`, the incoming headers, so the agent's turn,
    model and tool spans appear under the supervisor's request in one trace.
    """
    parent = propagate.extract(carrier or {}) if role == "server" else None
    attributes: dict[str, str] = {"rpc.system": "a2a", "rpc.service": agent, "rpc.method": method,
                                  "gen_ai.agent.name": agent, "pilothouse.a2a.role": role}
    if task_id:
        attributes["pilothouse.a2a.task_id"] = task_id
    if context_id:
        attributes["pilothouse.a2a.context_id"] = context_id
    if caller:
        attributes["pilothouse.a2a.caller"] = caller
    kind = SpanKind.SERVER if role == "server" else SpanKind.CLIENT
    with get_tracer().start_as_current_span(
        f"a2a {method} {agent}", context=parent, kind=kind, attributes=attributes,
        record_exception=False, set_status_on_exception=False,
    ) as span:
        if role == "client" and isinstance(carrier, MutableMapping):
            propagate.inject(carrier)
        try:
            yield span
        except BaseException as error:
            mark_failed(span, error)
            raise
