"""PostgreSQL stopped during a conversation: the REST API answers 503 with a clear message,
readiness fails, nothing committed is lost, and service resumes on its own once PostgreSQL is
back, without restarting Pilothouse. The cluster is this test's own: it is stopped on purpose."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from replicas import ask, events, new_thread, replica

from pilothouse.testing.postgres_cluster import running_cluster
from pilothouse.testing.scripted_server import running_scripted_server

pytestmark = pytest.mark.postgres

SCRIPT = {"rules": [], "default": {"content": "Still here."}}


async def wait_ready(http: httpx.AsyncClient, url: str) -> httpx.Response:
    async with asyncio.timeout(120):
        while True:
            response = await http.get(f"{url}/readyz")
            if response.status_code == 200:
                return response
            await asyncio.sleep(0.5)


async def test_an_outage_is_a_503_and_service_resumes_by_itself(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    with running_cluster() as cluster, running_scripted_server(SCRIPT) as (model_url, _):
        url = cluster.create_database("outage")
        server = replica(tmp_path, "a", database_url=url, model_url=model_url,
                         workspace=workspace)
        try:
            await server.ready()
            async with httpx.AsyncClient(timeout=60) as http:
                thread = await new_thread(http, server.url)
                before = await ask(http, server.url, thread, "first question")
                cluster.stop()
                listed = await http.get(f"{server.url}/conversations")
                asked = await ask(http, server.url, thread, "asked during the outage")
                ready = await http.get(f"{server.url}/readyz")
                alive = await http.get(f"{server.url}/healthz")
                cluster.start()
                await wait_ready(http, server.url)
                kept = (await http.get(f"{server.url}/conversations/{thread}")).json()
                after = events((await ask(http, server.url, thread, "second")).text)
                history = (await http.get(f"{server.url}/conversations/{thread}")).json()
        finally:
            server.stop()
        log = server.log_text()

    assert before.status_code == 200
    for failed in (listed, asked):
        assert failed.status_code == 503, failed.text
        body = failed.json()
        assert "PostgreSQL" in body["error"] and "unavailable" in body["error"]
        assert "PILOTHOUSE_DATABASE_URL" in body["suggestion"]
    assert ready.status_code == 503 and alive.status_code == 200
    assert [m["text"] for m in kept["messages"]] == ["first question", "Still here."]
    assert [e["text"] for e in after if e["kind"] == "answer"] == ["Still here."]
    assert [m["text"] for m in history["messages"] if m["role"] == "user"] == [
        "first question", "second"]
    for text in (listed.text, asked.text, ready.text, log):
        assert cluster.password not in text
