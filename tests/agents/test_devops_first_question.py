"""A first code question never waits for an index: the real DevOps agent, its real servers.

The DevOps agent's RAG server indexes nothing at start; a question that needs the code starts
the index of a code repository within PILOTHOUSE_INDEX_MAX_FILES, shows its progress, and is
answered meanwhile from a keyword scan. A folder that is not a repository, or one over the cap,
is never indexed unasked, and still answers a question whose words are in its files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, Event, ToolProgress
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.rag.embeddings import MiniLMEmbeddings
from pilothouse.tools.rag.index import CodeIndex

BILLING = '''"""Billing helpers."""


def compute_invoice_total(lines):
    """Sum the invoice lines, with tax."""
    return round(sum(line["amount"] for line in lines) * 1.2, 2)
'''
QUESTION = "Where is compute_invoice_total defined?"


def workspace(tmp_path: Path, *, repository: bool, files: int = 1) -> Path:
    """`billing.py` and `files - 1` small modules; a git checkout when `repository`."""
    root = tmp_path / "work"
    root.mkdir()
    if repository:
        (root / ".git").mkdir()
    (root / "billing.py").write_text(BILLING)
    for n in range(files - 1):
        (root / f"module_{n}.py").write_text(f"def helper_{n}():\n    return {n}\n")
    return root.resolve()


async def ask(settings: Settings, setup: ModelSetup) -> tuple[list[Event], dict[str, Any]]:
    """The events of QUESTION to the DevOps agent, and its retrieval's structured result."""
    async with open_devops_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, "first")
        events = [e async for e in conversation.ask(QUESTION)]
        history = await conversation.history()
    result = next(m for m in reversed(history) if isinstance(m, ToolMessage))
    assert isinstance(result.artifact, dict), result
    return events, dict(result.artifact)


def script(scripted_setup: Callable[..., ModelSetup], settings: Settings) -> ModelSetup:
    return scripted_setup([tool_call("retrieve_code_context", query="compute_invoice_total"),
                           "It is defined in billing.py."], window=32_000, settings=settings)


@pytest.mark.parametrize("kind", ["not a repository", "over the cap"])
async def test_a_folder_not_to_index_is_never_indexed_and_still_answers_from_its_files(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings], kind: str,
) -> None:
    over = kind == "over the cap"
    root = workspace(tmp_path, repository=over, files=4 if over else 1)
    settings = dataclasses.replace(
        make_settings(MAX_CONTEXT_TOKENS="32000", PILOTHOUSE_INDEX_MAX_FILES="3"),
        workspace=root)

    events, result = await ask(settings, script(scripted_setup, settings))

    # Answered from a keyword scan of the files, and the result says why there is no index.
    assert [h["path"] for h in result["hits"]][:1] == ["billing.py"]
    assert "def compute_invoice_total" in result["hits"][0]["text"]
    why = "more than 3 files" if over else "is not a code repository"
    assert why in result["note"] and "keyword scan" in result["note"]
    assert not [e for e in events if isinstance(e, ToolProgress)]
    assert next(e.text for e in events if isinstance(e, Answer)).startswith(
        "It is defined in billing.py.")
    # Nothing was indexed: not at start, not for the question.
    store = CodeIndex(settings.home / "rag", MiniLMEmbeddings())
    assert store.indexed_roots() == []


async def test_a_repository_is_indexed_when_a_question_needs_it_with_progress_shown(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    root = workspace(tmp_path, repository=True, files=2)
    settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"), workspace=root)

    events, result = await ask(settings, script(scripted_setup, settings))

    progress = [e for e in events if isinstance(e, ToolProgress)]
    assert progress and {e.name for e in progress} == {"retrieve_code_context"}
    assert progress[0].message == "indexing 2 files: 0%" and progress[0].total == 2
    assert result["hits"][0]["path"] == "billing.py"
    # The question started the index of the repository (in the background of the server).
    assert CodeIndex(settings.home / "rag", MiniLMEmbeddings()).indexed_roots() == [str(root)]
