"""Who answers on the CLI: the supervisor by default, any specialist by `--agent`, and one
agent per thread (continuing a thread with another agent is refused with commands that work).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import SCRIPT, backquoted_commands, json_lines, pilothouse

from pilothouse.sandbox.github.server import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

QUESTION = "Which pull requests are open?"


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as sandbox:
        yield sandbox


@pytest.fixture
def env(github: RunningGitHubSandbox) -> dict[str, str]:
    return {"GITHUB_API_URL": github.url, "GITHUB_TOKEN": github.token}


@pytest.mark.parametrize("agent", [[], ["--agent", "auto"], ["--agent", "supervisor"]])
def test_the_supervisor_answers_by_default_and_its_agents_calls_show_nested(
    tmp_path: Path, model: tuple[str, ScriptState], env: dict[str, str], agent: list[str],
) -> None:
    done = pilothouse(tmp_path, model[0], "ask", *agent, "--json", QUESTION, **env)

    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)
    calls = [(e["text"], e["data"].get("agent")) for e in events if e["kind"] == "tool_call"]
    assert calls == [("ask_github", None), ("search_issues", "github")]
    [ask] = [e for e in events if e["kind"] == "tool_call" and e["text"] == "ask_github"]
    nested = [e for e in events if e["data"].get("parent_id") == ask["data"]["id"]]
    assert {e["kind"] for e in nested} == {"tool_call", "tool_result"}
    assert "GITHUB:" in next(e["text"] for e in events if e["kind"] == "answer")


def test_a_thread_is_one_agents_and_the_refusal_names_commands_that_work(
    tmp_path: Path, model: tuple[str, ScriptState], env: dict[str, str],
) -> None:
    first = pilothouse(tmp_path, model[0], "ask", "--agent", "github", "--thread", "prs-1",
                       QUESTION, **env)
    assert first.returncode == 0, first.stderr

    mixed = pilothouse(tmp_path, model[0], "ask", "--agent", "supervisor", "--thread", "prs-1",
                       QUESTION, **env)

    assert mixed.returncode == 2
    assert "Thread prs-1 belongs to the github agent, not to the supervisor" in mixed.stderr
    same_thread, new_thread = backquoted_commands(mixed.stderr)
    assert same_thread == ["ask", "--thread", "prs-1", QUESTION]
    assert new_thread == ["ask", "--agent", "supervisor", QUESTION]
    # Both work: without --agent the thread goes on with its own agent (the GitHub one).
    asked = len(model[1].requests)
    continued = pilothouse(tmp_path, model[0], *same_thread, **env)
    assert continued.returncode == 0, continued.stderr
    assert continued.stdout.startswith("GITHUB:")
    assert {r.rule for r in model[1].requests[asked:]} == {"github-call", "github-answer"}
    fresh = pilothouse(tmp_path, model[0], *new_thread, **env)
    assert fresh.returncode == 0, fresh.stderr
    assert fresh.stdout.startswith("Combined:") or fresh.stdout.startswith("GITHUB:")


def test_the_tui_takes_the_agent_and_keeps_a_thread_to_its_agent(
    tmp_path: Path, model: tuple[str, ScriptState], env: dict[str, str],
) -> None:
    first = pilothouse(tmp_path, model[0], "ask", "--thread", "sup-1", QUESTION, **env)
    assert first.returncode == 0, first.stderr

    unknown = pilothouse(tmp_path, model[0], "tui", "--agent", "jenkins")
    mixed = pilothouse(tmp_path, model[0], "tui", "--thread", "sup-1", "--agent", "devops")

    assert unknown.returncode == 2 and "Unknown agent 'jenkins'" in unknown.stderr
    assert mixed.returncode == 2
    assert backquoted_commands(mixed.stderr) == [["tui", "--thread", "sup-1"],
                                                 ["tui", "--agent", "devops"]]
