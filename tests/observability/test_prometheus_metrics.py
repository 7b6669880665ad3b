"""Metrics: counts move after a real agent run, and /metrics parses as Prometheus text."""

from __future__ import annotations

import uuid

import pytest
from obs_support import RunAgent
from prometheus_client.parser import text_string_to_metric_families

from pilothouse.context.events import ContextAction, report
from pilothouse.observability import metrics
from pilothouse.observability.limits import resident_bytes
from pilothouse.observability.memory import MemoryBudget, MemoryGuardMiddleware, MemoryMonitor
from pilothouse.observability.middleware import ObservabilityMiddleware
from pilothouse.observability.tracing import TracingSetup
from pilothouse.testing.scripted_model import tool_call


def scraped() -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of `render_metrics()`, parsed by prometheus_client's own parser."""
    text = metrics.render_metrics().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(name: str, **labels: str) -> float:
    return scraped().get((name, tuple(sorted(labels.items()))), 0.0)


async def test_a_run_moves_model_tool_search_and_context_counts(
    run_agent: RunAgent, spans: TracingSetup
) -> None:
    model = f"test:{uuid.uuid4().hex[:8]}"  # a label no other test touches
    truncated_before = value("pilothouse_context_actions_total", action="truncated")
    broken_before = value("pilothouse_tool_errors_total", tool="broken_tool")
    rejected_before = value("pilothouse_search_rejections_total", tool="search_resources")
    steps = [
        tool_call("get_application", name="payments-api"),
        tool_call("broken_tool", reason="maintenance"),
        tool_call("search_resources", query="a"),
        tool_call("dump_inventory"),
        "Here is what I found.",
    ]
    await run_agent(steps, [ObservabilityMiddleware("argocd", model_name=model)])

    assert value("pilothouse_model_calls_total", model=model, status="ok") == 5
    assert value("pilothouse_model_call_duration_seconds_count", model=model) == 5
    assert value("pilothouse_model_tokens_total", model=model, direction="output") == 50
    assert value("pilothouse_model_tokens_total", model=model, direction="input") > 100
    assert value("pilothouse_tool_errors_total", tool="broken_tool") == broken_before + 1
    assert value("pilothouse_tool_call_duration_seconds_count", tool="get_application") >= 1
    assert value("pilothouse_search_rejections_total",
                 tool="search_resources") == rejected_before + 1
    # The output guard (a context layer) cut the inventory and its report counted it.
    assert value("pilothouse_context_actions_total", action="truncated") >= truncated_before + 1


def test_context_actions_reported_anywhere_are_exported() -> None:
    before = value("pilothouse_context_actions_total", action="overflow_recovered")
    report(ContextAction("overflow_recovered", "compressed and retried", layer="overflow"))
    report(ContextAction("overflow_recovered", "compressed and retried", layer="overflow"))
    assert value("pilothouse_context_actions_total", action="overflow_recovered") == before + 2


def test_active_conversations_gauge_counts_blocks_even_when_they_fail() -> None:
    start = value("pilothouse_active_conversations")
    with metrics.track_conversation(), metrics.track_conversation():
        assert value("pilothouse_active_conversations") == start + 2
    with pytest.raises(RuntimeError), metrics.track_conversation():
        raise RuntimeError("turn failed")
    assert value("pilothouse_active_conversations") == start


def test_process_figures_are_read_at_scrape_and_the_registry_holds_only_ours() -> None:
    # The process collector reads /proc when scraped: no sampler has to run first.
    before = resident_bytes()
    samples = scraped()
    after = resident_bytes()
    rss = samples[("pilothouse_process_resident_memory_bytes", ())]
    assert before - 8 * 2**20 <= rss <= after + 8 * 2**20
    assert samples[("pilothouse_process_peak_resident_memory_bytes", ())] >= rss
    assert samples[("pilothouse_process_cpu_seconds_total", ())] > 0
    assert samples[("pilothouse_process_open_fds", ())] >= 3
    names = {name for name, _ in samples}
    assert names and all(name.startswith("pilothouse_") for name in names)
    assert metrics.CONTENT_TYPE.startswith("text/plain")


def test_the_memory_guard_exports_the_budget_it_enforces() -> None:
    MemoryGuardMiddleware(MemoryBudget(3 * 2**30))
    assert value("pilothouse_memory_budget_bytes") == 3 * 2**30
    MemoryMonitor(MemoryBudget(5 * 2**30)).sample()
    assert value("pilothouse_memory_budget_bytes") == 5 * 2**30


def test_each_context_action_family_is_exposed_once() -> None:
    report(ContextAction("repaired", "one orphaned call answered", layer="orphans"))
    text = metrics.render_metrics().decode()
    assert text.count("# TYPE pilothouse_context_actions_total counter") == 1
