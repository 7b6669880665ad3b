"""A question that only asks to know is answered by reading: the DevOps agent end to end (real
shell and RAG servers, a scripted model), and the grammar that tells a question from a request."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.reads_for_questions import asks_only_to_know
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import ApprovalRequest, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.testing.scripted_model import ScriptedChatModel, tool_call
from pilothouse.tools.shell import check_command

MAKEFILE = "logs:\n\tkubectl --context dev-east logs -f deploy/api\n"


@pytest.mark.parametrize("question", [
    "whats the make target for tailing the logs, and which context does it use?",
    "db fails over mid deploy - how many tries do we get before we give up?",
    "ok so how many tests have we got?",
    "is prod different from the default",
    "what happens if i run make clean?",
])
def test_a_question_asks_only_to_know(question: str) -> None:
    assert asks_only_to_know(question)


@pytest.mark.parametrize("question", [
    "run the unit tests pls",
    "Restart the api deployment with kubectl",
    "can you run the tests?",
    "whats broken? fix it",
    "what do the tests say? run them",
    "the build is red",  # a statement: no question, no request
])
def test_a_request_or_a_statement_does_not(question: str) -> None:
    assert not asks_only_to_know(question)


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "repo"
    workspace.mkdir()
    (workspace / "Makefile").write_text(MAKEFILE)
    return workspace


async def _asked(make_settings: Callable[..., Settings],
                 scripted_setup: Callable[..., ModelSetup], tmp_path: Path,
                 script: list[object], question: str) -> tuple[list[object], ScriptedChatModel]:
    """The events of `question` asked of the DevOps agent, and the scripted model."""
    workspace = _workspace(tmp_path)
    assert check_command("make logs", workspace=workspace).action == "ask"
    settings = dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"),
                                   workspace=workspace)
    setup = scripted_setup(script, window=32_000, settings=settings)
    async with open_devops_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        events = [e async for e in Conversation(graph, "q").ask(question)]
    assert isinstance(setup.chat_model, ScriptedChatModel)
    return events, setup.chat_model


async def test_a_command_that_needs_approval_is_chosen_again_for_a_question(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    events, model = await _asked(make_settings, scripted_setup, tmp_path, [
        tool_call("run_command", command="make logs"),  # would wait for a person
        tool_call("run_command", command="grep -n -A1 logs Makefile"), "The target is logs.",
    ], "whats the make target for tailing the logs, and which context does it use?")

    assert not [e for e in events if isinstance(e, ApprovalRequest)]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == 1 and "dev-east" in results[0].preview, results
    retold = str(model.requests[1].messages[-1].content)
    assert "`make logs` would wait for the person's approval" in retold, retold


@pytest.mark.parametrize(("script", "question"), [
    # A request: approval is what it asks for.
    ([tool_call("run_command", command="make logs")], "tail the dev logs with make"),
    # A question: the model chose the command again, and the person has the say.
    ([tool_call("run_command", command="make logs")] * 2, "what do the dev logs say?"),
    # The person wrote the command: theirs, asked as written.
    ([tool_call("run_command", command="make logs")], "what does make logs print?"),
])
async def test_the_person_is_still_asked(
    tmp_path: Path, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings], script: list[object], question: str,
) -> None:
    events, model = await _asked(make_settings, scripted_setup, tmp_path, [*script, "Done."],
                                 question)

    assert [e for e in events if isinstance(e, ApprovalRequest)]
    assert len(model.requests) == len(script)
