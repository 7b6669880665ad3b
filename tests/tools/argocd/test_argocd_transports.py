"""The server as agents launch it: a stdio subprocess, and `--transport http` (streamable HTTP)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import replace

import anyio
import httpx
from mcp import Client

from pilothouse.config import Settings
from pilothouse.tools.argocd import stdio_parameters
from pilothouse.tools.argocd.connection import settings_env
from pilothouse.tools.argocd.server import READ_TOOLS


async def test_stdio_subprocess_answers_the_seed_search(settings: Settings) -> None:
    async with Client(stdio_parameters(settings)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("search_argocd_resources", {"query": "kestrel"})
    assert "sync_application" not in names and sorted(names) == sorted(READ_TOOLS)
    assert result.structured_content["pagination"]["total_items"] == 18  # type: ignore[index]
    assert result.content[0].text.startswith("Showing all 18 matches")  # type: ignore[union-attr]


async def test_stdio_subprocess_honours_read_only_false(writable: Settings) -> None:
    async with Client(stdio_parameters(writable)) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
    assert "sync_application" in names


def test_the_stdio_launch_carries_the_settings(settings: Settings) -> None:
    launch = stdio_parameters(replace(settings, max_search_results=700))
    assert launch.command == sys.executable and launch.args == ["-m", "pilothouse.tools.argocd"]
    env = launch.env or {}
    assert env["ARGOCD_URL"] == settings.argocd_url and env["MAX_SEARCH_RESULTS"] == "700"
    assert env["ARGOCD_READ_ONLY"] == "true" and "PATH" in env
    # Rendering back to variables reproduces the Argo CD part of the settings.
    again = Settings.from_env(settings_env(settings))
    assert (again.argocd_url, again.argocd_token, again.argocd_timeout_seconds) == (
        settings.argocd_url, settings.argocd_token, settings.argocd_timeout_seconds)


async def test_streamable_http_transport(settings: Settings) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, **settings_env(settings)}
    command = [sys.executable, "-m", "pilothouse.tools.argocd", "--transport", "http",
               "--port", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    async with await anyio.open_process(command, env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL) as process:
        try:
            async with httpx.AsyncClient() as probe:
                for _ in range(300):
                    try:
                        await probe.get(url, timeout=1)
                        break
                    except httpx.TransportError:
                        assert process.returncode is None
                        await anyio.sleep(0.1)
            async with Client(url) as client:
                result = await client.call_tool("list_applications", {"page_size": 5})
        finally:
            process.terminate()
    payload = result.structured_content
    assert payload is not None
    assert payload["pagination"]["total_pages"] == 164
