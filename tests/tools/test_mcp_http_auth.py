"""MCP over HTTP cannot be opened to a network without a key, nor reached by a rebound name.

Real `python -m pilothouse.tools.shell --transport http` processes on 127.0.0.1, driven by plain
HTTP and the MCP SDK's own streamable HTTP client; each CLI (shell, argocd, github, rag) is
started with `--host 0.0.0.0` and no key and must refuse before it listens.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

KEY = "mcp-http-key-0c4f8a2e6b1d9f3a7c5e4b"
NAME = "mcp.internal.example"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "probe", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}
#: Variables of the test process that would change what a server does.
_CLEARED = ("PILOTHOUSE_", "ARGOCD_", "GITHUB_", "GH_TOKEN")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_CLEARED)}
    return {**env, "COLUMNS": "200", **extra}


def wait_listening(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the server answers HTTP at all (any status), or fail with its stderr."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited {process.returncode}: {log.read_text()}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)  # nothing to await: the port opens when the process gets there
    raise AssertionError("the server did not listen within 60 s")


@pytest.fixture(scope="module")
def shell_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., str]]:
    """Start shell servers over HTTP (`shell_server(**env)` -> URL of /mcp); stop them after."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(**env: str) -> str:
        port = free_port()
        root = tmp_path_factory.mktemp("mcp-http")
        command = [sys.executable, "-m", "pilothouse.tools.shell", "--workspace",
                   str(root), "--transport", "http", "--port", str(port)]
        log = root.parent / f"{root.name}.log"  # outside the workspace the server may write
        with log.open("wb") as stderr:
            process = subprocess.Popen(command, env=clean_env(**env),
                                       stdout=subprocess.DEVNULL, stderr=stderr)
        started.append((process, log))
        url = f"http://127.0.0.1:{port}/mcp"
        wait_listening(url, process, log)
        return url

    yield start
    for process, log in started:
        process.terminate()
        process.wait(20)
        assert KEY not in log.read_text()  # never in its output


@pytest.fixture(scope="module")
def keyed(shell_server: Callable[..., str]) -> str:
    return shell_server(PILOTHOUSE_MCP_KEYS=f"{KEY}", PILOTHOUSE_ALLOWED_HOSTS=NAME)


def post(url: str, **headers: str) -> httpx.Response:
    return httpx.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=10)


def test_without_the_key_nothing_is_answered(keyed: str) -> None:
    missing = post(keyed)
    wrong = post(keyed, Authorization=f"Bearer {KEY[:-1]}x")
    basic = post(keyed, Authorization="Basic YTpi")
    for refused in (missing, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == "Bearer"
        assert "PILOTHOUSE_MCP_KEYS" in refused.json()["suggestion"]
    assert (missing.json()["error"], wrong.json()["error"]) == ("Missing key.", "Invalid key.")
    assert "protocolVersion" not in missing.text + wrong.text + basic.text


def test_the_host_and_origin_are_checked_before_the_key(keyed: str) -> None:
    port = httpx.URL(keyed).port
    for headers in ({}, {"Authorization": f"Bearer {KEY}"}):
        rebound = post(keyed, Host=f"evil.example:{port}", **headers)
        assert rebound.status_code == 421, headers  # not 401: nothing learned about keys
        assert "PILOTHOUSE_ALLOWED_HOSTS" in rebound.json()["suggestion"]
    cross_site = post(keyed, Origin="http://evil.example", Authorization=f"Bearer {KEY}")
    assert cross_site.status_code == 403


@pytest.mark.parametrize("host", ["127.0.0.1", NAME])
async def test_with_the_key_the_real_client_initializes_lists_and_calls(
    keyed: str, host: str,
) -> None:
    port = httpx.URL(keyed).port
    headers = {"Authorization": f"Bearer {KEY}", "Host": f"{host}:{port}"}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, \
            Client(streamable_http_client(keyed, http_client=http)) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        decision = await client.call_tool("check_command", {"command": "sudo ls"})
    assert "run_command" in names
    assert decision.structured_content and decision.structured_content["action"] == "deny"


async def test_a_keyless_server_on_loopback_serves_only_this_machines_names(
    shell_server: Callable[..., str],
) -> None:
    url = shell_server()
    port = httpx.URL(url).port
    assert post(url, Host=f"evil.example:{port}").status_code == 421
    assert post(url, Origin="https://evil.example").status_code == 403
    async with Client(url.replace("127.0.0.1", "localhost")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "run_command" in names


@pytest.mark.parametrize("command", [
    ["pilothouse.tools.shell", "--workspace", "{tmp}", "--transport", "http"],
    ["pilothouse.tools.argocd", "--transport", "http"],
    ["pilothouse.tools.github", "--transport", "http"],
    ["pilothouse.tools.rag", "--root", "{tmp}", "--home", "{tmp}",
     "--transport", "streamable-http"],
], ids=["shell", "argocd", "github", "rag"])
@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_every_mcp_server_refuses_a_network_address_without_keys(
    tmp_path: Path, command: list[str], host: str,
) -> None:
    args = [part.replace("{tmp}", str(tmp_path)) for part in command]
    done = subprocess.run([sys.executable, "-m", *args, "--host", host,
                           "--port", str(free_port())], env=clean_env(), capture_output=True,
                          text=True, timeout=120, check=False)
    text = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr
    assert f"may only listen on 127.0.0.1, not {host}" in text
    assert "PILOTHOUSE_MCP_KEYS" in text and "pilothouse keys new" in text
    assert "Traceback" not in done.stderr


def test_a_short_key_is_refused_at_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pilothouse.tools.shell", "--workspace", str(tmp_path),
         "--transport", "http", "--host", "0.0.0.0", "--port", str(free_port())],
        env=clean_env(PILOTHOUSE_MCP_KEYS="short-key"), capture_output=True, text=True,
        timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    assert "PILOTHOUSE_MCP_KEYS" in done.stderr and "short-key" not in done.stderr
