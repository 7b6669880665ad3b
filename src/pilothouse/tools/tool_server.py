"""The MCP server every Pilothouse tool server is built on, and the one shape of a tool error.

Whatever goes wrong in a tool call (an unknown tool, arguments that do not match the schema, a
`PilothouseError` raised by the tool, a crash) reaches the client the same way, from every
server (argocd, github, shell, rag):

- `is_error` is true, so the MCP client (and through it the agent) knows the call failed;
- `structured_content` is `{error, kind, suggestion, ...details}`: what happened, the error
  class, and what to do; the text says the same in sentences (`tools.views.error_view`);
- secrets are redacted, and nothing of a crash but its tool's name leaves the server.

The SDK's own failure text ("Error executing tool x: <pydantic dump>") is not that shape, so
`ToolServer.call_tool` turns the SDK's `ToolError`s into it; tools just raise.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from pilothouse.errors import (
    ConfigurationError,
    PilothouseError,
    UpstreamError,
    UserInputError,
)
from pilothouse.tools.mcp_support import tool_result
from pilothouse.tools.views import error_view

log = logging.getLogger(__name__)

#: The keys every error payload has; details of a `RequestRejected` join them.
ERROR_KEYS = ("error", "kind", "suggestion")
#: What to do when an error class has no hint of its own (every error must say what to do).
_DEFAULT_SUGGESTIONS: tuple[tuple[type[PilothouseError], str], ...] = (
    (UserInputError, "Change the request and call the tool again."),
    (ConfigurationError, "Ask whoever runs Pilothouse to check the tool server's settings."),
    (UpstreamError, "Try again shortly; if it repeats, check the system the tool talks to."),
)
_CRASH_SUGGESTION = "Try again; if it repeats, check the tool server's log."


class InternalError(PilothouseError):
    """A tool crashed; its text stays in the server log, the caller learns only that."""


class RequestRejected(PilothouseError):
    """The tool refused the request as asked; `details` are the facts needed to act on it.

    The details join the error payload at its top level (e.g. the search cap's `query`,
    `total_matches`, `limit`, `breakdown`), so callers read them without unwrapping. Subclasses
    name the refusal: their class name is the payload's `kind`.
    """

    def __init__(self, message: str, *, hint: str, details: Mapping[str, Any]) -> None:
        super().__init__(message, hint=hint)
        self.details = dict(details)

    def to_payload(self) -> dict[str, Any]:
        return {**super().to_payload(), **self.details}


def error_payload(error: PilothouseError) -> dict[str, Any]:
    """`error` in the one tool-error shape: a suggestion is always present."""
    payload: dict[str, Any] = dict(error.to_payload())
    if not payload.get("suggestion"):
        payload["suggestion"] = next(
            (text for cls, text in _DEFAULT_SUGGESTIONS if isinstance(error, cls)),
            _CRASH_SUGGESTION)
    return payload


def error_result(error: PilothouseError) -> CallToolResult:
    """`error` as an `is_error` result: sentences for the model, the payload for code."""
    return tool_result(error_payload(error), is_error=True, view=error_view)


def _pilothouse_cause(exc: BaseException) -> PilothouseError | None:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, PilothouseError):
            return seen
        seen = seen.__cause__
    return None


def _invalid_arguments(tool: str, error: ValidationError) -> UserInputError:
    # Field names and pydantic's reasons only: the rejected values are the caller's data.
    problems = "; ".join(
        f"{'.'.join(str(part) for part in item['loc']) or 'arguments'}: {item['msg']}"
        for item in error.errors()[:5])
    return UserInputError(f"The arguments of {tool} are invalid ({problems}).",
                          hint=f"Call {tool} again with arguments that match its schema.")


class ToolServer(MCPServer[Any]):
    """An `MCPServer` whose failed tool calls all answer in the one tool-error shape."""

    def registered_tools(self) -> list[Tool]:
        """The tools registered now, with their annotations (what `tool_filter` reads)."""
        return self._tool_manager.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None,
                        ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return error_result(await self._as_error(name, exc))

    async def _as_error(self, tool: str, exc: ToolError) -> PilothouseError:
        cause = _pilothouse_cause(exc)
        if cause is not None:
            log.info("Tool %r failed: %s", tool, type(cause).__name__)
            return cause
        crashed = isinstance(exc, UnexpectedToolError)
        if not crashed and isinstance(exc.__cause__, ValidationError):
            return _invalid_arguments(tool, exc.__cause__)
        known = sorted(t.name for t in await self.list_tools())
        if tool not in known:
            return UserInputError(f"{self.name} has no tool named {tool!r}.",
                                  hint=f"Call one of its tools: {', '.join(known)}.")
        if crashed:
            log.error("Tool %r crashed", tool, exc_info=exc.__cause__ or exc)
            return InternalError(f"The {self.name} tool {tool} failed unexpectedly.",
                                 hint=_CRASH_SUGGESTION)
        # A deliberate `ToolError` from SDK code: its text is meant for the caller.
        text = str(exc).removeprefix(f"Error executing tool {tool}: ")
        return UserInputError(text, hint="Change the request and call the tool again.")
