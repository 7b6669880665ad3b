"""A GitHub sandbox, and MCP client sessions to the GitHub server: over stdio to a real
subprocess (how agents run it), or in process for the finer-grained cases.

Both go through the real MCP client and real HTTP to 127.0.0.1; only the transport between
client and server differs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from github_harness import OpenTools, Tools
from mcp import Client

from pilothouse.sandbox.github import RunningGitHubSandbox, running_github_sandbox
from pilothouse.tools.github import GitHubConnection, build_github_server, stdio_parameters


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    # A generous search quota: many tests search; the quota tests exhaust it on purpose.
    with running_github_sandbox(search_limit=10_000) as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh_quotas(github: RunningGitHubSandbox) -> Iterator[None]:
    github.limits.restore()
    github.state.outages.clear()
    yield
    github.limits.restore()
    github.state.outages.clear()


@pytest.fixture
def open_stdio(github: RunningGitHubSandbox, tmp_path: Path) -> OpenTools:
    """Start `python -m pilothouse.tools.github` and open an MCP session to it."""

    @asynccontextmanager
    async def open_(*, token: str | None = github.token, api_url: str | None = None,
                    max_wait: float = 10.0, max_output: int = 10_000) -> AsyncIterator[Tools]:
        connection = GitHubConnection(api_url or github.url, token, timeout_seconds=10,
                                      rate_limit_max_wait_seconds=max_wait)
        extra = {"MAX_TOOL_OUTPUT_SIZE": str(max_output), "PILOTHOUSE_HOME": str(tmp_path)}
        async with Client(stdio_parameters(connection, extra_env=extra)) as client:
            yield Tools(client)

    return open_


@pytest.fixture
def open_inproc(github: RunningGitHubSandbox) -> OpenTools:
    """An MCP session (JSON-RPC over in-memory streams) to a server built in this process."""

    @asynccontextmanager
    async def open_(*, token: str | None = github.token, api_url: str | None = None,
                    max_wait: float = 10.0, max_output: int = 10_000) -> AsyncIterator[Tools]:
        server = build_github_server(api_url or github.url, token, timeout=10,
                                     max_rate_limit_wait=max_wait, max_output_chars=max_output)
        async with Client(server, mode="legacy") as client:
            yield Tools(client)

    return open_
