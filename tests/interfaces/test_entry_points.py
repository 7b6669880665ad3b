"""Every door gets its agents from the factory: `serve` (A2A, REST API, web UI), the CLI, the TUI.

Each test checks what a door really runs: the layers of the agents it serves, and the memory
guard refusing a turn when the process is over its budget.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_layers import memory_guards, missing_layers, with_both_sandboxes
from interfaces_support import in_process, new_conversation, parse_sse
from textual.widgets import Input, Markdown

from pilothouse.agents.registry import Topology
from pilothouse.config import Settings
from pilothouse.interfaces.api.server import registry_path
from pilothouse.interfaces.serve import open_serve_app
from pilothouse.interfaces.tui import tui_app
from pilothouse.models.registry import ModelSetup
from pilothouse.sandbox.github.server import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

#: The variables of the test process that would change what the CLI's agent does.
_CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN", "OPENAI_", "LLM_", "MAX_CONTEXT")
GITHUB_SCRIPT: dict[str, Any] = {"rules": [
    {"name": "gh-search", "when": {"tools_include": "search_issues", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "search_issues", "arguments": {
         "query": "org:acme-corp is:pr is:open", "per_page": 5}}]}},
    {"name": "gh-answer", "when": {"tools_include": "search_issues", "last_role": "tool"},
     "reply": {"content": "GITHUB: {last}"}},
], "default": {"content": "No scripted answer."}}


async def test_serve_runs_every_agent_with_every_layer_and_the_api_over_the_supervisor(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    with with_both_sandboxes(make_settings, PILOTHOUSE_MEMORY_LIMIT="3GiB") as settings:
        async with open_serve_app(
                settings, public_url="http://127.0.0.1:8080", model=scripted_setup(["ok"]),
                topology=Topology(configured=frozenset({"argocd", "github"})),
                api=True) as served, in_process(served.app):
            agents = {endpoint.agent.name: endpoint.agent for endpoint in served.endpoints}
            api_agent = served.app.state.runtime.agent

    assert list(agents) == ["argocd", "github", "supervisor"] and served.failed == {}
    assert {name: missing_layers(agent, approvals=name == "argocd")
            for name, agent in agents.items()} == {name: set() for name in agents}
    # One memory budget for the whole process, the one PILOTHOUSE_MEMORY_LIMIT sets.
    budgets = {id(guard.budget) for agent in agents.values() for guard in memory_guards(agent)}
    assert len(budgets) == 1
    assert memory_guards(agents["argocd"])[0].budget.limit_bytes == 3 * 2**30
    # The REST API and web UI serve the very supervisor A2A serves.
    assert api_agent is agents["supervisor"]


async def test_serve_refuses_a_question_over_the_memory_budget_and_says_what_to_do(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = make_settings(PILOTHOUSE_MEMORY_LIMIT="16MiB")  # any Python process is above
    async with open_serve_app(settings, public_url="http://127.0.0.1:8080",
                              model=scripted_setup(["never sent"]), agents=["supervisor"],
                              topology=Topology(), api=True) as served, \
            in_process(served.app) as client:
        thread = await new_conversation(client)
        reply = await client.post(f"/conversations/{thread}/ask", json={"question": "status?"})

    events = parse_sse(reply.text)
    errors = [e for e in events if e["kind"] == "error"]
    assert len(errors) == 1 and "near its memory budget" in errors[0]["text"]
    assert "PILOTHOUSE_MEMORY_LIMIT" in errors[0]["data"]["suggestion"]
    assert not [e for e in events if e["kind"] == "answer"]


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(GITHUB_SCRIPT) as served:
        yield served


def pilothouse_ask(home: Path, model_url: str, github: RunningGitHubSandbox,
                   *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`pilothouse ask ...` in a process of its own, over the scripted model and the sandbox."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    clean.update({"PILOTHOUSE_HOME": str(home), "PILOTHOUSE_MODEL": "openai-compatible:scripted",
                  "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000",
                  "GITHUB_API_URL": github.url, "GITHUB_TOKEN": github.token, **env})
    return subprocess.run([sys.executable, "-m", "pilothouse", "ask", *args], env=clean,
                          capture_output=True, text=True, timeout=180, check=False)


def test_the_cli_asks_the_github_agent(
    tmp_path: Path, model: tuple[str, ScriptState], github: RunningGitHubSandbox,
) -> None:
    done = pilothouse_ask(tmp_path, model[0], github, "--agent", "github", "--json",
                          "Which pull requests are open?")

    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0, done.stderr
    calls = [e["text"] for e in events if e["kind"] == "tool_call"]
    answers = [e["text"] for e in events if e["kind"] == "answer"]
    assert calls == ["search_issues"] and answers and answers[0].startswith("GITHUB:")


def test_the_cli_agent_has_the_memory_guard(
    tmp_path: Path, model: tuple[str, ScriptState], github: RunningGitHubSandbox,
) -> None:
    done = pilothouse_ask(tmp_path, model[0], github, "--agent", "github", "--json",
                          "Which pull requests are open?", PILOTHOUSE_MEMORY_LIMIT="16MiB")

    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 1, done.stderr
    assert [e["kind"] for e in events] == ["error", "done"]
    assert "near its memory budget" in events[0]["text"]


def test_the_cli_refuses_an_unknown_agent_and_names_the_choices(
    tmp_path: Path, model: tuple[str, ScriptState], github: RunningGitHubSandbox,
) -> None:
    done = pilothouse_ask(tmp_path, model[0], github, "--agent", "jenkins", "hello")

    assert done.returncode == 2  # a usage error
    assert "Unknown agent 'jenkins'" in done.stderr
    assert "argocd, github, devops, supervisor" in done.stderr
    assert "Traceback" not in done.stderr


async def test_the_tui_opens_the_configured_assistant_and_answers(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup]
) -> None:
    settings = make_settings()
    app = tui_app(settings, thread_id="cli-1", model=scripted_setup(["Hello from the terminal."]))
    async with app.run_test(size=(100, 30)) as pilot:
        for _ in range(500):
            if app.ready.is_set():
                break
            await pilot.pause(0.02)
        assert app.sub_title.startswith("pilothouse · openai:gpt-4 · 8,192 tokens · 0 tools")
        assert app.agent is not None and missing_layers(app.agent) == set()
        app.query_one("#question", Input).value = "hello"
        await pilot.press("enter")
        answers: list[Any] = []
        for _ in range(500):
            answers = [m.source for m in app.query("#chat Markdown").results(Markdown)]
            if answers:
                break
            await pilot.pause(0.02)
    assert answers == ["Hello from the terminal."]
    assert registry_path(settings).exists()
