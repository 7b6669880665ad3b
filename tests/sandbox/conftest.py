"""A sandbox on 127.0.0.1 for the HTTP tests, and an httpx client authenticated against it."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from pilothouse.sandbox.argocd import RunningSandbox, running_sandbox


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    # A short operation time keeps the "sync in progress" tests quick but observable.
    with running_sandbox(operation_seconds=0.5) as running:
        yield running


@pytest.fixture
def api(sandbox: RunningSandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    with httpx.Client(base_url=sandbox.url, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def anonymous(sandbox: RunningSandbox) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox.url, timeout=30) as client:
        yield client
