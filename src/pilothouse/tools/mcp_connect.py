"""Use an MCP tool server's tools from LangChain, through the official MCP client.

We would use `langchain-mcp-adapters`, but its releases (0.3.x) require `mcp<2` and import
names the 2.x SDK removed, so this is the small part of it we need, on `mcp.Client` 2.x: one
long-lived session per server (the adapters' default opens a session, for stdio a whole
process, per tool call), each MCP tool as a `StructuredTool` with the server's own JSON schema,
and tool errors (`is_error`) returned to the model as error results rather than raised.

The model reads a result's text; code reads its structured content, kept as the `ToolMessage`
artifact (for an error, the `{error, kind, suggestion, ...}` of `tool_server`), so a layer that
needs to know what a result says (a search refused as too broad) never parses the text. A
server's progress notifications for a call (the RAG server's "indexing 1,240 files: 35%") go
to the agent's event stream as `{"type": "tool_progress", ...}` (`runtime.session`).
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_stream_writer
from mcp import Client, StdioServerParameters
from mcp.shared.dispatcher import ProgressFnT

from pilothouse.errors import ConfigurationError
from pilothouse.tools.mcp_support import stdio_server

__all__ = ["ArtifactTool", "ToolFailure", "as_langchain_tool", "call_for_payload",
           "open_mcp_tools", "result_text", "stdio_server"]


def result_text(result: Any) -> str:
    """The text a model should see for a `CallToolResult`."""
    parts = [getattr(block, "text", None) for block in result.content]
    texts = [p for p in parts if isinstance(p, str)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content, default=str)
    return ""


@dataclass(frozen=True)
class ToolFailure:
    """The artifact an `ArtifactTool` coroutine returns for a failed call: the error payload."""

    payload: dict[str, Any] | None


class ArtifactTool(StructuredTool):
    """A tool whose result keeps its structured content as the `ToolMessage` artifact.

    The coroutine returns `(text, structured)`; for a failure, `(text, ToolFailure(payload))`.
    LangChain turns a raised `ToolException` into an error result with text only, which would
    drop the payload; here the failure becomes an error result that keeps it as the artifact.
    """

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    async def arun(self, *args: Any, **kwargs: Any) -> Any:
        output = await super().arun(*args, **kwargs)
        if isinstance(output, ToolMessage) and isinstance(output.artifact, ToolFailure):
            output.status = "error"
            output.artifact = output.artifact.payload
        return output


def as_langchain_tool(client: Client, name: str, description: str,
                      schema: dict[str, Any]) -> BaseTool:
    """One MCP tool as a LangChain tool that calls it over `client`'s session."""

    async def call(**arguments: Any) -> tuple[str, Any]:
        result = await client.call_tool(name, arguments,
                                        progress_callback=_progress_to_stream(name))
        text = result_text(result)
        if result.is_error:
            failure = ToolFailure(result.structured_content)
            return text or f"{name} failed without a message", failure
        return text, result.structured_content

    def call_sync(**arguments: Any) -> str:
        raise NotImplementedError("MCP tools are asynchronous; run the agent with ainvoke")

    return ArtifactTool(
        name=name,
        description=description or name,
        args_schema=schema,
        func=call_sync,
        coroutine=call,
    )


def _progress_to_stream(tool: str) -> ProgressFnT | None:
    """Where `tool`'s progress goes: the running agent's event stream (None outside a run)."""
    try:
        write = get_stream_writer()
    except (RuntimeError, KeyError):  # called outside a graph run: nobody to tell
        return None
    # The client calls back from its own task; the writer needs the run's context.
    run = contextvars.copy_context()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        run.copy().run(write, {"type": "tool_progress", "tool": tool, "done": progress,
                               "total": total, "message": message or ""})

    return report


async def call_for_payload(tool: BaseTool, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call `tool` from code and return its structured payload (an error's too).

    Code never parses a result's text: that is the rendered view, written for people.
    """
    call = {"type": "tool_call", "name": tool.name, "args": arguments, "id": "code-call"}
    message = await tool.ainvoke(call)
    payload = message.artifact if isinstance(message, ToolMessage) else None
    if not isinstance(payload, dict):
        return {"error": f"{tool.name} answered without structured content",
                "kind": "UpstreamError", "suggestion": "Check the tool server's version."}
    return payload


@asynccontextmanager
async def open_mcp_tools(
    server: str, target: StdioServerParameters | str
) -> AsyncIterator[list[BaseTool]]:
    """Connect to an MCP server (stdio parameters or a streamable-HTTP URL); yield its tools."""
    async with AsyncExitStack() as stack:
        try:
            client = await stack.enter_async_context(Client(target, mode="legacy"))
            listing = await client.list_tools()
        except Exception as error:  # startup only: errors while in use propagate as they are
            raise ConfigurationError(
                f"Could not start the {server} tool server: {error}"[:400],
                hint="Run `pilothouse doctor`; reinstall with ./scripts/run.sh.",
            ) from error
        yield [as_langchain_tool(client, t.name, t.description or "", t.input_schema)
               for t in listing.tools]
