"""A GitHub sandbox on 127.0.0.1 for the HTTP tests, and httpx clients with and without its token.

Fixture names say "github" so they never shadow the Argo CD sandbox fixtures one level up.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pilothouse.sandbox.github import RunningGitHubSandbox, World, running_github_sandbox


@pytest.fixture(scope="module")
def github_sandbox() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh_quotas(github_sandbox: RunningGitHubSandbox) -> Iterator[None]:
    """Each test starts with full quotas and no planned outage, whatever the last one did."""
    github_sandbox.limits.restore()
    github_sandbox.state.outages.clear()
    yield
    github_sandbox.limits.restore()


@pytest.fixture
def gh(github_sandbox: RunningGitHubSandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {github_sandbox.token}"}
    with httpx.Client(base_url=github_sandbox.url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def gh_anonymous(github_sandbox: RunningGitHubSandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=github_sandbox.url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def world(github_sandbox: RunningGitHubSandbox) -> World:
    return github_sandbox.world
