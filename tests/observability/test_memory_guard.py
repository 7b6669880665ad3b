"""The memory guard: budgets against the real RSS, the monitor, and refusal inside a real agent."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from obs_support import TOOLS, RunAgent

from pilothouse.config import Settings
from pilothouse.errors import ResourceExhaustedError
from pilothouse.models.registry import ModelSetup
from pilothouse.observability import metrics
from pilothouse.observability.limits import resident_bytes
from pilothouse.observability.memory import (
    MemoryBudget,
    MemoryGuardMiddleware,
    MemoryMonitor,
    MemorySample,
)
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.sizes import GIB, MIB
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call


def budget_below_rss() -> MemoryBudget:
    """A budget this process is over, by half: the garbage collector can hand back a few MiB
    before the guard reads the RSS (a budget 1 MiB below let a turn through in a loaded CI
    run, 2026-11-28)."""
    return MemoryBudget(resident_bytes() // 2)


def refusals() -> float:
    return metrics.REGISTRY.get_sample_value("pilothouse_memory_refusals_total") or 0.0


def readings(*values: int) -> Callable[[], int]:
    """An RSS reader that returns `values` in turn, then repeats the last."""
    it: Iterator[int] = iter(values)
    last = values[-1]

    def read() -> int:
        nonlocal last
        last = next(it, last)
        return last

    return read


def test_a_budget_below_current_rss_refuses_with_a_clear_retryable_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = refusals()
    with caplog.at_level(logging.WARNING, "pilothouse.memory"), \
            pytest.raises(ResourceExhaustedError) as caught:
        budget_below_rss().check()
    error = caught.value
    assert error.retryable
    assert error.message.startswith("Pilothouse is near its memory budget")
    assert "refused above 85%" in error.message
    assert error.hint is not None and error.hint.startswith("Retry shortly")
    assert "PILOTHOUSE_MEMORY_LIMIT" in error.hint and "from configured" in error.hint
    assert refusals() == before + 1
    assert [r.getMessage() for r in caplog.records] == ["memory guard refused new work"]


def test_budget_well_above_current_rss_lets_work_proceed() -> None:
    budget = MemoryBudget(resident_bytes() * 4)
    assert 0 < budget.check() < budget.threshold


def test_high_water_mark_sits_between_fine_and_refused() -> None:
    budget = MemoryBudget(1000 * MIB, high_water=0.85, read_rss=readings(850 * MIB))
    assert budget.check() == 850 * MIB
    budget.read_rss = readings(851 * MIB)
    with pytest.raises(ResourceExhaustedError, match="85% of 1000 MiB"):
        budget.check()


def test_garbage_is_collected_before_refusing() -> None:
    # Over on the first reading, under after gc.collect(): the request goes through.
    budget = MemoryBudget(GIB, read_rss=readings(GIB, 100 * MIB))
    assert budget.check() == 100 * MIB


def test_detect_prefers_the_configured_override() -> None:
    assert MemoryBudget.detect(4 * GIB).source == "PILOTHOUSE_MEMORY_LIMIT"
    detected = MemoryBudget.detect()
    assert detected.limit_bytes > 64 * MIB and detected.source != "PILOTHOUSE_MEMORY_LIMIT"
    with pytest.raises(ValueError):
        MemoryBudget(GIB, high_water=1.5)


def test_monitor_exports_samples_and_logs_crossings_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    budget = MemoryBudget(GIB, read_rss=readings(
        100 * MIB, 900 * MIB, 950 * MIB, 200 * MIB, 300 * MIB))
    monitor = MemoryMonitor(budget)
    with caplog.at_level(logging.INFO, "pilothouse.memory"):
        samples = [monitor.sample() for _ in range(5)]
    assert [s.rss for s in samples] == [m * MIB for m in (100, 900, 950, 200, 300)]
    assert [r.getMessage() for r in caplog.records] == [
        "memory above the high-water mark", "memory back below the high-water mark"]
    assert metrics.REGISTRY.get_sample_value("pilothouse_memory_budget_bytes") == GIB


async def test_monitor_task_samples_repeatedly_until_stopped() -> None:
    seen: asyncio.Queue[MemorySample] = asyncio.Queue()
    monitor = MemoryMonitor(MemoryBudget(8 * GIB), interval=0.01, on_sample=seen.put_nowait)
    async with monitor:
        first = await asyncio.wait_for(seen.get(), 5)
        second = await asyncio.wait_for(seen.get(), 5)
        assert monitor.start() is monitor.start(), "one task, however often started"
    assert first.rss > 0 and second.peak >= second.rss and second.limit == 8 * GIB
    count = seen.qsize()
    await asyncio.sleep(0.05)
    assert seen.qsize() == count, "no samples after stop()"


async def test_guard_in_a_real_agent_refuses_before_the_model_is_called(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> None:
    setup = scripted_setup(["hello"])
    graph = build_agent(make_settings(), setup, tools=TOOLS,
                        extra_middleware=[MemoryGuardMiddleware(budget_below_rss())],
                        checkpointer=InMemorySaver())
    events = [e async for e in Conversation(graph, "guarded").ask("list production apps")]

    (error,) = [e for e in events if isinstance(e, TurnFailed)]
    assert error.message.startswith("Pilothouse is near its memory budget")
    assert error.payload["kind"] == "ResourceExhaustedError"
    assert "PILOTHOUSE_MEMORY_LIMIT" in error.suggestion
    assert isinstance(setup.chat_model, ScriptedChatModel)
    assert setup.chat_model.requests == [], "refused work never reaches the model"


async def test_guard_with_room_lets_the_agent_answer(run_agent: RunAgent) -> None:
    guard = MemoryGuardMiddleware(MemoryBudget(resident_bytes() * 4))
    result = await run_agent([tool_call("get_application", name="web"), "web is Healthy."],
                             [guard])
    # The model's lead, then the tool's result as the tool gave it (runtime.answer_views).
    assert str(result["messages"][-1].content).startswith("web is Healthy.\n\n")


async def test_memory_rising_mid_run_stops_further_model_calls_but_keeps_tool_results(
    run_agent: RunAgent,
) -> None:
    # before_agent, first before_model: fine; the tool runs; the second before_model: over.
    budget = MemoryBudget(GIB, read_rss=readings(100 * MIB, 100 * MIB, 1000 * MIB))
    saver = InMemorySaver()
    with pytest.raises(ResourceExhaustedError):
        await run_agent([tool_call("get_application", name="web"), "never said"],
                        [MemoryGuardMiddleware(budget)], checkpointer=saver, thread="rising")
    stored = saver.get_tuple({"configurable": {"thread_id": "rising"}})
    assert stored is not None
    messages = stored.checkpoint["channel_values"]["messages"]
    assert isinstance(messages[-1], ToolMessage) and "Healthy" in str(messages[-1].content)
