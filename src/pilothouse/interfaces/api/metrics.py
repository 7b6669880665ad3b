"""Prometheus metrics of the API: requests, streams, streamed events and context actions.

Each app owns its registry (tests create many apps in one process, and a global registry would
refuse the second). The process registry of `pilothouse.observability.metrics` (model and tool
calls, context actions, memory) is exposed beside ours.
"""

from __future__ import annotations

import importlib
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def shared_registry() -> CollectorRegistry | None:
    """The observability package's registry, when that package provides one."""
    try:
        module = importlib.import_module("pilothouse.observability.metrics")
    except ImportError:
        return None
    for name in ("REGISTRY", "registry"):
        candidate = getattr(module, name, None)
        if isinstance(candidate, CollectorRegistry):
            return candidate
    return None


class ApiMetrics:
    """The API's counters; also a `StreamObserver` for event streams."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.shared = shared_registry()
        self.requests = Counter("pilothouse_api_requests", "HTTP requests, by route and status.",
                                ["method", "route", "status"], registry=self.registry)
        self.latency = Histogram("pilothouse_api_request_seconds",
                                 "Time to the end of each response (streams included).",
                                 ["method", "route"], registry=self.registry)
        self.active_streams = Gauge("pilothouse_api_active_streams",
                                    "Event streams now open.", registry=self.registry)
        self.events = Counter("pilothouse_api_stream_events", "Events streamed, by kind.",
                              ["kind"], registry=self.registry)
        self.cancelled = Counter("pilothouse_api_streams_cancelled",
                                 "Runs cancelled because the client disconnected.",
                                 registry=self.registry)

    def stream_started(self) -> None:
        self.active_streams.inc()

    def stream_event(self, kind: str) -> None:
        self.events.labels(kind).inc()

    def stream_ended(self, *, cancelled: bool) -> None:
        self.active_streams.dec()
        if cancelled:
            self.cancelled.inc()

    def exposition(self) -> bytes:
        """The Prometheus text format of every registry we expose."""
        text = generate_latest(self.registry)
        return text + generate_latest(self.shared) if self.shared is not None else text


class RequestMetricsMiddleware:
    """Counts each request under its route template (not its raw path, which has ids)."""

    def __init__(self, app: ASGIApp, metrics: ApiMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(scope["method"], template, str(status)).inc()
            self.metrics.latency.labels(scope["method"], template).observe(
                time.perf_counter() - started)
