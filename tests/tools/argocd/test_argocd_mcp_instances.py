"""Several Argo CD instances: an `instance` argument on every tool, fan-out lists and searches
with a per-instance breakdown, and a dead instance reported while the others answer."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from argocd_harness import Tools
from mcp import Client

from pilothouse.config import ArgoCDInstance, Settings
from pilothouse.errors import ConfigurationError
from pilothouse.sandbox.argocd import FleetSpec, RunningSandbox, running_sandbox
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.tools.argocd.connection import settings_env
from pilothouse.tools.argocd.server import build_argocd_server

STAGING = FleetSpec(apps=25, seed=7)


@pytest.fixture(scope="module")
def main_fleet() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=40) as running:
        yield running


@pytest.fixture(scope="module")
def staging_fleet() -> Iterator[RunningSandbox]:
    with running_sandbox(STAGING) as running:
        yield running


def dead_url() -> str:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture
def several(main_fleet: RunningSandbox, staging_fleet: RunningSandbox,
            tmp_path: Path) -> Settings:
    return Settings(argocd_url=main_fleet.url, argocd_token=main_fleet.token, home=tmp_path,
                    argocd_timeout_seconds=5,
                    argocd_instances=(
                        ArgoCDInstance("staging", staging_fleet.url, token=staging_fleet.token),
                        ArgoCDInstance("eu", dead_url(), token=main_fleet.token)))


async def test_every_tool_takes_an_instance(several: Settings) -> None:
    async with Client(build_argocd_server(several), mode="legacy") as client:
        tools = (await client.list_tools()).tools
    for tool in tools:
        described = tool.input_schema["properties"]["instance"]["description"]
        assert "default, staging, eu" in described, tool.name


async def test_a_list_runs_on_every_instance_and_reports_the_dead_one(
        several: Settings) -> None:
    async with Client(build_argocd_server(several), mode="legacy") as client:
        tools = Tools(client)
        answer = await tools("list_applications", page_size=5)
    by_instance = answer.payload["instances"]
    assert by_instance["default"] == {"total_items": 40}
    assert by_instance["staging"] == {"total_items": 25}
    assert "error" in by_instance["eu"] and not answer.is_error
    assert answer.payload["pagination"]["total_items"] == 65
    assert {row["instance"] for row in answer.payload["items"]} == {"default", "staging"}
    assert len(answer.payload["items"]) == 10  # one page of 5 per live instance
    assert "eu: unreachable" in answer.text and "65" in answer.text


async def test_one_instance_is_asked_alone_and_errors_name_it(several: Settings) -> None:
    app = Fleet(STAGING).app(5).name
    async with Client(build_argocd_server(several), mode="legacy") as client:
        tools = Tools(client)
        there = await tools("get_application", name=app, instance="staging")
        search = await tools("search_argocd_resources", query="payments", instance="staging")
        dead = await tools("get_application", name=app, instance="eu")
        unknown = await tools("list_clusters", instance="mars")
    assert there.payload["name"] == app
    assert "instances" not in search.payload  # one instance: its own answer, unchanged
    assert dead.is_error and "Argo CD instance 'eu'" in dead.payload["error"]
    assert unknown.is_error and "default, staging, eu" in unknown.payload["suggestion"]


def test_instances_come_from_the_environment_and_reach_the_child(tmp_path: Path) -> None:
    env = {"ARGOCD_URL": "http://127.0.0.1:9", "ARGOCD_INSTANCES": "staging,eu-prod",
           "ARGOCD_STAGING_URL": "http://127.0.0.1:10", "ARGOCD_STAGING_TOKEN": "a.b.c",
           "ARGOCD_EU_PROD_URL": "http://127.0.0.1:11", "ARGOCD_EU_PROD_VERIFY_SSL": "false",
           "PILOTHOUSE_HOME": str(tmp_path)}
    settings = Settings.from_env(env)
    assert [(i.name, i.url) for i in settings.argocd_instances] == [
        ("staging", "http://127.0.0.1:10"), ("eu-prod", "http://127.0.0.1:11")]
    assert "a.b.c" not in repr(settings.argocd_instances)
    child = settings_env(settings)
    assert {k: child[k] for k in env if k.startswith("ARGOCD_") and k != "ARGOCD_URL"} == {
        k: v for k, v in env.items() if k.startswith("ARGOCD_") and k != "ARGOCD_URL"}
    assert Settings.from_env({**env, "PILOTHOUSE_HOME": str(tmp_path)}).argocd_instances == \
        Settings.from_env(child | {"PILOTHOUSE_HOME": str(tmp_path)}).argocd_instances
    with pytest.raises(ConfigurationError) as missing:
        Settings.from_env({"ARGOCD_INSTANCES": "staging"})
    assert "ARGOCD_STAGING_URL" in missing.value.message
