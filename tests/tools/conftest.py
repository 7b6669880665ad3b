"""Fixtures the tool-server suites share: the sandboxes and one loaded embedding model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pilothouse.sandbox.argocd import RunningSandbox, running_sandbox
from pilothouse.sandbox.github import RunningGitHubSandbox, running_github_sandbox
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=30) as running:
        yield running


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as running:
        yield running


@pytest.fixture(scope="session")
def embeddings() -> MiniLMEmbeddings:
    """The real offline model (loading it once saves ~0.3 s per test)."""
    return MiniLMEmbeddings()
