"""The GitHub MCP server: paged, memory-bounded, read-only tools over the GitHub REST API.

Tool descriptions are short on purpose: a local model reads every schema on every turn. Every
tool answers with compact JSON in minimal shapes; failures become an `is_error` result carrying
`{error, kind, suggestion}` (plus `resets_at` for a spent rate limit; `tools.tool_server`),
never a stack trace or the token.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from mcp.types import CallToolResult
from pydantic import Field

from pilothouse.tools.github import commit_tools, views
from pilothouse.tools.github import operations as ops
from pilothouse.tools.github.client import DEFAULT_API_URL, GitHubClient
from pilothouse.tools.github.operations import Owner, Repo
from pilothouse.tools.github.output import fit
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.http_api.server import Page
from pilothouse.tools.http_api.server import PageSize as PerPage
from pilothouse.tools.tool_server import ToolServer

SERVER_NAME = "github"
TOOLS: tuple[str, ...] = (
    "list_pull_requests", "get_pull_request", "list_pull_requests_awaiting_review",
    "list_issues", "search_issues", "list_workflow_runs", "get_workflow_run_logs",
)
TOOLS += commit_tools.TOOLS  # issue 18: the commits behind deployed revisions
INSTRUCTIONS = (
    "GitHub tools (read-only). Answers are paged: follow pagination.has_next and last_page. "
    "search_issues takes GitHub syntax, e.g. 'repo:o/r is:issue is:open label:bug'."
)

ClientFactory = Callable[[], GitHubClient]


def build_github_server(api_url: str = DEFAULT_API_URL, token: str | None = None, *,
                        timeout: float = 30.0, max_rate_limit_wait: float = 10.0,
                        max_output_chars: int = 10_000, log_level: str = "WARNING",
                        client_factory: ClientFactory | None = None) -> ToolServer:
    """The GitHub MCP server for the API at `api_url` (GitHub Enterprise: https://HOST/api/v3)."""
    run = tool_base.ToolRunner(client_factory or (lambda: GitHubClient(
        api_url, token, timeout=timeout, max_rate_limit_wait=max_rate_limit_wait)),
        fit=fit, max_output_chars=max_output_chars)

    async def list_pull_requests(
            owner: Owner, repo: Repo, state: Literal["open", "closed", "all"] = "open",
            base: Annotated[str | None, Field(description="base branch")] = None,
            head: Annotated[str | None, Field(description="head branch (owner:branch)")] = None,
            sort: Literal["created", "updated", "popularity", "long-running"] = "created",
            direction: Literal["asc", "desc"] | None = None, page: Page = 1,
            per_page: PerPage = 20) -> CallToolResult:
        return await run(lambda c: ops.list_pull_requests(
            c, owner, repo, state=state, base=base, head=head, sort=sort, direction=direction,
            page=page, per_page=per_page), views.view(views.PULLS))

    async def get_pull_request(owner: Owner, repo: Repo, number: int,
                               include_files: bool = True) -> CallToolResult:
        return await run(lambda c: ops.get_pull_request(c, owner, repo, number,
                                                         include_files=include_files),
                         views.view(views.PULL))

    async def list_pull_requests_awaiting_review(
            owner: Owner, repo: Repo,
            reviewer: Annotated[str | None, Field(description="only those asking this login")]
            = None, include_drafts: bool = False, page: Page = 1,
            per_page: PerPage = 20) -> CallToolResult:
        return await run(lambda c: ops.list_awaiting_review(
            c, owner, repo, reviewer=reviewer, include_drafts=include_drafts, page=page,
            per_page=per_page), views.view(views.PULLS))

    async def list_issues(
            owner: Owner, repo: Repo, state: Literal["open", "closed", "all"] = "open",
            labels: Annotated[str | None, Field(description="comma-separated, all must match")]
            = None, assignee: str | None = None, creator: str | None = None,
            sort: Literal["created", "updated", "comments"] = "created",
            direction: Literal["asc", "desc"] = "desc", include_pull_requests: bool = False,
            page: Page = 1, per_page: PerPage = 20) -> CallToolResult:
        return await run(lambda c: ops.list_issues(
            c, owner, repo, state=state, labels=labels, assignee=assignee, creator=creator,
            sort=sort, direction=direction, include_pull_requests=include_pull_requests,
            page=page, per_page=per_page), views.view(views.ISSUES))

    async def search_issues(
            query: Annotated[str, Field(description="GitHub search syntax")],
            sort: Literal["created", "updated", "comments"] | None = None,
            order: Literal["asc", "desc"] = "desc", page: Page = 1,
            per_page: PerPage = 20) -> CallToolResult:
        return await run(lambda c: ops.search_issues(c, query, sort=sort, order=order,
                                                     page=page, per_page=per_page),
                         views.view(views.ISSUES))

    async def list_workflow_runs(
            owner: Owner, repo: Repo,
            status: Annotated[str | None, Field(
                description="e.g. failure, success, in_progress, queued")] = None,
            branch: str | None = None, event: str | None = None, page: Page = 1,
            per_page: PerPage = 20) -> CallToolResult:
        return await run(lambda c: ops.list_workflow_runs(
            c, owner, repo, status=status, branch=branch, event=event, page=page,
            per_page=per_page), views.view(views.RUNS))

    async def get_workflow_run_logs(
            owner: Owner, repo: Repo, run_id: int,
            tail_lines: Annotated[int, Field(description="lines to return in all, max 500")]
            = 100) -> CallToolResult:
        return await run(lambda c: ops.get_workflow_run_logs(c, owner, repo, run_id,
                                                             tail_lines=tail_lines),
                         views.view(views.RUN_LOGS))

    tools: list[tuple[tool_base.ToolFunction, str]] = [
        (list_pull_requests, "One repository's pull requests (open, closed or all), one page "
                            "at a time."),
        (get_pull_request, "One pull request by number: state, review decision, reviews "
                           "and a summary of the files changed."),
        (list_pull_requests_awaiting_review, "The review queue: open pull requests waiting "
                                             "for a review (no approval, no change request "
                                             "yet)."),
        (list_issues, "One repository's issues, one page at a time."),
        (search_issues, "Find issues and pull requests by label, author, state or text, in "
                        "one repository or across many; paged, with the total count (how "
                        "many)."),
        (list_workflow_runs, "A repository's CI builds (GitHub Actions workflow runs), "
                             "newest first, each with its conclusion; filter by status "
                             "(failure), branch or event."),
        (get_workflow_run_logs, "The last log lines of one workflow run's failing steps, by "
                                "run id."),
    ]
    registered = [tool_base.tool(fn, description, annotations=tool_base.READ_ONLY)
                  for fn, description in tools]
    registered.extend(commit_tools.commit_tools(run))  # issue 18
    return tool_base.http_tool_server(SERVER_NAME, INSTRUCTIONS, run, registered,
                                      log_level=log_level)
