"""Fixtures: an agent over a scripted model with real tools and SQLite, and the API app."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from interfaces_support import (
    APPROVALS,
    RESTARTED,
    OpenAgent,
    list_applications,
    restart_application,
)
from langchain_core.tools import BaseTool

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.interfaces.api import create_api_app
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.checkpoint import open_checkpointer
from pilothouse.runtime.handle import AgentHandle
from pilothouse.testing.scripted_model import Step


@pytest.fixture
def make_open_agent(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup]
) -> Callable[..., OpenAgent]:
    """`make(steps)`: an `open_agent` factory over a scripted model, real tools, real SQLite."""

    def make(steps: Sequence[Step], *, default: Step | None = None,
             tools: Sequence[BaseTool] = (list_applications, restart_application),
             planning: bool = False) -> OpenAgent:
        settings = make_settings()
        setup = scripted_setup(steps, default=default)

        @asynccontextmanager
        async def open_agent() -> AsyncIterator[AgentHandle]:
            async with open_checkpointer(settings) as checkpointer:
                toolkit = Toolkit(name="platform", prompt="You help platform engineers.",
                                  tools=list(tools), approvals=APPROVALS, planning=planning)
                yield AgentFactory(settings, setup, checkpointer).build(toolkit)

        return open_agent

    RESTARTED.clear()
    return make


@pytest.fixture
def make_app(tmp_path: Path) -> Callable[..., FastAPI]:
    def make(open_agent: OpenAgent, **options: Any) -> FastAPI:
        options.setdefault("api_keys", [])
        options.setdefault("bind_host", "127.0.0.1")
        return create_api_app(open_agent, registry_path=tmp_path / "conversations.sqlite",
                              **options)

    return make


