"""`pilothouse serve` end to end: supervisor and agents in separate processes on 127.0.0.1.

Everything is real (the a2a-sdk client, A2A between processes, the MCP tool servers, the Argo
CD and GitHub sandboxes over HTTP, SQLite) except the model: the agents' `ChatOpenAI` clients
talk to a scripted OpenAI-compatible server in this process.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.types.a2a_pb2 import SendMessageRequest, TaskState
from a2a_harness import a2a_client, answer_text, final_state, get_task, stream, user_message
from a2a_harness import wait_for_state as wait_state
from serve_processes import ServeProcess

from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.sandbox.github.server import RunningGitHubSandbox, running_github_sandbox
from pilothouse.testing.scripted_server import ScriptState, running_scripted_server

QUESTION = "which production apps are degraded and are there open PRs touching them?"


def _ask(agent: str, question: str) -> dict[str, Any]:
    return {"name": f"ask_{agent}", "arguments": {"question": question}}


SCRIPT: dict[str, Any] = {"rules": [
    # The supervisor (the only agent with ask_* tools).
    {"name": "sup-recovered", "when": {"tools_include": "ask_argocd", "last_role": "user",
                                       "any_contains": "interrupted before it returned"},
     "reply": {"content": "Recovered after the restart."}},
    {"name": "sup-note", "when": {"tools_include": "ask_argocd", "last_role": "user",
                                  "last_contains": "remember"},
     "reply": {"content": "Noted."}},
    {"name": "sup-argocd-only", "when": {"tools_include": "ask_argocd", "last_role": "user",
                                         "last_contains": "argocd only"},
     "reply": {"tool_calls": [_ask("argocd", "Which production apps are degraded? {question}")]}},
    {"name": "sup-route", "when": {"tools_include": "ask_argocd", "last_role": "user"},
     "reply": {"tool_calls": [
         _ask("argocd", "Which production applications are degraded? ({question})"),
         _ask("github", "Which pull requests are open in acme-corp? ({question})")]}},
    {"name": "sup-combine", "when": {"tools_include": "ask_argocd", "last_role": "tool"},
     "reply": {"content": "Summary of the agents.\n{tool_results}"}},
    # The Argo CD agent.
    {"name": "argo-list", "when": {"tools_include": "list_applications", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "list_applications", "arguments": {
         "health_status": "Degraded", "selector": "env=production", "page_size": 5}}]}},
    {"name": "argo-after-disconnect", "when": {"tools_include": "list_applications",
                                               "last_tool": "get_application"},
     "reply": {"content": "This call must never happen: the run was cancelled."}},
    {"name": "argo-slow", "when": {"tools_include": "list_applications", "last_role": "tool",
                                   "any_contains": "SLOW-ARGO"},
     "reply": {"content": "ARGOCD (slowly): " + "degraded " * 60, "chunk_delay": 0.3,
               "tool_calls": [{"name": "get_application", "arguments": {"name": "x"}}]}},
    {"name": "argo-answer", "when": {"tools_include": "list_applications", "last_role": "tool"},
     "reply": {"content": "ARGOCD: {last}"}},
    # The GitHub agent.
    {"name": "gh-search", "when": {"tools_include": "search_issues", "last_role": "user"},
     "reply": {"tool_calls": [{"name": "search_issues", "arguments": {
         "query": "org:acme-corp is:pr is:open", "per_page": 5}}]}},
    {"name": "gh-slow", "when": {"tools_include": "search_issues", "last_role": "tool",
                                 "any_contains": "SLOW-GH"},
     "reply": {"content": "GITHUB (slowly): " + "pull " * 80, "chunk_delay": 0.3}},
    {"name": "gh-answer", "when": {"tools_include": "search_issues", "last_role": "tool"},
     "reply": {"content": "GITHUB: {last}"}},
], "default": {"content": "No scripted answer."}}


@pytest.fixture(scope="module")
def argocd() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=200) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def github() -> Iterator[RunningGitHubSandbox]:
    with running_github_sandbox(search_limit=10_000) as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def model() -> Iterator[tuple[str, ScriptState]]:
    with running_scripted_server(SCRIPT) as served:
        yield served


class Cluster:
    """Processes of one test: agents and a supervisor wired by PILOTHOUSE_AGENTS_*_URL."""

    def __init__(self, root: Path, model_url: str, argocd: RunningSandbox,
                 github: RunningGitHubSandbox) -> None:
        self.root = root
        self.base = {"PILOTHOUSE_MODEL": "openai-compatible:scripted",
                     "OPENAI_BASE_URL": model_url, "MAX_CONTEXT_TOKENS": "32000",
                     "PILOTHOUSE_LOG_LEVEL": "INFO", "ARGOCD_URL": argocd.url,
                     "ARGOCD_TOKEN": argocd.token, "GITHUB_API_URL": github.url,
                     "GITHUB_TOKEN": github.token, "PILOTHOUSE_AGENTS_TIMEOUT": "60"}
        self.processes: list[ServeProcess] = []

    def process(self, agent: str, *, port: int | None = None, home: str | None = None,
                **env: str) -> ServeProcess:
        home_dir = self.root / (home or agent)
        log = self.root / f"{agent}.log"
        process = ServeProcess([agent], {**self.base, "PILOTHOUSE_HOME": str(home_dir), **env},
                               log, port)
        self.processes.append(process)
        return process.start()

    def supervisor(self, agents: dict[str, ServeProcess], **kwargs: Any) -> ServeProcess:
        urls = {f"PILOTHOUSE_AGENTS_{n.upper()}_URL": p.agent_url(n) for n, p in agents.items()}
        return self.process("supervisor", **urls, **kwargs)

    def stop(self) -> None:
        for process in self.processes:
            process.stop()


@asynccontextmanager
async def cluster(tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
                  github: RunningGitHubSandbox) -> AsyncIterator[Cluster]:
    running = Cluster(tmp_path, model[0], argocd, github)
    try:
        yield running
    finally:
        running.stop()


async def degraded_production_apps(argocd: RunningSandbox) -> list[str]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {argocd.token}"}) as http:
        items = (await http.get(f"{argocd.url}/api/v1/applications",
                                params={"selector": "env=production"})).json()["items"]
    return [a["metadata"]["name"] for a in items if a["status"]["health"]["status"] == "Degraded"]


async def open_pull_titles(github: RunningGitHubSandbox) -> list[str]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {github.token}"}) as http:
        found = (await http.get(f"{github.url}/search/issues",
                                params={"q": "org:acme-corp is:pr is:open"})).json()
    return [item["title"] for item in found["items"]]


async def test_a_question_spanning_two_agents_is_answered_across_processes(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
    github: RunningGitHubSandbox,
) -> None:
    async with cluster(tmp_path, model, argocd, github) as c:
        agents = {"argocd": c.process("argocd"), "github": c.process("github")}
        supervisor = c.supervisor(agents)
        await asyncio.gather(*(p.ready() for p in [*agents.values(), supervisor]))
        async with a2a_client(supervisor.url) as client:  # the root card: the supervisor
            events = await stream(client, QUESTION)
            answer = answer_text(await get_task(client, events[0].task.id))

    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    assert "ARGOCD:" in answer and "GITHUB:" in answer
    assert (await degraded_production_apps(argocd))[0] in answer
    assert (await open_pull_titles(github))[0] in answer
    # Each agent ran its own model turns: both answered from their tools. The question names
    # both agents, so code asked each its own part (no supervisor model call routed it).
    for rule in ("argo-list", "argo-answer", "gh-search", "gh-answer", "sup-combine"):
        assert model[1].hits(rule), rule
    assert not model[1].hits("sup-route")
    [listed] = model[1].hits("argo-list")
    assert "which production apps are degraded" in str(listed.messages[-1].get("content"))


async def test_an_agent_killed_mid_answer_gives_a_partial_answer_then_comes_back(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
    github: RunningGitHubSandbox,
) -> None:
    state = model[1]
    async with cluster(tmp_path, model, argocd, github) as c:
        agents = {"argocd": c.process("argocd"), "github": c.process("github")}
        supervisor = c.supervisor(agents)
        await asyncio.gather(*(p.ready() for p in [*agents.values(), supervisor]))
        async with a2a_client(supervisor.url) as client:
            asking = asyncio.create_task(stream(client, f"SLOW-GH {QUESTION}"))
            await asyncio.to_thread(state.wait_for, "gh-slow", len(state.hits("gh-slow")) + 1)
            agents["github"].kill()
            events = await asyncio.wait_for(asking, 60)
            partial = answer_text(await get_task(client, events[0].task.id))

            github_again = c.process("github", port=agents["github"].port, home="github")
            await github_again.ready()
            again = await stream(client, QUESTION)
            whole = answer_text(await get_task(client, again[0].task.id))

    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    assert "ARGOCD:" in partial
    assert "The github agent is unavailable: the connection was lost mid-answer" in partial
    assert "GITHUB:" in whole and "unavailable" not in whole


async def test_a_client_that_disconnects_cancels_the_run_and_is_logged_once(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
    github: RunningGitHubSandbox,
) -> None:
    state = model[1]
    async with cluster(tmp_path, model, argocd, github) as c:
        agent = await c.process("argocd").ready()
        async with a2a_client(agent.agent_url("argocd")) as client:
            request = SendMessageRequest(message=user_message("SLOW-ARGO: list the apps, please"))
            task_id = ""
            async with aclosing(client.send_message(request)) as events:
                async for event in events:
                    task_id = task_id or event.task.id
                    if event.HasField("artifact_update"):
                        break  # the answer has started streaming: go away
        async with a2a_client(agent.agent_url("argocd")) as client:
            task = await wait_state(client, task_id, TaskState.TASK_STATE_CANCELED, 20)
        await asyncio.sleep(1.5)  # time enough for a run that was not stopped to go on
        log = agent.log_text()

    assert task.status.state == TaskState.TASK_STATE_CANCELED
    [slow] = state.hits("argo-slow")[-1:]
    assert slow.aborted  # the model call in flight was abandoned, not finished
    assert not state.hits("argo-after-disconnect")  # and no further model call was made
    gone = [line for line in log.splitlines() if "went away" in line]
    assert len(gone) == 1 and task_id in gone[0]
    assert "Queue is closed" not in log and "Queue was closed" not in log


async def test_a_supervisor_restarted_mid_conversation_continues_it(
    tmp_path: Path, model: tuple[str, ScriptState], argocd: RunningSandbox,
    github: RunningGitHubSandbox,
) -> None:
    state = model[1]
    async with cluster(tmp_path, model, argocd, github) as c:
        agents = {"argocd": c.process("argocd")}
        supervisor = c.supervisor(agents)
        await asyncio.gather(agents["argocd"].ready(), supervisor.ready())
        async with a2a_client(supervisor.url) as client:
            first = await stream(client, "remember: my team is on call this week",
                                 context_id="restart-ctx")
            asking = asyncio.create_task(stream(client, "argocd only SLOW-ARGO",
                                                context_id="restart-ctx"))
            await asyncio.to_thread(state.wait_for, "argo-slow", len(state.hits("argo-slow")) + 1)
            supervisor.kill()  # mid-turn: the supervisor's ask_argocd call is left open
            await asyncio.gather(asking, return_exceptions=True)

        restarted = c.supervisor(agents, port=supervisor.port, home="supervisor")
        await restarted.ready()
        async with a2a_client(restarted.url) as client:
            earlier = await get_task(client, first[0].task.id)
            third = await stream(client, "where were we?", context_id="restart-ctx")

    assert answer_text(earlier) == "Noted."  # the task store survived the restart
    assert final_state(third) == TaskState.TASK_STATE_COMPLETED
    [recovered] = state.hits("sup-recovered")
    texts = [str(m.get("content")) for m in recovered.messages]
    assert "remember: my team is on call this week" in texts and "Noted." in texts
    assert any("interrupted before it returned" in t for t in texts)
