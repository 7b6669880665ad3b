"""Small pieces the Pilothouse MCP servers share.

A client per event loop (the server may be driven from several loops in tests and transports),
tool results carrying both text and structured content, tool schemas without pydantic's
generated titles (they repeat the parameter names and cost the model tokens on every turn), and
the stdio launch of a server module. Light on purpose: a server process imports it at start-up.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from mcp import StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.types import CallToolResult, TextContent

from pilothouse.redaction import scrub


class _Closable(Protocol):
    async def aclose(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


def dumps(value: Any) -> str:
    """Compact JSON: no indentation, so the model pays for content, not whitespace."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


class ClientHolder(Generic[ClientT]):
    """One HTTP client per event loop, created on first use and closed with the server."""

    def __init__(self, factory: Callable[[], ClientT]) -> None:
        self._factory = factory
        self._client: ClientT | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> ClientT:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client, self._loop = self._factory(), loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = self._loop = None


def tool_result(payload: dict[str, Any], *, is_error: bool,
                view: Callable[[dict[str, Any]], str] | None = None) -> CallToolResult:
    """A tool answer: its rendered view as text, the payload as structured content.

    The text is what the model reads and the person sees (`tools.views`); without a `view` it
    is the compact JSON. Both pass the redactor first: an upstream answer (a repository URL
    with a password, a token in a workflow log) must not reach the model, its transcript or
    the logs.
    """
    payload = scrub(payload)
    text = view(payload) if view is not None else dumps(payload)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=payload, is_error=is_error)


def without_titles(schema: Any) -> Any:
    """The schema minus pydantic's generated `title`s."""
    if isinstance(schema, dict):
        return {k: without_titles(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [without_titles(v) for v in schema]
    return schema


def stdio_server(module: str, env: Mapping[str, str], args: list[str] | None = None
                 ) -> StdioServerParameters:
    """Launch `python -m module` with the SDK's safe default environment plus `env`."""
    return StdioServerParameters(command=sys.executable, args=["-m", module, *(args or [])],
                                 env={**get_default_environment(), **env})
