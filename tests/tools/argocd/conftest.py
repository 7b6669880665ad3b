"""Fixtures for the Argo CD tool tests: the scenario sandbox and MCP sessions to the server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from argocd_harness import SCENARIOS, Connect, Tools
from mcp import Client

from pilothouse.config import Settings
from pilothouse.sandbox.argocd import RunningSandbox, running_sandbox
from pilothouse.tools.argocd.server import build_argocd_server


@pytest.fixture(scope="session")
def fleet() -> Iterator[RunningSandbox]:
    with running_sandbox(SCENARIOS, operation_seconds=1.0) as running:
        yield running


@pytest.fixture
def settings(fleet: RunningSandbox, tmp_path: Path) -> Settings:
    return Settings(argocd_url=fleet.url, argocd_token=fleet.token, home=tmp_path)


@pytest.fixture
def connect(settings: Settings) -> Connect:
    """Open an MCP session (JSON-RPC over in-memory streams) to a server built from settings.

    Tests enter it themselves: an MCP session holds a task group, which must be entered and
    left in the same task (an async fixture would tear it down in another one).
    """

    @asynccontextmanager
    async def open_(custom: Settings | None = None) -> AsyncIterator[Tools]:
        server = build_argocd_server(custom or settings)
        async with Client(server, mode="legacy") as client:
            yield Tools(client)

    return open_


@pytest.fixture
def writable(settings: Settings) -> Settings:
    return replace(settings, argocd_read_only=False)
