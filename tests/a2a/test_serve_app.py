"""The app `pilothouse serve` builds, in process: agents chosen, REST API and A2A side by side."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack

import httpx
import pytest
from a2a.types.a2a_pb2 import TaskState
from a2a_harness import a2a_client, answer_text, final_state, get_task, serving, stream

from pilothouse.agents.registry import Topology
from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError
from pilothouse.interfaces.serve import agents_to_run, open_serve_app
from pilothouse.models.registry import ModelSetup

SUPERVISOR_KEY = "supervisor-key-0b4f8d2a6e1c5b9f3d7a"


def test_agents_to_run_defaults_to_local_specialists_plus_the_supervisor(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(
        ARGOCD_URL="http://argocd.example", GITHUB_TOKEN="t", PILOTHOUSE_AGENTS_TIMEOUT="30",
        PILOTHOUSE_AGENTS_GITHUB_URL="http://github:8080/a2a/github",
        PILOTHOUSE_AGENTS_GITHUB_KEY=SUPERVISOR_KEY)
    topology = Topology.from_settings(settings)

    assert topology.urls == {"github": "http://github:8080/a2a/github"}
    assert topology.keys == {"github": SUPERVISOR_KEY} and topology.timeout_seconds == 30
    assert topology.configured == {"argocd", "github"}  # no PILOTHOUSE_WORKSPACE: no devops
    assert agents_to_run(None, topology) == ["argocd", "supervisor"]  # github is remote
    assert agents_to_run(["github", "github"], topology) == ["github"]
    assert SUPERVISOR_KEY not in repr(settings) and SUPERVISOR_KEY in settings.secret_values()
    with pytest.raises(ConfigurationError, match="Unknown agent"):
        agents_to_run(["jenkins"], topology)
    with pytest.raises(ConfigurationError, match="not an http"):
        make_settings(PILOTHOUSE_AGENTS_ARGOCD_URL="argocd:8080")
    with pytest.raises(ConfigurationError, match="JENKINS_URL names no agent"):
        Topology.from_settings(make_settings(PILOTHOUSE_AGENTS_JENKINS_URL="http://j:8080"))


async def test_serve_puts_the_rest_api_at_the_root_and_a2a_beside_it(
    scripted_setup: Callable[..., ModelSetup], make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings()
    model = scripted_setup(["Nothing is configured yet."])

    async with AsyncExitStack() as stack:

        async def build(url: str) -> object:
            served = await stack.enter_async_context(open_serve_app(
                settings, public_url=url, agents=["supervisor"], topology=Topology(),
                model=model, api=True))
            return served.app

        async with serving(build) as url:
            async with httpx.AsyncClient() as http:
                health = await http.get(f"{url}/healthz")
                page = await http.get(f"{url}/")
                card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
            async with a2a_client(f"{url}/a2a/supervisor") as client:
                events = await stream(client, "what can you do?")
                task = await get_task(client, events[0].task.id)

    assert health.status_code == 200 and "text/html" in page.headers["content-type"]
    assert card["name"] == "supervisor"
    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    assert answer_text(task) == "Nothing is configured yet."
