"""Evidence-bound approvals for rollbacks and resource actions, the same gate as syncs.

Scripted model -> real MCP stdio server -> sandbox Argo CD over HTTP. The model asks for the
real change directly; the prompt must show the plan code computed (target revision, commit,
auto-sync step, diff; or the action and the live object), and a change of the sandbox between
the prompt and the approval (a new commit deployed) must stop it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.argocd import open_argocd_toolkit
from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.grounded_args import mentioned
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.events import ApprovalRequest, ToolResult
from pilothouse.runtime.session import Conversation
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.sandbox.argocd.server import RunningSandbox, running_sandbox
from pilothouse.testing.scripted_model import tool_call
from pilothouse.tools.mcp_connect import call_for_payload

APPS = [Fleet().app(i) for i in range(120)]
DEGRADED_AUTO = [a for a in APPS if a.health == "Degraded" and a.auto_sync]
HEALTHY = [a for a in APPS if a.sync == "Synced" and a.health == "Healthy"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(apps=120, operation_seconds=0.2) as running:
        yield running


@pytest.fixture
def writable(sandbox: RunningSandbox, make_settings: Callable[..., Settings]) -> Settings:
    return dataclasses.replace(make_settings(MAX_CONTEXT_TOKENS="32000"), argocd_url=sandbox.url,
                               argocd_token=sandbox.token, argocd_read_only=False)


async def last_tool_payload(conversation: Conversation) -> dict[str, Any]:
    message = [m for m in await conversation.history() if isinstance(m, ToolMessage)][-1]
    if isinstance(message.artifact, dict):
        return message.artifact
    return dict(json.loads(str(message.content)))


def deploy_behind_the_back(sandbox: RunningSandbox, name: str) -> None:
    response = httpx.post(f"{sandbox.url}/_sandbox/applications/{name}/deploy", json={},
                          headers={"Authorization": f"Bearer {sandbox.token}"})
    assert response.status_code == 200


async def ask(toolkit: Toolkit, writable: Settings,
              scripted_setup: Callable[..., ModelSetup], call: Any,
              thread: str, question: str | None = None) -> tuple[Conversation, list[Any]]:
    setup = scripted_setup([call, "Done."], window=32_000, settings=writable)
    graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
    conversation = Conversation(graph, thread)
    # The person names the app: a change of an app nobody named is asked again, never made.
    question = question or f"please do it for {call.tool_calls[0]['args']['name']}"
    return conversation, [e async for e in conversation.ask(question)]


async def test_a_rollback_is_approved_on_the_plan_code_computed(
        sandbox: RunningSandbox, writable: Settings,
        scripted_setup: Callable[..., ModelSetup]) -> None:
    app = DEGRADED_AUTO[0].name
    async with open_argocd_toolkit(writable) as toolkit:
        conversation, first = await ask(
            toolkit, writable, scripted_setup,
            tool_call("rollback_application", name=app, dry_run=False, approved=True,
                      expected_evidence="forged"), "rollback-ok")
        prompt = next(e for e in first if isinstance(e, ApprovalRequest)).value["description"]
        rest = [e async for e in conversation.decide({"type": "approve"})]
        done = await last_tool_payload(conversation)
    assert not any(isinstance(e, ToolResult) for e in first), "nothing ran before approval"
    assert f"Roll back application '{app}'" in prompt
    assert "disable auto-sync" in prompt and "Target commit" in prompt
    assert "DB_POOL_SIZE" in prompt  # the diff it would apply
    assert next(e for e in rest if isinstance(e, ToolResult)).status == "success"
    assert done["dry_run"] is False and done["auto_sync_disabled"] is True
    assert done["evidence"] in prompt and done["health"]["health"] == "Healthy"


@pytest.mark.parametrize(("tool", "extra", "nothing"), [
    ("rollback_application", {}, "Nothing was rolled back"),
    ("run_resource_action", {"kind": "Deployment", "action": "scale", "replicas": 4},
     "Nothing was run"),
])
async def test_a_change_whose_evidence_changed_after_the_prompt_does_not_run(
        sandbox: RunningSandbox, writable: Settings, scripted_setup: Callable[..., ModelSetup],
        tool: str, extra: dict[str, Any], nothing: str) -> None:
    record = DEGRADED_AUTO[1] if tool == "rollback_application" else HEALTHY[3]
    args = {"name": record.name, "dry_run": False, **extra}
    if tool == "run_resource_action":
        args["resource_name"] = f"{record.team}-{record.service}"
    async with open_argocd_toolkit(writable) as toolkit:
        # An action must be the person's word (one copied from an example is dropped).
        conversation, first = await ask(toolkit, writable, scripted_setup,
                                        tool_call(tool, **args), f"changed-{tool}",
                                        f"please {extra['action']} {record.name} to 4 "
                                        "replicas" if "action" in extra else None)
        prompt = next(e for e in first if isinstance(e, ApprovalRequest)).value["description"]
        deploy_behind_the_back(sandbox, record.name)
        rest = [e async for e in conversation.decide({"type": "approve"})]
        refused = await last_tool_payload(conversation)
    assert "Evidence " in prompt
    assert next(e for e in rest if isinstance(e, ToolResult)).status == "error"
    assert refused["kind"] == "EvidenceChanged" and nothing in refused["error"]
    assert refused["dry_run"]["evidence"] not in prompt  # the new evidence, to ask again


async def test_an_invented_deploy_id_is_dropped_and_a_given_one_kept(
        sandbox: RunningSandbox, writable: Settings,
        scripted_setup: Callable[..., ModelSetup]) -> None:
    record = DEGRADED_AUTO[2]
    async with open_argocd_toolkit(writable) as toolkit:
        history = next(t for t in toolkit.tools if t.name == "get_application_history")
        deploys = (await call_for_payload(history, {"name": record.name}))["items"]
        older = deploys[-1]["id"]  # the oldest deploy, not the default (the previous one)
        invented = tool_call("rollback_application", name=record.name, history_id=1,
                             dry_run=False)
        _, events = await ask(toolkit, writable, scripted_setup, invented,
                              "invented-id")
        given = tool_call("rollback_application", name=record.name, history_id=older,
                          dry_run=False)
        setup = scripted_setup([given, "Done."], window=32_000, settings=writable)
        graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
        named = [e async for e in Conversation(graph, "given-id").ask(
            f"roll {record.name} back to deploy {older}")]

    # "please do it for <app>" gave no id: the call went on without one (the default plan).
    [prompt] = [e.value["description"] for e in events if isinstance(e, ApprovalRequest)]
    assert f"to deploy {deploys[1]['id']} " in prompt
    notes = [e.action.detail for e in events if getattr(e, "action", None) is not None]
    assert any("dropped history_id=1" in n for n in notes)
    [prompt] = [e.value["description"] for e in named if isinstance(e, ApprovalRequest)]
    assert f"to deploy {older} " in prompt


def test_an_id_counts_as_given_only_as_a_whole_number() -> None:
    said = [HumanMessage("Roll back search-ranker-production-eu-west-1 (chart v1.2) to deploy 52.")]
    assert mentioned(52, said)
    assert not mentioned(1, said) and not mentioned(2, said)


def test_a_label_selector_counts_as_given_when_each_of_its_values_was_said() -> None:
    said = [HumanMessage("Which Frontend apps outside dev are failing?")]
    assert mentioned("tier=frontend,env!=dev", said)
    assert not mentioned("tier=frontend,env=staging", said)
    assert not mentioned("app=app1,app=app2", said)


async def test_the_person_s_words_settle_the_app_and_whether_it_is_a_preview(
        sandbox: RunningSandbox, writable: Settings,
        scripted_setup: Callable[..., ModelSetup]) -> None:
    record = DEGRADED_AUTO[3]
    # The model names a few-shot example's app, and previews what the person asked to do...
    asked = tool_call("rollback_application", name="checkout-web-production", dry_run=True)
    # ...or makes the change the person asked only to see.
    previewed = tool_call("rollback_application", name=record.name, dry_run=False)
    async with open_argocd_toolkit(writable) as toolkit:
        # The change stops for approval after its call; the preview runs its call and answers.
        setup = scripted_setup([asked, previewed, "That is the plan."], window=32_000,
                               settings=writable)
        graph = AgentFactory(writable, setup, InMemorySaver()).build(toolkit).graph
        change = [e async for e in Conversation(graph, "change").ask(
            f"Roll back {record.name} to the previous version")]
        preview = [e async for e in Conversation(graph, "preview").ask(
            f"What would a rollback of {record.name} change? Do not do it yet.")]

    [prompt] = [e.value["description"] for e in change if isinstance(e, ApprovalRequest)]
    assert record.name in prompt
    notes = [e.action.detail for e in change if getattr(e, "action", None) is not None]
    assert any(f"set name={record.name}, dry_run=False" in n for n in notes), notes
    assert not [e for e in preview if isinstance(e, ApprovalRequest)]
    [result] = [e for e in preview if isinstance(e, ToolResult)]
    assert result.status == "success" and "dry run, nothing changed" in result.preview
