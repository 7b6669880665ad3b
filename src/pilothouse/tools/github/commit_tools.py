"""The GitHub server's commit tools: one commit and its pull request, and a comparison.

Registered by `server.build_github_server` as one block, read-only like every GitHub tool.
They take the SHAs the Argo CD tools report (a deploy's revision), which is how the two
agents' answers join without either tool server knowing the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult
from pydantic import Field

from pilothouse.tools.github import commits
from pilothouse.tools.github.operations import Owner, Repo
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.views import number, render, table

TOOLS: tuple[str, ...] = ("get_commit", "compare_commits")

Sha = Annotated[str, Field(description="commit SHA (7-40 hex), e.g. a deployed revision")]


def _failed(payload: Mapping[str, Any]) -> bool:
    return "error" in payload and "kind" in payload


def commit_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    pull = payload.get("pull_request")
    lines = [f"Commit **{payload.get('short')}** in {payload.get('repo')} by "
             f"{payload.get('author')} on {payload.get('date')}: {payload.get('message')}"]
    if isinstance(pull, Mapping):
        lines.append(f"Pull request #{pull.get('number')} \"{pull.get('title')}\" by "
                     f"{pull.get('author')}, merged {pull.get('merged_at')}.")
    files = payload.get("files") or {}
    if files.get("items"):
        lines.append(f"Files changed ({number(files.get('count', 0))}):\n\n"
                     + table(files["items"], ("path", "status", "additions", "deletions")))
    return "\n\n".join(lines)


def compare_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    head = (f"{payload.get('repo')} {payload.get('base')}...{payload.get('head')}: "
            f"{payload.get('status')}, {number(payload.get('total_commits', 0))} commits, "
            f"{number((payload.get('files') or {}).get('count', 0))} files.")
    parts = [head]
    if payload.get("commits"):
        rows = [{**c, "pull_request": f"#{c['pull_request']}" if c.get("pull_request") else "-"}
                for c in payload["commits"]]
        parts.append(table(rows, ("short", "date", "author", "pull_request", "message")))
    if payload.get("omitted_commits"):
        parts.append(f"{number(payload['omitted_commits'])} older commits left out.")
    return "\n\n".join(parts)


def commit_tools(run: tool_base.ToolRunner[Any]) -> list[Tool]:
    """The commit tools, bound to the server's runner."""

    async def get_commit(owner: Owner, repo: Repo, sha: Sha) -> CallToolResult:
        return await run(lambda c: commits.get_commit(c, owner, repo, sha), commit_view)

    async def compare_commits(owner: Owner, repo: Repo,
                              base: Annotated[str, Field(description="older SHA")],
                              head: Annotated[str, Field(description="newer SHA")],
                              ) -> CallToolResult:
        return await run(lambda c: commits.compare_commits(c, owner, repo, base, head),
                         compare_view)

    described: list[tuple[tool_base.ToolFunction, str]] = [
        (get_commit, "One commit: message, author, date, files and the pull request it came "
                     "from."),
        (compare_commits, "Commits and pull requests between two SHAs (e.g. two deployed "
                          "revisions), oldest first."),
    ]
    return [tool_base.tool(fn, text, annotations=tool_base.READ_ONLY) for fn, text in described]
