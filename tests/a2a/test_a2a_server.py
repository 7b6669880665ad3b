"""An agent graph served over A2A, driven by the a2a-sdk client over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
from a2a.types.a2a_pb2 import TaskState
from a2a_harness import (
    ServeAgents,
    a2a_client,
    answer_text,
    final_state,
    get_task,
    status_text,
    stream,
)
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from pilothouse.agents.factory import AgentFactory
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup
from pilothouse.runtime.handle import AgentHandle
from pilothouse.testing.scripted_model import tool_call


@tool
def list_apps(health: str) -> str:
    """List applications by health status."""
    return json.dumps({"items": [{"name": "payments-api", "health": health}]})


@tool
def restart_app(name: str) -> str:
    """Restart an application (needs approval)."""
    return f"{name} restarted"


def served(settings: Settings, setup: ModelSetup, *, approvals: bool = False) -> AgentHandle:
    gates = {"restart_app": InterruptOnConfig(allowed_decisions=["approve", "reject"],
                                              description="Restart this application?")}
    toolkit = Toolkit(name="argocd", prompt="", tools=[list_apps, restart_app],
                      approvals=gates if approvals else {})
    return AgentFactory(settings, setup, InMemorySaver()).build(toolkit,
                                                                "Argo CD agent for tests.")


async def test_card_lists_one_skill_per_tool_at_both_well_known_paths(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    agent = served(make_settings(), scripted_setup(["hi"]))
    async with serve_agents(agent) as (url, _), httpx.AsyncClient() as http:
        root = (await http.get(f"{url}/.well-known/agent-card.json")).json()
        own = (await http.get(f"{url}/a2a/argocd/.well-known/agent-card.json")).json()

    assert root == own
    assert [s["id"] for s in own["skills"]] == ["list_apps", "restart_app"]
    assert own["capabilities"]["streaming"] is True
    bindings = {i["protocolBinding"]: i["url"] for i in own["supportedInterfaces"]}
    assert bindings == {"JSONRPC": f"{url}/a2a/argocd/", "HTTP+JSON": f"{url}/a2a/argocd/rest"}


async def test_a_turn_streams_progress_then_the_answer_then_completed(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    setup = scripted_setup([tool_call("list_apps", health="Degraded"),
                            "payments-api is degraded."])
    async with serve_agents(served(make_settings(), setup)) as (url, _), \
            a2a_client(f"{url}/a2a/argocd") as client:
        events = await stream(client, "which apps are degraded?")
        stored = await get_task(client, events[0].task.id)

    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task" and kinds[-1] == "status_update"
    assert final_state(events) == TaskState.TASK_STATE_COMPLETED
    # The answer artifact comes before the final status, as the SDK requires.
    assert kinds.index("artifact_update") < len(kinds) - 1
    progress = [status_text(e) for e in events if e.HasField("status_update")
                and e.status_update.status.state == TaskState.TASK_STATE_WORKING]
    assert "Calling list_apps" in progress
    assert any(p.startswith("list_apps returned") for p in progress)
    assert stored.status.state == TaskState.TASK_STATE_COMPLETED
    # The model's lead, then the tool's result as the tool gave it (runtime.answer_views).
    lead, result = answer_text(stored).split("\n\n", 1)
    assert lead == "payments-api is degraded." and "payments-api" in result


async def test_an_approval_becomes_input_required_and_the_next_message_answers_it(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    setup = scripted_setup([tool_call("restart_app", name="payments-api"),
                            "Restarted payments-api."])
    async with serve_agents(served(make_settings(), setup, approvals=True)) as (url, _), \
            a2a_client(f"{url}/a2a/argocd") as client:
        first = await stream(client, "restart payments-api", context_id="ctx-approve")
        task_id = first[0].task.id
        waiting = first[-1]
        unclear = await stream(client, "hmm?", context_id="ctx-approve", task_id=task_id)
        second = await stream(client, "approve", context_id="ctx-approve", task_id=task_id)
        stored = await get_task(client, task_id)

    assert final_state(first) == TaskState.TASK_STATE_INPUT_REQUIRED
    assert "Restart this application?" in status_text(waiting)
    assert "restart_app" in status_text(waiting) and "approve" in status_text(waiting)
    # Not a decision: still waiting, nothing ran.
    assert final_state(unclear) == TaskState.TASK_STATE_INPUT_REQUIRED
    assert final_state(second) == TaskState.TASK_STATE_COMPLETED
    results = [status_text(e) for e in second if e.HasField("status_update")]
    assert any(r.startswith("restart_app returned") for r in results)
    assert answer_text(stored) == "Restarted payments-api.\n\npayments-api restarted"


async def test_a_rejection_reaches_the_model_with_its_reason(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    setup = scripted_setup([tool_call("restart_app", name="payments-api"), "Not restarted."])
    async with serve_agents(served(make_settings(), setup, approvals=True)) as (url, _), \
            a2a_client(f"{url}/a2a/argocd") as client:
        first = await stream(client, "restart payments-api", context_id="ctx-reject")
        second = await stream(client, "reject: it is peak hour", context_id="ctx-reject",
                              task_id=first[0].task.id)

    assert final_state(second) == TaskState.TASK_STATE_COMPLETED
    sent = setup.chat_model.requests[-1].messages  # type: ignore[attr-defined]
    assert "it is peak hour" in str(sent[-1].content)


async def test_a_failed_run_ends_failed_with_what_to_do(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    # A key of the shape providers issue (the redactor matches shapes, not any "sk-" word).
    setup = scripted_setup([RuntimeError(
        "Error code: 401 - invalid api key sk-proj-Ab12Cd34Ef56Gh78Ij90")])
    async with serve_agents(served(make_settings(), setup)) as (url, _), \
            a2a_client(f"{url}/a2a/argocd") as client:
        events = await stream(client, "anything")

    assert final_state(events) == TaskState.TASK_STATE_FAILED
    text = status_text(events[-1])
    assert "rejected the credentials" in text and "What to do:" in text
    assert "sk-proj-Ab12Cd34Ef56Gh78Ij90" not in text


async def test_the_answer_budget_in_the_request_reaches_the_model(
    serve_agents: ServeAgents, scripted_setup: Callable[..., ModelSetup],
    make_settings: Callable[..., Settings],
) -> None:
    from a2a.types.a2a_pb2 import SendMessageRequest
    from a2a_harness import user_message

    setup = scripted_setup(["short answer"])
    async with serve_agents(served(make_settings(), setup)) as (url, _), \
            a2a_client(f"{url}/a2a/argocd") as client:
        request = SendMessageRequest(message=user_message("list everything"))
        request.metadata.update({"answer_budget_tokens": 120})
        [_ async for _ in client.send_message(request)]

    question = setup.chat_model.requests[0].messages[-1].content  # type: ignore[attr-defined]
    assert question.startswith("list everything") and "at most 120 tokens" in question
