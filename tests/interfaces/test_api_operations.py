"""Agents and their health, probes, Prometheus metrics and the API description."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

import httpx
import pytest
from fastapi import FastAPI
from interfaces_support import TABLE_ANSWER, OpenAgent, in_process, new_conversation, parse_sse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pilothouse.a2a.server import a2a_app
from pilothouse.testing.scripted_model import tool_call


async def test_agents_lists_model_window_tools_and_health(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]))
    async with in_process(app) as client:
        agents = (await client.get("/agents")).json()["agents"]
        assert (await client.get("/healthz")).json()["status"] == "ok"
        ready = await client.get("/readyz")
    assert len(agents) == 1
    agent = agents[0]
    assert agent["name"] == "platform"
    assert agent["model"] == "openai:gpt-4"
    assert agent["window"] == 8192
    assert agent["tools"] == ["list_applications", "restart_application"]
    assert agent["health"]["status"] == "ok"
    assert ready.status_code == 200 and ready.json()["status"] == "ok"


async def test_metrics_count_requests_by_route_and_streamed_events_by_kind(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent([tool_call("list_applications"), TABLE_ANSWER]))
    async with in_process(app) as client:
        thread = await new_conversation(client)
        parse_sse((await client.post(f"/conversations/{thread}/ask",
                                     json={"question": "apps?"})).text)
        metrics = await client.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    text = metrics.text
    assert ('pilothouse_api_requests_total{method="POST",route="/conversations/{thread_id}/ask",'
            'status="200"} 1.0') in text
    assert 'pilothouse_api_stream_events_total{kind="tool_call"} 1.0' in text
    assert 'pilothouse_api_stream_events_total{kind="answer"} 1.0' in text
    assert "pilothouse_api_active_streams 0.0" in text
    assert "# TYPE pilothouse_context_actions_total counter" in text


async def test_openapi_and_docs_are_served_without_a_cdn(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]))
    async with in_process(app) as client:
        schema = (await client.get("/openapi.json")).json()
        docs = await client.get("/docs")
        bundle = await client.get("/docs-static/swagger-ui-bundle.js")
    ask = schema["paths"]["/conversations/{thread_id}/ask"]["post"]
    assert "text/event-stream" in ask["responses"]["200"]["content"]
    assert "bearer" in str(schema["components"]["securitySchemes"]).lower()
    assert {"/agents", "/healthz", "/readyz", "/metrics", "/conversations",
            "/conversations/{thread_id}/approvals",
            "/conversations/{thread_id}/pending"} <= set(schema["paths"])
    assert docs.status_code == 200
    assert "/docs-static/swagger-ui-bundle.js" in docs.text
    assert "cdn" not in docs.text.lower() and "https://" not in docs.text
    assert bundle.status_code == 200 and len(bundle.content) > 100_000


async def test_a_fallback_app_serves_the_paths_the_api_does_not(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    async def card(request: Request) -> JSONResponse:
        return JSONResponse({"name": "supervisor"})

    a2a = Starlette(routes=[Route("/.well-known/agent-card.json", card)])
    app = make_app(make_open_agent(["hi"]), fallback=a2a)
    async with in_process(app) as client:
        assert (await client.get("/.well-known/agent-card.json")).json() == {"name": "supervisor"}
        assert (await client.get("/healthz")).json()["status"] == "ok"
        assert (await client.get("/")).headers["content-type"].startswith("text/html")
        assert (await client.post("/conversations")).status_code == 201


async def test_an_unexpected_error_reaches_the_caller_as_a_reference_only(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(request: Request) -> JSONResponse:
        raise sqlite3.OperationalError("database is locked [SQL: INSERT INTO conversations]")

    api = make_app(make_open_agent(["hi"]))
    api.add_api_route("/broken", broken, methods=["POST"])
    # The A2A app of `serve` sits behind the API as its fallback: its failures read the same.
    behind = make_app(make_open_agent(["hi"]),
                      fallback=a2a_app([], extra_routes=[Route("/broken", broken,
                                                               methods=["POST"])]))
    for app in (api, behind):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=transport, base_url="http://127.0.0.1") as client:
            answer = await client.post("/broken")
        assert answer.status_code == 500
        reference = answer.headers["X-Error-Reference"]
        assert f"(reference {reference})" in answer.json()["error"]
        assert "SQL" not in answer.text and "sqlite" not in answer.text.lower()
        assert f"reference {reference}" in caplog.text
    assert "database is locked" in caplog.text
