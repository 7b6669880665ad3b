"""The agent factory: every agent it builds runs with every layer, from Settings."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from agent_layers import memory_guards, missing_layers, with_both_sandboxes

from pilothouse.agents.factory import AGENT_CHOICES, open_agent_factory, open_configured_agent
from pilothouse.agents.registry import Topology
from pilothouse.config import Settings
from pilothouse.errors import UserInputError
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import Answer, TurnFailed
from pilothouse.runtime.session import Conversation
from pilothouse.sizes import GIB


def test_agent_accepts_every_specialist_and_the_supervisor() -> None:
    assert set(AGENT_CHOICES) == {"auto", "argocd", "github", "devops", "supervisor"}


async def test_every_agent_a_person_can_choose_has_every_layer_and_one_memory_budget(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    with with_both_sandboxes(make_settings, PILOTHOUSE_MEMORY_LIMIT="3GiB") as settings:
        topology = Topology(configured=frozenset({"argocd", "github"}))
        async with open_agent_factory(settings, model=scripted_setup(["ok"]),
                                      topology=topology) as factory:
            agents = {}
            for choice in ("auto", "argocd", "github", "supervisor"):
                async with factory.open_agent(choice) as agent:
                    agents[choice] = agent

    assert {choice: agent.name for choice, agent in agents.items()} == {
        "auto": "argocd", "argocd": "argocd", "github": "github", "supervisor": "supervisor"}
    assert {choice: missing_layers(agent, approvals=choice in ("auto", "argocd"))
            for choice, agent in agents.items()} == {choice: set() for choice in agents}
    # One budget for the process, from PILOTHOUSE_MEMORY_LIMIT; its guard goes first.
    guards = [guard for agent in agents.values() for guard in memory_guards(agent)]
    assert len(guards) == len(agents) and {id(g.budget) for g in guards} == {id(factory.memory)}
    assert factory.memory.limit_bytes == 3 * GIB
    assert all(agent.middleware[0] is memory_guards(agent)[0] for agent in agents.values())
    # The supervisor asks the specialists it opened for itself.
    assert [t.name for t in agents["supervisor"].tools] == ["ask_argocd", "ask_github"]


async def test_without_argo_cd_auto_is_the_general_assistant_with_every_layer(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    async with open_configured_agent(make_settings(), model=scripted_setup(["hi"])) as agent:
        assert agent.name == "pilothouse" and agent.tools == []
        assert missing_layers(agent) == set()


async def test_the_memory_guard_refuses_a_turn_over_the_budget_and_says_what_to_do(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    # 16 MiB is the smallest budget Settings accepts, and any Python process is above it.
    settings = make_settings(PILOTHOUSE_MEMORY_LIMIT="16MiB")
    async with open_configured_agent(settings, model=scripted_setup(["never sent"])) as agent:
        events = [e async for e in Conversation(agent.graph, "m-1").ask("hello")]

    errors = [e for e in events if isinstance(e, TurnFailed)]
    assert len(errors) == 1 and "near its memory budget" in errors[0].message
    assert "PILOTHOUSE_MEMORY_LIMIT" in str(errors[0].suggestion)
    assert not [e for e in events if isinstance(e, Answer)]


async def test_the_memory_monitor_samples_at_the_configured_interval_while_the_factory_is_open(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
) -> None:
    settings = make_settings(PILOTHOUSE_MEMORY_SAMPLE_SECONDS="0.5")
    async with open_agent_factory(settings, model=scripted_setup([])) as factory:
        monitor = factory.monitor
        assert monitor is not None and monitor.interval == 0.5
        for _ in range(200):
            if monitor.last is not None:
                break
            await asyncio.sleep(0.01)
        assert monitor.last is not None and monitor.last.limit == factory.memory.limit_bytes
        running = [t for t in asyncio.all_tasks() if t.get_name() == "pilothouse-memory-monitor"]
        assert len(running) == 1
    assert running[0].done()


async def test_an_unknown_agent_is_refused_before_anything_opens(
    make_settings: Callable[..., Settings],
) -> None:
    with pytest.raises(UserInputError, match="Unknown agent 'jenkins'") as refused:
        async with open_configured_agent(make_settings(), agent="jenkins"):
            pass
    assert "github" in (refused.value.hint or "")
