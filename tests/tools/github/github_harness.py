"""Helpers the GitHub tool tests share: a tool caller over a real MCP client session."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from mcp import Client


@dataclass
class Answer:
    """One tool result: its structured payload, the error flag and the view the model reads."""

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
        payload = result.structured_content
        assert isinstance(payload, dict)
        # The text is the rendered view (`tools.views`): Markdown for people, never JSON.
        assert text.strip() and not text.lstrip().startswith("{")
        return Answer(payload, bool(result.is_error), text)

    async def schemas(self) -> dict[str, dict[str, Any]]:
        return {t.name: t.input_schema for t in (await self.client.list_tools()).tools}


OpenTools = Callable[..., AbstractAsyncContextManager[Tools]]
