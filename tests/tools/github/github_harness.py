"""Helpers the GitHub tool tests share: a tool caller over a real MCP client session."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from mcp import Client


@dataclass
class Answer:
    """One tool result as the model would see it: the JSON text, parsed, and the error flag."""

    payload: dict[str, Any]
    is_error: bool
    text: str


class Tools:
    """Calls tools through a real MCP client session; checks the result's two forms agree."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, name: str, **arguments: Any) -> Answer:
        result = await self.client.call_tool(name, arguments)
        (block,) = result.content
        text = block.text  # type: ignore[union-attr]
        payload = json.loads(text)
        assert result.structured_content == payload
        return Answer(payload, bool(result.is_error), text)

    async def schemas(self) -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in (await self.client.list_tools()).tools}


OpenTools = Callable[..., AbstractAsyncContextManager[Tools]]
