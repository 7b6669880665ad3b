"""Agents served over real A2A HTTP on 127.0.0.1, in the test's event loop, over scripted models."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest
from a2a_harness import ServeAgents, serving

from pilothouse.a2a.server import AgentEndpoint, a2a_app, agent_endpoint
from pilothouse.a2a.store import open_task_engine
from pilothouse.config import Settings
from pilothouse.runtime.handle import AgentHandle


@pytest.fixture
def serve_agents(make_settings: Callable[..., Settings]) -> ServeAgents:
    """Serve agents as `pilothouse serve` does; yields (base URL, endpoints)."""

    @asynccontextmanager
    async def serve(*agents: AgentHandle, settings: Settings | None = None,
                    port: int = 0) -> AsyncIterator[tuple[str, list[AgentEndpoint]]]:
        async with open_task_engine(settings or make_settings()) as engine:
            endpoints: list[AgentEndpoint] = []

            async def build(url: str) -> object:
                endpoints.extend([await agent_endpoint(a, engine, url) for a in agents])
                return a2a_app(endpoints, entry=agents[0].name)

            async with serving(build, port) as url:
                yield url, endpoints

    return serve
