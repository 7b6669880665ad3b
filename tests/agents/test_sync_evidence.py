"""Evidence-bound sync approvals: the prompt shows the dry run code ran, checked before syncing.

Scripted model -> real MCP stdio server -> sandbox Argo CD over HTTP. The model asks for a real
sync directly (the dry run never chosen by it); the approval must still show what would change,
and a change of the cluster between the prompt and the approval must stop the sync.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import ApprovalRequest, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.mcp_connect import call_for_payload


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    # Operations end at once, so a sync made behind the agent's back settles before approval.
    with running_sandbox(apps=60, operation_seconds=0.0) as running:
        yield running


def drifted(sandbox: RunningSandbox, skip: int) -> str:
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    items = httpx.get(f"{sandbox.url}/api/v1/applications", headers=headers).json()["items"]
    names = [a["metadata"]["name"] for a in items if a["status"]["sync"]["status"] == "OutOfSync"]
    return names[skip]


async def tool_answer(conversation: Conversation) -> dict[str, Any]:
    """The whole stored result of the last tool call (events carry only a preview)."""
    last = [m for m in await conversation.history() if isinstance(m, ToolMessage)][-1]
    assert isinstance(last.artifact, dict)
    return dict(last.artifact)


@pytest.fixture
def writable(sandbox: RunningSandbox, make_settings: Callable[..., Settings]) -> Settings:
    return dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"), argocd_url=sandbox.url,
                               argocd_token=sandbox.token, argocd_read_only=False)


async def test_a_direct_real_sync_is_approved_on_the_dry_run_code_computed(
    sandbox: RunningSandbox, writable: Settings, scripted_setup: Callable[..., ModelSetup],
) -> None:
    app = drifted(sandbox, 0)
    async with open_argocd_toolkit(writable) as toolkit:
        # The model skips the dry run and claims approval and evidence itself.
        setup = scripted_setup([tool_call("sync_application", name=app, dry_run=False,
                                          approved=True, expected_evidence="forged"), "Done."],
                               window=32_000, settings=writable)
        graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, "evidence-direct")
        first = [e async for e in conversation.ask(f"sync {app} now")]
        prompt = next(e for e in first if isinstance(e, ApprovalRequest)).value["description"]
        dry_run = await call_for_payload(
            next(t for t in toolkit.tools if t.name == "sync_application"), {"name": app})
        rest = [e async for e in conversation.decide({"type": "approve"})]
        synced = await tool_answer(conversation)

    stops = [type(e) for e in first if isinstance(e, ApprovalRequest | ToolResult)]
    assert stops == [ApprovalRequest], "nothing ran before the approval"
    assert f"Sync application '{app}'" in prompt
    assert f"Target revision: {dry_run['revision']}" in prompt
    assert f"{dry_run['changes']} resource(s) would change" in prompt
    for resource in dry_run["resources"]:
        assert f"{resource['kind']} {resource['namespace']}/{resource['name']}" in prompt
    assert f"Evidence {dry_run['evidence']}" in prompt
    # The lines that would change, as a diff every interface colours.
    assert "```diff" in prompt and dry_run["diffs"][0]["diff"].splitlines()[0] in prompt
    assert next(e for e in rest if isinstance(e, ToolResult)).status == "success"
    assert synced["dry_run"] is False
    assert synced["evidence"] == dry_run["evidence"]


async def test_a_sync_whose_dry_run_changed_after_the_prompt_does_not_run(
    sandbox: RunningSandbox, writable: Settings, scripted_setup: Callable[..., ModelSetup],
) -> None:
    app = drifted(sandbox, 1)
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    async with open_argocd_toolkit(writable) as toolkit:
        setup = scripted_setup([tool_call("sync_application", name=app, dry_run=False),
                                "Asked again."], window=32_000, settings=writable)
        graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
        conversation = Conversation(graph, "evidence-changed")
        first = [e async for e in conversation.ask(f"sync {app}")]
        assert any(isinstance(e, ApprovalRequest) for e in first)
        # Someone else syncs the application while the prompt waits: nothing is left to change.
        async with httpx.AsyncClient() as http:
            behind = await http.post(f"{sandbox.url}/api/v1/applications/{app}/sync",
                                     headers=headers, json={"name": app, "dryRun": False})
        assert behind.status_code == 200
        rest = [e async for e in conversation.decide({"type": "approve"})]
        refused = await tool_answer(conversation)

    assert next(e for e in rest if isinstance(e, ToolResult)).status == "error"
    assert refused["kind"] == "EvidenceChanged"
    assert "Nothing was synced" in refused["error"] and refused["dry_run"]["changes"] == 0


async def test_a_real_sync_without_a_dry_run_is_never_offered_for_approval(
    sandbox: RunningSandbox, writable: Settings, scripted_setup: Callable[..., ModelSetup],
) -> None:
    async with open_argocd_toolkit(writable) as toolkit:
        setup = scripted_setup([tool_call("sync_application", name="no-such-app",
                                          dry_run=False), "Could not."],
                               window=32_000, settings=writable)
        graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
        events = [e async for e in Conversation(graph, "evidence-none").ask("sync no-such-app")]

    assert not any(isinstance(e, ApprovalRequest) for e in events)
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.status == "error" and "Nothing was synced" in result.preview
