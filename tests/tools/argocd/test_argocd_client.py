"""The Argo CD client over real HTTP: auth, retries, caps, streaming, TLS, and no leaked secrets."""

from __future__ import annotations

import asyncio
import logging
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trustme
from argocd_harness import sandbox_process
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from pilothouse.config import Settings
from pilothouse.errors import ConfigurationError, UpstreamError
from pilothouse.sandbox.argocd import DEFAULT_TOKEN, FleetSpec, RunningSandbox, running_sandbox
from pilothouse.sandbox.argocd.server import running_app
from pilothouse.tools.argocd.client import ArgoCDClient

APPS = "/api/v1/applications"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2VjcmV0LXNpZ25hdHVyZQ"
Handler = Callable[[Request], Awaitable[Response]]


@contextmanager
def serving(routes: dict[str, Handler], **options: Any) -> Iterator[str]:
    app = Starlette(routes=[Route(path, handler, methods=["GET", "POST"])
                            for path, handler in routes.items()])
    with running_app(app, **options) as url:
        yield url


def fast(url: str, **options: Any) -> ArgoCDClient:
    """A client that retries without waiting long, so failure tests stay quick."""
    return ArgoCDClient(url, **{"token": TOKEN, "backoff": 0.01, **options})


async def collect(client: ArgoCDClient, path: str = APPS, **options: Any) -> list[Any]:
    items: list[Any] = []
    await client.scan(path, items.append, **options)
    return items


async def test_streams_a_list_and_can_stop_early(fleet: RunningSandbox) -> None:
    async with ArgoCDClient(fleet.url, token=fleet.token) as client:
        everything = await collect(client, params={"fields": "items.metadata.name"})
        seen: list[str] = []
        read = await client.scan(APPS, lambda item: seen.append(item) or len(seen) == 5)
        full = await client.scan(APPS, lambda item: None)
    assert len(everything) == 819 and len(seen) == 5
    assert read < full / 10  # stopping early closes the stream instead of reading it all


async def test_memory_stays_bounded_while_full_apps_stream_past() -> None:
    count = 0

    def take(item: dict[str, Any]) -> None:
        nonlocal count
        count += 1

    # tracemalloc slows parsing ~10x, so the fleet is modest; the bench measures 100,000.
    with sandbox_process(1_000) as url:
        async with ArgoCDClient(url, token=DEFAULT_TOKEN) as client:
            tracemalloc.start()
            try:
                received = await client.scan(APPS, take)  # no fields=: ~7.5 MB of full objects
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    assert count == 1_000 and received > 7_000_000
    # Peak is a few network chunks and their objects, not the list (json.loads of the body
    # would hold ~6x its size).
    assert peak < 2_500_000


async def test_username_and_password_log_in_once(fleet: RunningSandbox) -> None:
    async with ArgoCDClient(fleet.url, username=fleet.username,
                            password=fleet.password) as client:
        version = await client.get("/api/v1/session/userinfo")
        first = await client.get(f"{APPS}/payments-api-production")
    assert version["loggedIn"] is True and first["metadata"]["name"] == "payments-api-production"
    async with ArgoCDClient(fleet.url, username="admin", password="wrong") as client:
        with pytest.raises(ConfigurationError, match="refused to log in"):
            await client.get(APPS)


async def test_an_expired_session_token_is_renewed_once() -> None:
    logins: list[str] = []

    async def session(request: Request) -> Response:
        logins.append("login")
        return JSONResponse({"token": f"a.b.{len(logins)}"})

    async def applications(request: Request) -> Response:
        if request.headers.get("authorization") != "Bearer a.b.2":  # the first token expired
            return JSONResponse({"error": "token is expired", "code": 16,
                                 "message": "token is expired"}, 401)
        return JSONResponse({"items": [{"metadata": {"name": "x"}}]})

    with serving({"/api/v1/session": session, APPS: applications}) as url:
        async with ArgoCDClient(url, username="admin", password="pw") as client:
            assert await collect(client) == [{"metadata": {"name": "x"}}]
    assert logins == ["login", "login"]


async def test_gateway_errors_are_retried_then_reported() -> None:
    calls: list[str] = []

    async def flaky(request: Request) -> Response:
        calls.append(request.method)
        if len(calls) <= 2:
            return Response("upstream connect error", 503)
        return JSONResponse({"items": [1, 2]})

    async def broken(request: Request) -> Response:
        calls.append(request.method)
        return Response("bad gateway", 502)

    with serving({APPS: flaky, "/broken": broken}) as url:
        async with fast(url, retries=2) as client:
            assert await collect(client) == [1, 2]
            assert len(calls) == 3
            calls.clear()
            with pytest.raises(UpstreamError, match="HTTP 502") as failure:
                await client.get("/broken")
            assert failure.value.retryable and len(calls) == 3
            calls.clear()
            with pytest.raises(UpstreamError):
                await client.post("/broken", {})
            assert calls == ["POST"]  # a POST that reached the server is never resent


async def test_unreachable_server_is_retried_and_named(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        async with fast(url, retries=2) as client:
            with pytest.raises(UpstreamError) as failure:
                await client.get(APPS)
    assert str(failure.value.message) == f"Argo CD is unreachable at {url} (connection failed)."
    assert "ARGOCD_URL" in (failure.value.hint or "") and failure.value.retryable


async def test_slow_server_times_out_with_advice() -> None:
    async def slow(request: Request) -> Response:
        await asyncio.sleep(1.0)
        return JSONResponse({})

    with serving({APPS: slow}) as url:
        async with fast(url, timeout=0.2, retries=0) as client:
            with pytest.raises(UpstreamError, match=r"did not answer within 0.2 s") as failure:
                await client.get(APPS)
    assert "ARGOCD_TIMEOUT" in (failure.value.hint or "")


async def test_byte_caps_apply_to_lists_and_documents(fleet: RunningSandbox) -> None:
    async with ArgoCDClient(fleet.url, token=fleet.token, max_list_bytes=100_000,
                            max_document_bytes=1_000) as client:
        with pytest.raises(UpstreamError, match="safety cap"):
            await client.scan(APPS, lambda item: None)
        with pytest.raises(UpstreamError, match="safety cap"):
            await client.get(f"{APPS}/payments-api-production")


async def test_malformed_answers_and_stream_errors_are_upstream_errors() -> None:
    async def garbage(request: Request) -> Response:
        return Response(b'{"items": [{"a": 1}, {"b": ', media_type="application/json")

    async def failing_stream(request: Request) -> Response:
        lines = [b'{"result":{"content":"ok","last":false}}\n',
                 b'{"error":{"message":"pod deleted","code":5}}\n']
        return StreamingResponse(iter(lines), media_type="application/json")

    with serving({APPS: garbage, "/logs": failing_stream}) as url:
        async with fast(url) as client:
            with pytest.raises(UpstreamError, match="malformed JSON"):
                await client.scan(APPS, lambda item: None)
            seen: list[Any] = []
            with pytest.raises(UpstreamError, match="pod deleted"):
                await client.scan_lines("/logs", seen.append)
    assert seen == [{"content": "ok", "last": False}]


async def test_a_non_jwt_token_goes_in_the_cookie() -> None:
    with running_sandbox(FleetSpec(apps=3), token="legacy-session-token") as sandbox:
        async with ArgoCDClient(sandbox.url, token=sandbox.token) as client:
            assert len(await collect(client)) == 3


async def test_tls_verification_ca_bundle_and_opt_out(tmp_path: Path, settings: Settings) -> None:
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    cert_file, key_file, ca_file = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    cert.cert_chain_pems[0].write_to_path(cert_file)
    cert.private_key_pem.write_to_path(key_file)
    ca.cert_pem.write_to_path(ca_file)

    async def ok(request: Request) -> Response:
        return JSONResponse({"items": [1]})

    with serving({APPS: ok}, ssl_certfile=str(cert_file), ssl_keyfile=str(key_file)) as url:
        secure = replace(settings, argocd_url=url, argocd_token=TOKEN)
        async with ArgoCDClient.from_settings(secure, retries=0) as client:
            with pytest.raises(ConfigurationError, match="could not be verified") as failure:
                await client.get(APPS)
            assert "ARGOCD_CA_BUNDLE" in (failure.value.hint or "")
        trusted = replace(secure, argocd_ca_bundle=ca_file)
        async with ArgoCDClient.from_settings(trusted) as client:
            assert await collect(client) == [1]
        async with ArgoCDClient.from_settings(replace(secure, argocd_verify_ssl=False)) as client:
            assert await collect(client) == [1]


def test_settings_problems_are_configuration_errors(settings: Settings, tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="ARGOCD_URL is not set"):
        ArgoCDClient.from_settings(replace(settings, argocd_url=None))
    with pytest.raises(ConfigurationError, match="No Argo CD credentials") as failure:
        ArgoCDClient.from_settings(replace(settings, argocd_token=None))
    assert "ARGOCD_TOKEN" in (failure.value.hint or "")
    with pytest.raises(ConfigurationError, match="not a readable CA file"):
        ArgoCDClient.from_settings(replace(settings, argocd_ca_bundle=tmp_path / "missing.pem"))


async def test_secrets_never_reach_logs_errors_or_repr(fleet: RunningSandbox,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.Zm9yZ2VkLXRva2Vu"
    messages: list[str] = []
    for client in (ArgoCDClient(fleet.url, token=forged),
                   ArgoCDClient(fleet.url, username="admin", password="hunter2-secret")):
        async with client:
            messages.append(repr(client))
            try:
                await client.get(APPS)
            except (ConfigurationError, UpstreamError) as error:
                messages.extend([str(error), repr(error), str(error.to_payload())])
    async with ArgoCDClient(fleet.url, username=fleet.username,
                            password=fleet.password) as client:
        await client.get(f"{APPS}/payments-api-production")
    text = "\n".join(messages) + caplog.text
    for secret in (forged, "hunter2-secret", fleet.password, fleet.token):
        assert secret not in text
    assert "rejected the credentials" in text and "refused to log in" in text
