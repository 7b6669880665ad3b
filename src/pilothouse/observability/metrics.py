"""Prometheus metrics for Pilothouse, in a registry of their own.

A dedicated registry (not prometheus_client's global one) keeps `/metrics` to what we define and
lets an embedding application mount it beside its own. This module imports nothing above it:
the context layers call `record_context_action` when they report an action, and the process's
own figures (resident memory, CPU, open files) come from prometheus_client's `ProcessCollector`,
read at scrape time, under the same `pilothouse_` prefix.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

from pilothouse.observability.limits import peak_resident_bytes

#: The Content-Type header for `render_metrics()` output.
CONTENT_TYPE = CONTENT_TYPE_LATEST

REGISTRY = CollectorRegistry(auto_describe=True)

MODEL_CALLS = Counter(
    "pilothouse_model_calls", "Model calls by model and outcome (ok, error, interrupted).",
    ["model", "status"], registry=REGISTRY,
)
MODEL_TOKENS = Counter(
    "pilothouse_model_tokens", "Tokens the provider reported, by model and direction.",
    ["model", "direction"], registry=REGISTRY,
)
MODEL_LATENCY = Histogram(
    "pilothouse_model_call_duration_seconds", "Time for one model call, by model.",
    ["model"], registry=REGISTRY,
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160),
)
TOOL_LATENCY = Histogram(
    "pilothouse_tool_call_duration_seconds", "Time for one tool call, by tool.",
    ["tool"], registry=REGISTRY,
    buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
TOOL_ERRORS = Counter(
    "pilothouse_tool_errors", "Tool calls that raised or returned an error result, by tool.",
    ["tool"], registry=REGISTRY,
)
SEARCH_REJECTIONS = Counter(
    "pilothouse_search_rejections",
    "Searches refused for matching more than MAX_SEARCH_RESULTS resources, by tool.",
    ["tool"], registry=REGISTRY,
)
ACTIVE_CONVERSATIONS = Gauge(
    "pilothouse_active_conversations", "Conversation turns being answered right now.",
    registry=REGISTRY,
)
CONTEXT_ACTIONS = Counter(
    "pilothouse_context_actions",
    "Context-safety actions (summarized, truncated, repaired, overflow_recovered, ...).",
    ["action"], registry=REGISTRY,
)
#: pilothouse_process_resident_memory_bytes, _virtual_memory_bytes, _cpu_seconds_total,
#: _open_fds, _max_fds, _start_time_seconds: read from /proc at each scrape (Linux).
PROCESS = ProcessCollector(namespace="pilothouse", registry=REGISTRY)
# The memory guard's figures beside it: the peak the process reached (VmHWM, which the
# process collector lacks), the budget the guard enforces and the requests it refused.
MEMORY_PEAK = Gauge(
    "pilothouse_process_peak_resident_memory_bytes", "Highest resident memory since start.",
    registry=REGISTRY,
)
MEMORY_PEAK.set_function(peak_resident_bytes)
MEMORY_LIMIT = Gauge(
    "pilothouse_memory_budget_bytes", "The memory budget the guard enforces.",
    registry=REGISTRY,
)
MEMORY_REFUSALS = Counter(
    "pilothouse_memory_refusals", "Requests refused because memory was above the high-water mark.",
    registry=REGISTRY,
)


def record_model_call(
    model: str, status: str, seconds: float, input_tokens: int = 0, output_tokens: int = 0
) -> None:
    """Count one model call, its latency and the tokens the provider reported."""
    MODEL_CALLS.labels(model=model, status=status).inc()
    MODEL_LATENCY.labels(model=model).observe(seconds)
    if input_tokens:
        MODEL_TOKENS.labels(model=model, direction="input").inc(input_tokens)
    if output_tokens:
        MODEL_TOKENS.labels(model=model, direction="output").inc(output_tokens)


def record_tool_call(tool: str, seconds: float, *, error: bool) -> None:
    """Observe one tool call's latency, and count it when it failed."""
    TOOL_LATENCY.labels(tool=tool).observe(seconds)
    if error:
        TOOL_ERRORS.labels(tool=tool).inc()


def record_search_rejection(tool: str) -> None:
    """Count a search refused by the result cap."""
    SEARCH_REJECTIONS.labels(tool=tool).inc()


def record_context_action(action: str) -> None:
    """Count one action a context-safety layer took."""
    CONTEXT_ACTIONS.labels(action=action).inc()


def record_memory_budget(limit: int) -> None:
    """Export the memory budget the guard enforces."""
    MEMORY_LIMIT.set(limit)


def record_memory_refusal() -> None:
    """Count a request refused by the memory guard."""
    MEMORY_REFUSALS.inc()


@contextmanager
def track_conversation() -> Iterator[None]:
    """Count the enclosed block as one active conversation turn (also when it fails)."""
    ACTIVE_CONVERSATIONS.inc()
    try:
        yield
    finally:
        ACTIVE_CONVERSATIONS.dec()


def render_metrics() -> bytes:
    """Every Pilothouse metric in the Prometheus text format (serve with `CONTENT_TYPE`)."""
    return generate_latest(REGISTRY)
