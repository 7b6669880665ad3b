"""Benchmark the context layers: pre-flight overhead per model call, and tokens sent per turn.

Run: .venv/bin/python bench/context_layers.py
Prints two tables and writes bench/results/context_layers.json.

1. Pre-flight overhead: the time the budget check adds to one model call (history count, tool
   schema count, request guard) at 10, 100 and 500 messages, with a warm cache (steady state:
   the history was counted on the previous call) and cold (first call after a restart).
2. Tokens sent per turn over the 60-turn session of tests/context/test_long_session.py (tool
   outputs of 50-200 KB, an 8K-window model), with the layers on and off.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "context"))

from conftest import provider_count  # noqa: E402
from test_long_session import WINDOW, agent_step, list_applications, run_session  # noqa: E402

from pilothouse.config import Settings  # noqa: E402
from pilothouse.context.compression import Compressor  # noqa: E402
from pilothouse.context.preflight import Budget, PreflightBudgetMiddleware  # noqa: E402
from pilothouse.models.registry import setup_model  # noqa: E402
from pilothouse.models.tokens import TokenCounter, tiktoken_counter  # noqa: E402
from pilothouse.runtime.events import TurnFailed  # noqa: E402
from pilothouse.testing.scripted_model import ScriptedChatModel  # noqa: E402


def history(size: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    while len(messages) < size:
        i = len(messages)
        messages.append(HumanMessage(content=f"Which apps in project p{i} are degraded?",
                                     id=f"h{i}"))
        messages.append(AIMessage(content="", id=f"a{i}", tool_calls=[{
            "name": "search_argocd_resources", "args": {"query": f"p{i}"}, "id": f"c{i}",
            "type": "tool_call"}]))
        messages.append(ToolMessage(content=json.dumps({"items": [
            {"name": f"app-{i}-{j}", "health": "Degraded"} for j in range(20)]}),
            tool_call_id=f"c{i}", id=f"t{i}"))
        messages.append(AIMessage(content=f"Project p{i} has 20 degraded apps.", id=f"r{i}"))
    return messages[:size]


def time_preflight(size: int, repeats: int = 200) -> dict[str, float]:
    count = tiktoken_counter()
    assert count is not None
    messages = history(size)
    tools = [list_applications]
    budget = Budget(window=10_000_000, reserved_output=1024)  # never compress: time the check
    cold: list[float] = []
    warm: list[float] = []
    counter = TokenCounter(count, source="tiktoken")
    for attempt in range(repeats):
        if attempt % 20 == 0:  # a fresh counter: the cold case, as after a restart
            counter = TokenCounter(count, source="tiktoken")
        layer = PreflightBudgetMiddleware(budget, counter, Compressor(counter, None), 0)
        request = ModelRequest(model=None, messages=messages,  # type: ignore[arg-type]
                               system_message=SystemMessage(content="You are Pilothouse."),
                               tools=tools)
        start = time.perf_counter()
        layer._needs_compression(messages, 0)
        layer.fit_request(request)
        elapsed = (time.perf_counter() - start) * 1000
        (cold if attempt % 20 == 0 else warm).append(elapsed)
    return {"messages": size, "cold_ms": statistics.median(cold),
            "warm_ms_median": statistics.median(warm),
            "warm_ms_p95": sorted(warm)[int(len(warm) * 0.95) - 1]}


async def session_tokens(layers_on: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as home:
        env = {"PILOTHOUSE_HOME": home, "PILOTHOUSE_MODEL": "openai:gpt-4",
               "MAX_CONTEXT_TOKENS": str(WINDOW)}
        if not layers_on:
            env["PILOTHOUSE_DISABLE_LAYERS"] = "preflight,tool_output_guard,overflow_recovery"
        settings = Settings.from_env(env)
        count = tiktoken_counter()
        assert count is not None
        # Without the layers the "provider" accepts anything, so we can see what would be sent.
        model = ScriptedChatModel.from_steps(
            [], default=agent_step, window_tokens=None if not layers_on else WINDOW,
            count_tokens=provider_count(TokenCounter(count, source="tiktoken")))
        setup = setup_model(settings, chat_model=model)
        turns = 60 if layers_on else 12
        transcript = await run_session(setup, settings, turns=turns)
        per_call = [r.tokens for r in model.requests]
        errors = sum(1 for turn in transcript for e in turn if isinstance(e, TurnFailed))
        return {"layers": "on" if layers_on else "off", "turns": turns, "calls": len(per_call),
                "mean_tokens_per_call": int(statistics.mean(per_call)),
                "max_tokens_per_call": max(per_call),
                "last_turn_tokens": per_call[-1], "over_window_calls": sum(
                    1 for t in per_call if t > WINDOW), "errors": errors}


def main() -> None:
    console = Console()
    overhead = [time_preflight(n) for n in (10, 100, 500)]
    table = Table(title="Pre-flight overhead per model call (ms)")
    for column in ("messages", "cold (first count)", "warm median", "warm p95"):
        table.add_column(column, justify="right")
    for row in overhead:
        table.add_row(str(row["messages"]), f"{row['cold_ms']:.2f}",
                      f"{row['warm_ms_median']:.3f}", f"{row['warm_ms_p95']:.3f}")
    console.print(table)

    sessions = [asyncio.run(session_tokens(True)), asyncio.run(session_tokens(False))]
    table = Table(title=f"Tokens sent per model call, 60-turn session, {WINDOW}-token window")
    for column in ("layers", "turns", "calls", "mean", "max", "last", "calls over window"):
        table.add_column(column, justify="right")
    for row in sessions:
        table.add_row(row["layers"], str(row["turns"]), str(row["calls"]),
                      f"{row['mean_tokens_per_call']:,}", f"{row['max_tokens_per_call']:,}",
                      f"{row['last_turn_tokens']:,}", str(row["over_window_calls"]))
    console.print(table)
    out = ROOT / "bench" / "results" / "context_layers.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"preflight_overhead": overhead, "sessions": sessions}, indent=2))
    console.print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
