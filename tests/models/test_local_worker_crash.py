"""The model worker dies mid-answer (real signals, real model): the agent does not.

The turn ends with one clear error, the checkpointed thread (real SQLite) has no unanswered
tool call, and the next question in the same thread is answered by a fresh worker.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from pilothouse.config import Settings
from pilothouse.models.local_chat import ChatLocalLlama, build_local_chat_model
from pilothouse.models.local_weights import ensure_local_model
from pilothouse.models.local_worker import WorkerEngine, shared_engine
from pilothouse.models.registry import setup_model
from pilothouse.runtime.builder import build_agent
from pilothouse.runtime.events import Answer, Event, Token, ToolCalled, ToolResult, TurnFailed
from pilothouse.runtime.session import Conversation

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(600)]  # 1-3 min each

MODELS_DIR = Path(
    os.environ.get("PILOTHOUSE_TEST_MODELS_DIR", "~/.cache/pilothouse-test/models")
).expanduser()
SYSTEM = "You are Pilothouse, an assistant for platform engineers. Use the tools to look things up."


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> ChatLocalLlama:
    path = ensure_local_model(Settings(home=MODELS_DIR.parent))
    home = tmp_path_factory.mktemp("home")
    return build_local_chat_model(Settings(home=home, local_model_path=path))


@tool
def get_application_status(name: str) -> str:
    """Get the sync and health status of one Argo CD application."""
    return json.dumps({"name": name, "health": "Degraded", "sync": "Synced"})


@pytest.fixture
async def conversation(model: ChatLocalLlama, tmp_path: Path) -> AsyncIterator[Conversation]:
    settings = Settings(home=tmp_path, local_model_path=Path(model.model_path))
    setup = setup_model(settings, chat_model=model, local_counter=model.get_num_tokens)
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
        graph = build_agent(settings, setup, tools=[get_application_status],
                            system_prompt=SYSTEM, checkpointer=saver)
        yield Conversation(graph, "crash-thread")


def _worker(model: ChatLocalLlama) -> WorkerEngine:
    return shared_engine(model.model_path, model.n_ctx)


async def _ask_and_kill(conversation: Conversation, worker: WorkerEngine, question: str,
                        sig: signal.Signals) -> tuple[list[Event], int]:
    """Ask, and send `sig` to the worker when the first answer token arrives (mid-generation:
    the answer is not complete until the worker says so)."""
    events: list[Event] = []
    killed = 0
    async for event in conversation.ask(question):
        events.append(event)
        if isinstance(event, Token) and not killed:
            assert worker.pid is not None
            killed = worker.pid
            os.kill(killed, sig)
    return events, killed


def _unanswered_calls(history: list[BaseMessage]) -> list[str | None]:
    answered = {m.tool_call_id for m in history if isinstance(m, ToolMessage)}
    return [c["id"] for m in history if isinstance(m, AIMessage) for c in m.tool_calls
            if c["id"] not in answered]


async def _next_answer(conversation: Conversation, question: str) -> list[Event]:
    events = [e async for e in conversation.ask(question)]
    assert [e for e in events if isinstance(e, TurnFailed)] == []
    assert isinstance(events[-1], Answer) and events[-1].text.strip()
    return events


def _the_crash_error(events: list[Event], signal_name: str) -> Any:
    errors = [e for e in events if isinstance(e, TurnFailed)]
    assert len(errors) == 1 and events[-1] is errors[0]
    error = errors[0]
    assert f"worker process was killed by {signal_name}" in error.message
    assert "The conversation is kept" in error.message
    assert error.payload["kind"] == "LocalModelCrashedError"
    assert "pilothouse doctor" in error.payload["suggestion"]
    return error


async def test_sigsegv_while_answering_a_tool_result(
    model: ChatLocalLlama, conversation: Conversation
) -> None:
    worker = _worker(model)
    events, killed = await _ask_and_kill(
        conversation, worker, "What is the health of payments-api?", signal.SIGSEGV
    )
    assert [e.name for e in events if isinstance(e, ToolCalled)] == ["get_application_status"]
    assert len([e for e in events if isinstance(e, ToolResult)]) == 1
    _the_crash_error(events, "SIGSEGV")
    assert worker.pid is None  # reaped; nothing runs until the next question

    history = await conversation.history()
    assert _unanswered_calls(history) == []
    assert isinstance(history[-1], ToolMessage)  # the half-written answer was not kept

    answer = await _next_answer(conversation, "Is payments-api degraded? Answer yes or no.")
    assert worker.pid is not None and worker.pid != killed
    history = await conversation.history()
    assert _unanswered_calls(history) == []
    assert answer[-1].text in str(history[-1].content)


async def test_sigkill_in_the_first_generation_of_a_turn(
    model: ChatLocalLlama, conversation: Conversation
) -> None:
    worker = _worker(model)
    events, killed = await _ask_and_kill(
        conversation, worker, "Count from 1 to 40, one number per line.", signal.SIGKILL
    )
    error = _the_crash_error(events, "SIGKILL")
    assert "out-of-memory killer" in error.message
    history = await conversation.history()
    assert _unanswered_calls(history) == []
    assert not any(isinstance(m, AIMessage) for m in history)

    await _next_answer(conversation, "Reply with the single word OK.")
    assert worker.pid is not None and worker.pid != killed
    assert isinstance((await conversation.history())[-1], AIMessage)
