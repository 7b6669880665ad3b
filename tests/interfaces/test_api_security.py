"""Who may call the API, how big a request may be, and which origins may call it."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI
from interfaces_support import OpenAgent, in_process

from pilothouse.errors import ConfigurationError

FIRST, SECOND = "first-key-8d2f6b0a4c9e3a7f1d5b6c", "second-key-3e7a1c5f9b2d6e0a4c8f2"


def test_without_keys_the_api_refuses_to_listen_beyond_this_machine(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        make_app(make_open_agent(["hi"]), bind_host="0.0.0.0")
    assert "127.0.0.1" in refused.value.message
    assert refused.value.hint is not None and "PILOTHOUSE_API_KEYS" in refused.value.hint
    # With keys, any address is allowed.
    make_app(make_open_agent(["hi"]), bind_host="0.0.0.0", api_keys=[FIRST])


def test_without_keys_a_startup_line_says_requests_are_local_only(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="pilothouse.api"):
        make_app(make_open_agent(["hi"]), bind_host="127.0.0.1")
    assert any("No API keys configured" in r.getMessage() and "127.0.0.1" in r.getMessage()
               for r in caplog.records)


async def test_keys_are_required_and_checked(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]), api_keys=[FIRST, SECOND])
    async with in_process(app) as client:
        missing = await client.get("/conversations")
        assert missing.status_code == 401
        assert missing.json()["error"] == "Missing API key."
        assert "Authorization: Bearer" in missing.json()["suggestion"]
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = await client.get("/conversations", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json()["error"] == "Invalid API key."
        for key in (FIRST, SECOND):
            ok = await client.get("/conversations", headers={"Authorization": f"Bearer {key}"})
            assert ok.status_code == 200
        agents = await client.get("/agents")
        assert agents.status_code == 401
        # Probes, the page and the API description stay open: they hold no conversation data.
        for path in ("/healthz", "/readyz", "/", "/openapi.json", "/static/app.js"):
            assert (await client.get(path)).status_code == 200, path


async def test_without_keys_requests_from_other_machines_are_refused(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            refused = await client.get("/conversations")
    assert refused.status_code == 403
    assert "PILOTHOUSE_API_KEYS" in refused.json()["suggestion"]


async def test_request_bodies_over_the_limit_get_413(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    app = make_app(make_open_agent(["hi"]), max_body_bytes=1_000)
    async with in_process(app) as client:
        declared = await client.post("/conversations/big/ask", json={"question": "x" * 2_000})
        assert declared.status_code == 413
        assert declared.json()["error"] == "The request body is larger than 1,000 bytes."
        assert "PILOTHOUSE_API_MAX_BODY_BYTES" in declared.json()["suggestion"]

        async def chunks() -> AsyncIterator[bytes]:  # chunked: no Content-Length to trust
            yield b'{"question": "'
            for _ in range(10):
                yield b"y" * 200
            yield b'"}'

        chunked = await client.post("/conversations/big/ask", content=chunks(),
                                    headers={"Content-Type": "application/json"})
        assert chunked.status_code == 413
        small = await client.post("/conversations", json={"title": "fits"})
        assert small.status_code == 201


async def test_cors_is_off_by_default_and_on_for_configured_origins(
    make_open_agent: Callable[..., OpenAgent], make_app: Callable[..., FastAPI]
) -> None:
    preflight = {"Origin": "https://ops.example", "Access-Control-Request-Method": "POST"}
    closed = make_app(make_open_agent(["hi"]))
    async with in_process(closed) as client:
        answer = await client.options("/conversations", headers=preflight)
        assert "access-control-allow-origin" not in answer.headers
    opened = make_app(make_open_agent(["hi"]), cors_origins=["https://ops.example"])
    async with in_process(opened) as client:
        answer = await client.options("/conversations", headers=preflight)
        assert answer.headers["access-control-allow-origin"] == "https://ops.example"
        other = await client.options("/conversations", headers={
            **preflight, "Origin": "https://evil.example"})
        assert other.headers.get("access-control-allow-origin") != "https://evil.example"
