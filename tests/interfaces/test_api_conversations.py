"""The conversation API end to end: real graph, real tools, real SQLite; only the model scripted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from interfaces_support import (
    RESTARTED,
    TABLE_ANSWER,
    OpenAgent,
    in_process,
    kinds,
    list_applications,
    new_conversation,
    parse_sse,
)

from pilothouse.runtime.subagent import subagent_thread
from pilothouse.testing.scripted_model import tool_call


def restart_script() -> list[Any]:
    return [
        tool_call("list_applications", project="payments"),
        TABLE_ANSWER,
        tool_call("restart_application", name="payments-api"),
        "Restarted payments-api; its 3 pods were replaced.",
    ]


async def test_ask_streams_tool_activity_and_the_answer_then_history_shows_it(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(restart_script()))
    async with in_process(app) as client:
        created = await client.post("/conversations", json={"title": "Payments check"})
        assert created.status_code == 201
        thread = created.json()["id"]

        response = await client.post(f"/conversations/{thread}/ask",
                                     json={"question": "Which apps are in payments?"})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(response.text)
        assert kinds(events) == ["tool_call", "tool_result", "answer", "done"]
        call, result = events[0], events[1]
        assert call["data"]["name"] == "list_applications"
        assert call["data"]["args"] == {"project": "payments"}
        assert '"payments-worker"' in result["text"] and result["data"]["status"] == "success"
        # The model's lead; its retyped table gives way to the tool's own result, verbatim.
        assert events[2]["text"] == ("Two applications in **payments**:\n\n"
                                     + list_applications.invoke({"project": "payments"}))

        history = (await client.get(f"/conversations/{thread}")).json()
        assert history["title"] == "Payments check"
        roles = [m["role"] for m in history["messages"]]
        assert roles == ["user", "assistant", "tool", "assistant"]
        assert history["messages"][1]["tool_calls"][0]["name"] == "list_applications"
        assert history["messages"][2]["chars"] == len(result["text"])
        assert history["pending"] == []

        listing = (await client.get("/conversations")).json()
        assert [c["id"] for c in listing["conversations"]] == [thread]
        assert listing["total"] == 1


async def test_an_approval_is_requested_then_approved_and_the_action_runs(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(restart_script()[2:]))
    async with in_process(app) as client:
        thread = await new_conversation(client)
        first = parse_sse((await client.post(f"/conversations/{thread}/ask",
                                             json={"question": "Restart payments-api"})).text)
        assert kinds(first) == ["tool_call", "interrupt", "done"]
        request = first[1]["data"]
        assert request["value"]["name"] == "restart_application"
        assert request["value"]["args"] == {"name": "payments-api"}
        assert "Restart this application" in request["value"]["description"]
        assert RESTARTED == [], "nothing runs before a person approves"

        pending = (await client.get(f"/conversations/{thread}/pending")).json()["pending"]
        assert [p["id"] for p in pending] == [request["id"]]
        blocked = await client.post(f"/conversations/{thread}/ask", json={"question": "hi"})
        assert blocked.status_code == 409 and "approvals" in blocked.json()["suggestion"]

        second = parse_sse((await client.post(
            f"/conversations/{thread}/approvals",
            json={"decision": "approve", "interrupt_id": request["id"]})).text)
        assert kinds(second) == ["tool_result", "answer", "done"]
        assert second[0]["text"] == "restarted payments-api: 3 pods replaced"
        assert RESTARTED == ["payments-api"]
        assert (await client.get(f"/conversations/{thread}/pending")).json() == {"pending": []}
        listed = (await client.get("/conversations")).json()["conversations"]
        assert listed[0]["title"] == "Restart payments-api"


async def test_a_rejection_reaches_the_agent_and_nothing_runs(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    seen: list[str] = []

    def acknowledge(messages: list[Any]) -> str:
        seen.append(str(messages[-1].content))
        return "Understood, I left payments-api running."

    app = make_app(make_open_agent([tool_call("restart_application", name="payments-api"),
                                    acknowledge]))
    async with in_process(app) as client:
        thread = await new_conversation(client)
        await client.post(f"/conversations/{thread}/ask",
                          json={"question": "Restart payments-api"})
        events = parse_sse((await client.post(f"/conversations/{thread}/approvals", json={
            "decision": "reject", "message": "Not during business hours."})).text)
    assert RESTARTED == []
    assert "Not during business hours." in seen[0]
    assert events[-2]["text"] == "Understood, I left payments-api running."


async def test_conversation_errors_are_json_with_a_suggestion(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["Hello."]))
    async with in_process(app) as client:
        missing = await client.get("/conversations/nope")
        assert missing.status_code == 404
        assert set(missing.json()) == {"error", "suggestion"}
        bad_id = await client.get("/conversations/bad id!")
        assert bad_id.status_code == 400 and "not a valid conversation id" in bad_id.json()["error"]
        empty = await client.post("/conversations/x/ask", json={"question": ""})
        assert empty.status_code == 422 and "question" in empty.json()["error"]
        idle = await new_conversation(client)
        nothing = await client.post(f"/conversations/{idle}/approvals",
                                    json={"decision": "approve"})
        assert nothing.status_code == 409 and "not waiting" in nothing.json()["error"]
        # An id nobody created: the same 404 as reading it, on every route (asking included).
        for method, path, body in (("POST", "/conversations/x/approvals", {"decision": "approve"}),
                                   ("POST", "/conversations/x/ask", {"question": "hi"}),
                                   ("GET", "/conversations/x/pending", None)):
            unknown = await client.request(method, path, json=body)
            assert unknown.status_code == 404, path
            assert unknown.json()["error"] == "There is no conversation x.", path
            assert "POST /conversations" in unknown.json()["suggestion"]
        unknown_route = await client.get("/nowhere")
        assert unknown_route.status_code == 404 and "/docs" in unknown_route.json()["suggestion"]


async def test_delete_forgets_the_conversation_and_its_messages(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["First answer."]))
    async with in_process(app) as client:
        gone = await new_conversation(client)
        await client.post(f"/conversations/{gone}/ask", json={"question": "hello"})
        assert (await client.get(f"/conversations/{gone}")).status_code == 200
        deleted = await client.delete(f"/conversations/{gone}")
        assert deleted.status_code == 204
        assert (await client.get(f"/conversations/{gone}")).status_code == 404
        assert (await client.get("/conversations")).json()["total"] == 0
        assert (await client.delete(f"/conversations/{gone}")).status_code == 404
        # Asking on it again does not bring it back.
        again = await client.post(f"/conversations/{gone}/ask", json={"question": "hello"})
        assert again.status_code == 404


async def test_delete_also_forgets_the_supervisors_threads_with_its_agents(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["First answer.", "Inner answer."]))
    async with in_process(app) as client:
        gone = await new_conversation(client)
        await client.post(f"/conversations/{gone}/ask", json={"question": "hello"})
        graph = app.state.runtime.graph
        # A sub-agent's thread as the supervisor leaves it: its own checkpoints, same store.
        inner = {"configurable": {"thread_id": subagent_thread("argocd", gone)}}
        await graph.ainvoke({"messages": [("user", "inner question")]}, inner)
        assert await graph.checkpointer.aget_tuple(inner) is not None
        assert (await client.delete(f"/conversations/{gone}")).status_code == 204
        assert await graph.checkpointer.aget_tuple(inner) is None
