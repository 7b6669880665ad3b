"""Shared by the Argo CD tool tests: the scenario fleet and a typed MCP tool caller.

One fleet of 819 applications carries marker terms planted in exact numbers, so each seed
scenario has a query with a known answer: "kestrel" 18 matches, "osprey" 387, "heron" 600
(above the warning level), "condor" 1,200 (over the cap, 400/300/350/150 by type).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from mcp import Client

from pilothouse.sandbox.argocd import FleetSpec, Marker

SCENARIOS = FleetSpec(
    apps=819, projects=320, applicationsets=360, clusters=160,
    markers=(
        Marker("kestrel", applications=18),
        Marker("osprey", applications=300, projects=40, applicationsets=30, clusters=17),
        Marker("heron", applications=450, projects=100, applicationsets=50),
        Marker("condor", applications=400, projects=300, applicationsets=350, clusters=150),
    ),
)


@dataclass
class Answer:
    """One tool result: its structured payload, the error flag and the view the model reads."""

    payload: dict[str, Any]
    is_error: bool
    text: str


class Tools:
    """Calls tools through a real MCP client session and checks the result's two forms agree."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, tool: str, /, **arguments: Any) -> Answer:
        result = await self.client.call_tool(tool, arguments)
        (block,) = result.content
        text = block.text  # type: ignore[union-attr]
        payload = result.structured_content
        assert isinstance(payload, dict)
        # The text is the rendered view (`tools.views`): Markdown for people, never JSON.
        assert text.strip() and not text.lstrip().startswith("{")
        return Answer(payload, bool(result.is_error), text)

    async def names(self) -> list[str]:
        return [tool.name for tool in (await self.client.list_tools()).tools]


Connect = Callable[..., AbstractAsyncContextManager[Tools]]


@contextmanager
def sandbox_process(apps: int) -> Iterator[str]:
    """A sandbox in its own process (so it is not counted in this process's memory)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "pilothouse.sandbox.argocd", "--apps", str(apps),
         "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 30
    try:
        while True:
            try:
                httpx.get(f"{url}/api/version", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the sandbox process did not start") from None
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
