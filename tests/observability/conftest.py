"""Fixtures for observability: captured JSON logs, in-memory spans, and a real agent run."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import structlog
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from obs_support import TOOLS, JsonLogs, RunAgent

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.observability.logging import configure_logging, remove_logging
from pilothouse.runtime.builder import build_agent
from pilothouse.testing.scripted_model import Step


@pytest.fixture
def json_logs() -> Iterator[JsonLogs]:
    root = logging.getLogger()
    level = root.level
    logs = JsonLogs()
    handler = configure_logging("INFO", json=True, stream=logs.buffer)
    try:
        yield logs
    finally:
        remove_logging(handler)
        root.setLevel(level)
        structlog.contextvars.clear_contextvars()


@pytest.fixture
def run_agent(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings]
) -> RunAgent:
    """Run one turn of a real agent (context layers included) over a scripted model."""

    async def run(
        steps: Sequence[Step],
        middleware: Sequence[AgentMiddleware[Any, Any, Any]],
        *,
        question: str = "how is payments-api?",
        thread: str = "t1",
        checkpointer: InMemorySaver | None = None,
    ) -> dict[str, Any]:
        setup = scripted_setup(steps)
        graph = build_agent(make_settings(), setup, tools=TOOLS, extra_middleware=middleware,
                            checkpointer=checkpointer)
        config: RunnableConfig = {"configurable": {"thread_id": thread}}
        result: dict[str, Any] = await graph.ainvoke(
            {"messages": [HumanMessage(content=question)]}, config
        )
        return result

    return run
