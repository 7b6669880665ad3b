"""SSE over real HTTP with the supervisor: sub-agents' tool calls nested, their approvals real.

The supervisor's `ask_<agent>` call is what its own graph sees; what the sub-agent did inside
it (list_applications, run_command) reaches the stream as `tool_call`/`tool_result` frames
whose `data` names the parent call (`parent_id`) and the agent. A sub-agent's approval carries
the sub-agent's real pending call (`subagent_calls`), not just the question passed on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from interfaces_support import kinds, new_conversation, on_socket, parse_sse
from ui_support import (
    APPS_VIEW,
    COMMANDS_RUN,
    RESTART,
    served_model_settings,
    supervisor_agent,
)

from pilothouse.config import Settings
from pilothouse.models.registry import ModelSetup, setup_model
from pilothouse.testing.scripted_model import tool_call
from pilothouse.testing.scripted_server import running_scripted_server


async def stream(client: httpx.AsyncClient, path: str,
                 body: dict[str, Any]) -> list[dict[str, Any]]:
    response = await client.post(path, json=body)
    assert response.status_code == 200, response.text
    return parse_sse(response.text)


async def test_sub_agent_calls_are_nested_and_approvals_show_the_real_command(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    make_app: Callable[..., FastAPI], tmp_path: Path,
) -> None:
    open_agent = supervisor_agent(
        make_settings(), tmp_path,
        # The first question names Argo CD: it is asked without a model call.
        supervisor=scripted_setup([tool_call("ask_devops", question="Restart payments-api")]),
        argocd=scripted_setup([tool_call("list_applications", project="payments"),
                               "payments-api is Degraded."]),
        devops=scripted_setup([tool_call("run_command", command=RESTART),
                               "payments-api was restarted."]))
    with on_socket(make_app(open_agent)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            thread = await new_conversation(client)
            first = await stream(client, f"/conversations/{thread}/ask",
                                 {"question": "Which apps are in payments?"})
            second = await stream(client, f"/conversations/{thread}/ask",
                                  {"question": "Restart payments-api"})
            [interrupt] = [e for e in second if e["kind"] == "interrupt"]
            assert COMMANDS_RUN == []
            third = await stream(client, f"/conversations/{thread}/approvals",
                                 {"decision": "approve", "interrupt_id": interrupt["data"]["id"]})

    # 1. The sub-agent's call sits under the supervisor's, in order, and says whose it is.
    assert kinds(first) == ["tool_call", "tool_call", "tool_result", "tool_result", "answer",
                            "done"]
    ask, inner_call, inner_result, ask_result = first[:4]
    assert ask["data"]["name"] == "ask_argocd" and "parent_id" not in ask["data"]
    assert inner_call["data"] == {"id": inner_call["data"]["id"], "name": "list_applications",
                                  "args": {"project": "payments"},
                                  "parent_id": ask["data"]["id"], "agent": "argocd"}
    assert inner_result["data"]["parent_id"] == ask["data"]["id"]
    assert inner_result["data"]["id"] == inner_call["data"]["id"]
    assert inner_result["data"]["agent"] == "argocd"
    assert inner_result["text"] == APPS_VIEW
    assert ask_result["data"]["id"] == ask["data"]["id"] and "parent_id" not in ask_result["data"]

    # 2. The approval names the real command, where it runs and why, and the asking call.
    asked = next(e for e in second if e["kind"] == "tool_call")
    value = interrupt["data"]["value"]
    assert value["name"] == "ask_devops" and value["agent"] == "devops"
    assert value["tool_call_id"] == asked["data"]["id"]
    [call] = value["subagent_calls"]
    assert (call["name"], call["args"]) == ("run_command", {"command": RESTART})
    assert f"command: {RESTART}" in call["description"]
    assert f"working directory: {tmp_path}" in call["description"]
    assert "changes the cluster" in call["description"]
    nested = [e for e in second if e["kind"] == "tool_call" and e["data"].get("parent_id")]
    assert [e["data"]["name"] for e in nested] == ["run_command"]

    # 3. Approved: the command ran once, and its result is nested under ask_devops too.
    assert COMMANDS_RUN == [RESTART]
    results = [e for e in third if e["kind"] == "tool_result"]
    assert [(e["data"]["name"], e["data"].get("agent")) for e in results] == [
        ("run_command", "devops"), ("ask_devops", None)]
    assert results[0]["data"]["parent_id"] == asked["data"]["id"]
    assert "payments-api was restarted." in next(
        e["text"] for e in third if e["kind"] == "answer")


async def test_a_second_approval_of_the_same_sub_agent_also_shows_its_real_call(
    make_settings: Callable[..., Settings], scripted_setup: Callable[..., ModelSetup],
    make_app: Callable[..., FastAPI], tmp_path: Path,
) -> None:
    """The supervisor asks again for the sub-agent's next approval; it is read from the
    sub-agent's own pending state, so it shows the real call as the first one did."""
    second_command = "kubectl rollout restart deployment/payments-worker -n payments"
    open_agent = supervisor_agent(
        make_settings(), tmp_path,
        # "Restart both" names DevOps: the first ask is made without a model call.
        supervisor=scripted_setup([tool_call("ask_devops", question="Restart the worker too"),
                                   "Both were restarted."]),
        argocd=scripted_setup(["unused"]),
        devops=scripted_setup([tool_call("run_command", command=RESTART),
                               tool_call("run_command", command=second_command),
                               "Both were restarted."]))
    with on_socket(make_app(open_agent)) as url:
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            thread = await new_conversation(client)
            first = await stream(client, f"/conversations/{thread}/ask",
                                 {"question": "Restart both"})
            [one] = [e for e in first if e["kind"] == "interrupt"]
            second = await stream(client, f"/conversations/{thread}/approvals",
                                  {"decision": "approve", "interrupt_id": one["data"]["id"]})
            [two] = [e for e in second if e["kind"] == "interrupt"]

    assert [c["args"]["command"] for c in one["data"]["value"]["subagent_calls"]] == [RESTART]
    assert [c["args"]["command"] for c in two["data"]["value"]["subagent_calls"]] == [
        second_command]
    assert COMMANDS_RUN == [RESTART]


#: The Argo CD agent's model on the scripted server: a tool call, then an answer word by word.
ARGOCD_STREAMING = {"rules": [
    {"name": "list", "when": {"last_role": "user"},
     "reply": {"tool_calls": [{"name": "list_applications",
                               "arguments": {"project": "payments"}}]}},
    {"name": "answer", "when": {"last_role": "tool"},
     "reply": {"content": "payments-api is Degraded in payments.", "chunk_delay": 0.01}},
]}


async def test_a_sub_agents_answer_streams_as_tokens_under_its_call(
    scripted_setup: Callable[..., ModelSetup], make_app: Callable[..., FastAPI],
    tmp_path: Path, home: Path,
) -> None:
    with running_scripted_server(ARGOCD_STREAMING) as (model_url, _state):
        streamed = setup_model(served_model_settings(home, model_url))
        open_agent = supervisor_agent(
            served_model_settings(home, model_url), tmp_path,
            supervisor=scripted_setup([]),  # asked without a model call: names Argo CD
            argocd=streamed, devops=scripted_setup(["unused"]))
        with on_socket(make_app(open_agent)) as url:
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                thread = await new_conversation(client)
                events = await stream(client, f"/conversations/{thread}/ask",
                                      {"question": "Which apps are in payments?"})

    ask = events[0]
    tokens = [e for e in events if e["kind"] == "token"]
    assert tokens, kinds(events)
    assert {(e["data"]["parent_id"], e["data"]["agent"]) for e in tokens} == {
        (ask["data"]["id"], "argocd")}
    assert "".join(e["text"] for e in tokens) == "payments-api is Degraded in payments."
    # All of them before the ask_argocd call returned; the answer carries the final text.
    returned = next(i for i, e in enumerate(events)
                    if e["kind"] == "tool_result" and e["data"]["id"] == ask["data"]["id"])
    assert max(events.index(e) for e in tokens) < returned
    [answer] = [e for e in events if e["kind"] == "answer"]
    assert answer["text"].startswith("payments-api is Degraded in payments.")
    assert answer["data"]["streamed"] is False  # the supervisor's own model wrote nothing
