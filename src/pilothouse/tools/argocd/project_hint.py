"""`project` on a read tool is a hint: a wrong one never hides an application.

Argo CD answers a GET of an app with a `project` it is not in with 404 "not found". Measured on
the local model: asked what changed before an app went Degraded, it called
`get_application_changes(name=..., project="analytics-warehouse")`, an invented project, got
"not found" twice and gave up. Application names are unique per Argo CD (per namespace), so a
read tool that finds nothing in the given project asks again without it and, when the app
exists, answers from the app's own project and says so. Tools that change something keep
`project` strict: the person approves exactly the call that runs.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent

from pilothouse.tools.argocd.errors import NotFound
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.http_api.server import READ_ONLY

#: Read tools of one application that take `project`.
APP_READS = frozenset({
    "get_application", "get_application_resource_tree", "get_application_events",
    "get_application_logs", "get_application_history", "diff_application",
    "get_application_changes"})


def with_project_as_hint(tools: list[Tool]) -> list[Tool]:
    """`tools`, with the application read tools retrying without a project that misses."""
    return [_wrap(tool) if tool.name in APP_READS else tool for tool in tools]


def _noted(result: CallToolResult, name: str, project: str) -> CallToolResult:
    payload = dict(result.structured_content or {})
    actual = payload.get("project")
    where = f"It is in project '{actual}'." if actual else "It is in another project."
    note = (f"Note: application '{name}' is not in project '{project}'. {where} "
            "This answer is from its own project.")
    payload["project_note"] = note
    text = "\n\n".join(c.text for c in result.content if isinstance(c, TextContent))
    return CallToolResult(content=[TextContent(type="text", text=f"{note}\n\n{text}")],
                          structured_content=payload, is_error=result.is_error)


def _wrap(tool: Tool) -> Tool:
    body: Callable[..., Awaitable[CallToolResult]] = tool.fn

    @functools.wraps(body)
    async def call(*args: Any, **kwargs: Any) -> CallToolResult:
        project = kwargs.get("project")
        try:
            return await body(*args, **kwargs)
        except NotFound:
            if not (isinstance(project, str) and project.strip()):
                raise
            answer = await body(*args, **{**kwargs, "project": None})
        return _noted(answer, str(kwargs.get("name", "")), project.strip())

    # Only registered read tools are wrapped, and each says so in its annotations.
    return tool_base.tool(call, tool.description, annotations=tool.annotations or READ_ONLY)
