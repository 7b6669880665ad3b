"""The Argo CD server's change tools: history, diff, what changed, rollback, resource actions.

Registered by `server.build_argocd_server` as one block. The reading tools are annotated as
such; `rollback_application` and `run_resource_action` write (the read-only filter hides them)
and change nothing without `approved=true` and the evidence the person approved, which the
agent sets after approval (`agents.argocd`), never the model.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult
from pydantic import Field

from pilothouse.tools.argocd import actions, diff, history, rollback, timeline
from pilothouse.tools.argocd import change_views as views
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.tool_filter import WRITES

READ_TOOLS: tuple[str, ...] = ("get_application_history", "diff_application",
                               "get_application_changes")
WRITE_TOOLS: tuple[str, ...] = ("rollback_application", "run_resource_action")

AppName = Annotated[str, Field(description="application name")]
Evidence = Annotated[str | None, Field(description="set by Pilothouse after approval")]
FollowSeconds = Annotated[float, Field(description="seconds to follow health afterwards")]


def change_tools(run: tool_base.ToolRunner[Any]) -> list[Tool]:
    """The change tools, bound to the server's runner."""

    async def get_application_history(name: AppName, page: int = 1, page_size: int = 10,
                                      project: str | None = None) -> CallToolResult:
        return await run(lambda c: history.application_history(
            c, name, page=page, page_size=page_size, project=project), views.history_view)

    async def diff_application(name: AppName, project: str | None = None,
                               max_lines_per_resource: int = 40) -> CallToolResult:
        return await run(lambda c: diff.diff_application(
            c, name, project=project, max_lines_per_resource=max_lines_per_resource),
            views.diff_view)

    async def get_application_changes(name: AppName, limit: int = 20,
                                      project: str | None = None) -> CallToolResult:
        return await run(lambda c: timeline.application_changes(c, name, limit=limit,
                                                                project=project),
                         views.changes_view)

    async def rollback_application(
            name: AppName,
            history_id: Annotated[int | None, Field(
                description="deploy id to return to; default: the previous revision")] = None,
            dry_run: bool = True, approved: bool = False, prune: bool = False,
            project: str | None = None, expected_evidence: Evidence = None,
            follow_seconds: FollowSeconds = 60.0) -> CallToolResult:
        return await run(lambda c: rollback.rollback_application(
            c, name, history_id=history_id, dry_run=dry_run, approved=approved,
            expected_evidence=expected_evidence, prune=prune, project=project,
            follow_seconds=follow_seconds), views.rollback_view)

    async def run_resource_action(
            name: AppName,
            kind: Annotated[str, Field(description="resource kind, e.g. Deployment")],
            resource_name: Annotated[str, Field(description="the resource's name")],
            action: Annotated[str | None, Field(
                description="e.g. restart or scale; omit to list the offered ones")] = None,
            namespace: str | None = None, replicas: int | None = None, dry_run: bool = True,
            approved: bool = False, project: str | None = None,
            expected_evidence: Evidence = None,
            follow_seconds: FollowSeconds = 60.0) -> CallToolResult:
        return await run(lambda c: actions.run_resource_action(
            c, name, kind, resource_name, action=action, namespace=namespace,
            replicas=replicas, dry_run=dry_run, approved=approved,
            expected_evidence=expected_evidence, project=project,
            follow_seconds=follow_seconds), views.action_view)

    reads: list[tuple[tool_base.ToolFunction, str]] = [
        (get_application_history, "Who deployed one application, when, and which revision: "
                                  "its deploys, newest first, paged, with authors and commit "
                                  "messages."),
        (diff_application, "Whether one application drifted from git (live vs desired): "
                           "per resource that differs, a unified diff (capped)."),
        # Its timeline holds deploys and events both, so it says which neighbour answers
        # each alone: the local model read it for who deployed and why an app is red.
        (get_application_changes, "What changed just before one app broke: deploys and "
                                  "warnings in one timeline, with SHAs. Who deployed: "
                                  "get_application_history; why: get_application_events."),
    ]
    writes: list[tuple[tool_base.ToolFunction, str]] = [
        (rollback_application, "Roll an application back to an earlier deploy. Dry run by "
                               "default: target revision, commit and diff; a real rollback "
                               "needs approval."),
        (run_resource_action, "List the actions of one of an app's resources, or run one "
                              "(restart or scale a Deployment). "
                              "Dry run by default; running one needs approval."),
    ]
    return ([tool_base.tool(fn, text, annotations=tool_base.READ_ONLY) for fn, text in reads]
            + [tool_base.tool(fn, text, annotations=WRITES) for fn, text in writes])
