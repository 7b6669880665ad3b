"""A DevOps request for a shell action gets a command: spelled ones run as spelled, through the
policy; shell actions are offered `run_command` alone; a task of several steps, a plan.

The end-to-end tests run the real DevOps toolkit, its shell server jailed in bubblewrap
(`pilothouse.testing.jail`): the hostile command aims at a canary beside the workspace.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from mcp import StdioServerParameters

import pilothouse.agents.devops as devops
from pilothouse.agents.devops import open_devops_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.shell_intent import (
    DEVOPS_HINTS,
    file_command,
    grep_command,
    spelled_command,
)
from pilothouse.agents.tool_hints import hinted_tools
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, ApprovalRequest, Event
from pilothouse.runtime.session import Conversation
from pilothouse.testing.jail import jailed
from pilothouse.testing.scripted_model import tool_call

pytestmark = pytest.mark.timeout(180)


COMMAND, SHELL, PLAN, OPEN = "spelled", ("run_command",), ("propose_plan",), ()


@pytest.mark.parametrize(("question", "intent"), [
    ("Print the notes with this command: cat NOTES.md && ls", COMMAND),
    ("please run `git status` for me", COMMAND),
    ("run du -sh build, then tell me if it is big", COMMAND),
    ("With sed, replace LIMIT = 5 by LIMIT = 8 in app/limits.py", SHELL),
    ("grep the lib folder for RETRY_BUDGET", SHELL),
    ("Display the file charts/api/values.yaml", SHELL),
    ("Read the first 20 lines of NOTES.md", SHELL),
    ("What is the line count of every module under lib?", SHELL),
    ("Which files are in the charts folder?", SHELL),
    # A count of files of a kind is a count of files.
    ("how many .py files under lib?", SHELL),
    ("How many YAML files does charts hold?", SHELL),
    ("Set the image tag to 1.4 in charts/api/values.yaml, run the linter, and push it",
     PLAN),
    # A plan asked for by name, whatever the rest says; a program's "plan" is a command.
    ("need a plan for adding a health endpoint, dont change anything yet", PLAN),
    ("Rotate the signing key. Plan it first.", PLAN),
    ("run terraform plan in infra", COMMAND),
    ("How does the scheduler pick the next job?", OPEN),
    ("Where is the cache invalidated?", OPEN),
    ("Find where the feature flags are loaded", OPEN),
    ("show me how lib/cache.py expires entries", OPEN),
])
def test_the_persons_words_decide_the_kind_of_request(question: str,
                                                      intent: object) -> None:
    assert (COMMAND if spelled_command(question) else hinted_tools(question, DEVOPS_HINTS)) \
        == intent


def test_a_spelled_command_is_taken_as_spelled() -> None:
    assert spelled_command("Print the notes with this command: cat NOTES.md; rm -rf ../x") == \
        "cat NOTES.md; rm -rf ../x"
    assert spelled_command("please run `git log -3` now") == "git log -3"
    assert spelled_command("run du -sh build, then tell me if it is big") == "du -sh build"
    assert spelled_command("run kubectl get pods\n\n(Answer briefly.)") == "kubectl get pods"
    assert spelled_command("with this command: ls -la\n\n(Answer briefly.)") == "ls -la"
    # Backticks around a name are not a command; "run" before English is not one either.
    assert spelled_command("where is `RETRY_BUDGET` read?") is None
    assert spelled_command("run the unit tests") is None


@pytest.mark.parametrize(("question", "command"), [
    ("Show me charts/api/values.yaml: which port does it use?", "cat charts/api/values.yaml"),
    ("Read the top of NOTES.md", "head -n 40 NOTES.md"),
    ("print the last 5 lines of logs/app.log", "tail -n 5 logs/app.log"),
    ("show me how lib/cache.py expires entries", None),  # how code works: retrieval
    ("Print the .env file", "cat .env"),  # the policy refuses it, with its reason
    ("Which port does charts/api/values.yaml give the service?", "cat charts/api/values.yaml"),
    ("is DEBUG on in config/app.toml", "cat config/app.toml"),
    ("How many lines does lib/cache.py have?", None),  # a count: the model writes `wc -l`
    ("What does sed change in app/limits.py when I run make?", None),  # a program named
])
def test_a_file_asked_to_be_shown_is_shown_by_a_command(question: str,
                                                        command: str | None) -> None:
    assert file_command(question) == command


@pytest.mark.parametrize(("question", "command"), [
    ("grep the lib folder for RETRY_BUDGET", "grep -rn -- RETRY_BUDGET lib"),
    ("grep our repository's charts/api directory for replicas, please",
     "grep -rn -- replicas charts/api"),
    ("Grep for `FEATURE_FLAGS` in lib/flags", "grep -rn -- FEATURE_FLAGS lib/flags"),
    ("can you grep the workspace for LIMIT?", "grep -rn -- LIMIT ."),
    ("Back to that module: grep it for RETRY_BUDGET", None),  # which one: the model reads
    ("grep -c LIMIT app.py", None),  # a command of its own: the model (or `run`) spells it
    ("Where is the cache invalidated?", None),
])
def test_a_folder_asked_to_be_grepped_is_grepped_with_line_numbers(question: str,
                                                                   command: str | None) -> None:
    assert grep_command(question) == command


@pytest.fixture
def jailed_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(workspace, canary): the DevOps agent's shell server runs jailed for this test."""
    workspace, canary_dir = tmp_path / "ws", tmp_path / "canary"
    workspace.mkdir()
    canary_dir.mkdir()
    (workspace / "NOTES.md").write_text("# Notes\nDeploys go out on Tuesdays.\n")
    (workspace / "app.py").write_text("LIMIT = 5\n")
    (canary_dir / "canary.txt").write_text("alive\n")
    launch = devops.shell_stdio_parameters

    def jailed_shell(*args: Any, **kwargs: Any) -> StdioServerParameters:
        return jailed(launch(*args, **kwargs), workspace, canary_dir)

    monkeypatch.setattr(devops, "shell_stdio_parameters", jailed_shell)
    return workspace, canary_dir / "canary.txt"


def devops_settings(make_settings: Callable[..., Settings], workspace: Path) -> Settings:
    return dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"), workspace=workspace)


async def ask_devops(settings: Settings, setup: ModelSetup, thread: str,
                     *questions: str) -> tuple[list[list[Event]], list[BaseMessage]]:
    """Each question's events, asked in turn of the DevOps agent, and the thread's history."""
    async with open_devops_toolkit(settings) as toolkit:
        graph = AgentFactory(settings, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, thread)
        events = [[e async for e in conversation.ask(q)] for q in questions]
        return events, await conversation.history()


async def test_a_spelled_hostile_command_is_refused_by_the_policy_without_a_model_call(
    jailed_workspace: tuple[Path, Path], scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace, canary = jailed_workspace
    settings = devops_settings(make_settings, workspace)
    setup = scripted_setup(["That command was refused: it deletes outside the workspace. "
                            "Run cat NOTES.md alone to read the notes."],
                           window=32_000, settings=settings)
    command = "cat NOTES.md; rm -rf ../canary"
    [events], history = await ask_devops(settings, setup, "spelled",
                                         f"Print the notes with this command: {command}")

    assert canary.read_text() == "alive\n"
    calls = [c for m in history if isinstance(m, AIMessage) for c in m.tool_calls]
    assert [(c["name"], c["args"]) for c in calls] == [("run_command", {"command": command})]
    [result] = [m for m in history if isinstance(m, ToolMessage)]
    assert isinstance(result.artifact, dict) and "outside the workspace" in str(result.artifact)
    # The model was called once, to explain the refusal; it chose nothing.
    [request] = setup.chat_model.requests  # type: ignore[attr-defined]
    assert isinstance(request.messages[-1], ToolMessage)
    [answer] = [e.text for e in events if isinstance(e, Answer)]
    assert answer.startswith("That command was refused") and "outside the workspace" in answer


async def test_a_shell_action_is_offered_run_command_alone_and_an_edit_waits_for_approval(
    jailed_workspace: tuple[Path, Path], scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace, _ = jailed_workspace
    settings = devops_settings(make_settings, workspace)
    setup = scripted_setup([tool_call("run_command", command="sed -i s/5/8/ app.py")],
                           window=32_000, settings=settings)
    [events], _ = await ask_devops(settings, setup, "sed", "With sed, replace 5 by 8 in app.py")

    [request] = setup.chat_model.requests  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in request.tools] == ["run_command"]
    assert request.tool_choice == "required"
    assert [e for e in events if isinstance(e, ApprovalRequest)]
    assert (workspace / "app.py").read_text() == "LIMIT = 5\n"  # nothing ran unapproved


async def test_a_task_of_several_changing_steps_is_offered_the_plan_alone(
    jailed_workspace: tuple[Path, Path], scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace, _ = jailed_workspace
    settings = devops_settings(make_settings, workspace)
    plan = tool_call("propose_plan", goal="Raise the limit", steps=[
        {"title": "Edit app.py", "tools": ["run_command"]},
        {"title": "Commit", "tools": ["run_command"]}])
    setup = scripted_setup([plan], window=32_000, settings=settings)
    [events], _ = await ask_devops(
        settings, setup, "plan", "Raise the limit to 8: edit app.py, run the checks, and commit it")

    [request] = setup.chat_model.requests  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in request.tools] == ["propose_plan"]
    assert [e for e in events if isinstance(e, ApprovalRequest)]  # the plan waits for review


async def test_a_file_asked_to_be_shown_is_read_without_a_model_call_and_paths_are_grounded(
    jailed_workspace: tuple[Path, Path], scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    workspace, _ = jailed_workspace
    settings = devops_settings(make_settings, workspace)
    # The second turn's model filters retrieval to a path nobody said: the filter is dropped.
    setup = scripted_setup(["Deploys go out on Tuesdays.",
                            tool_call("retrieve_code_context", query="limit",
                                      path_filter="src/limits.py"), "LIMIT is 5.",
                            "app.py sets it on line 1."],
                           window=32_000, settings=settings)
    [shown, _, grepped], history = await ask_devops(
        settings, setup, "show", "Show me NOTES.md: when do deploys go out?",
        "Where is the limit set?", "grep the workspace for LIMIT")

    calls = [(c["name"], c["args"]) for m in history if isinstance(m, AIMessage)
             for c in m.tool_calls]
    assert calls[0] == ("run_command", {"command": "cat NOTES.md"})
    assert calls[1][0] == "retrieve_code_context" and "path_filter" not in calls[1][1]
    assert calls[2] == ("run_command", {"command": "grep -rn -- LIMIT ."})
    [answer] = [e.text for e in shown if isinstance(e, Answer)]
    assert "Deploys go out on Tuesdays." in answer
    [found] = [e.text for e in grepped if isinstance(e, Answer)]
    assert "app.py:1:LIMIT = 5" in found  # the grep's own lines, with their numbers
