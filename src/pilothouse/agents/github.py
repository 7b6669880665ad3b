"""The GitHub agent: the GitHub MCP server's tools and the paging prompt; read-only, no gates.

Its first model call of a turn must call a tool (`ToolChoiceMiddleware`), like the Argo CD agent;
a question citing one item by its number ("#37", "PR 37") or a commit by its SHA is offered the
tools that take it (`CitedItemMiddleware`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from langchain.agents.middleware import ModelRequest

from pilothouse.agents.github_prompt import GITHUB_SYSTEM_PROMPT
from pilothouse.agents.grounded_args import GroundedArgsMiddleware
from pilothouse.agents.inventory import REPOSITORY, GitHubRepositories, Inventory
from pilothouse.agents.issue_labels import IssueLabelMiddleware
from pilothouse.agents.named_scope import OneNamedResource, by_owner_and_repo
from pilothouse.agents.repository_owner import RepositoryOwnerMiddleware
from pilothouse.agents.routing import GITHUB_REFERENCE
from pilothouse.agents.search_query import GroundedSearchQueryMiddleware
from pilothouse.agents.toolkit import Toolkit
from pilothouse.config import Settings
from pilothouse.context.rewrite import (
    RequestRewriteMiddleware,
    before_notes,
    first_call,
    question_text,
)
from pilothouse.runtime.tool_choice import ToolChoiceMiddleware
from pilothouse.tools.github.connection import (
    GitHubConnection,
    github_connection,
    stdio_parameters,
)
from pilothouse.tools.mcp_connect import open_mcp_tools
from pilothouse.tools.tool_filter import cli_arguments

#: Tools whose view answers the question that calls them (`runtime.tool_choice`). Not
#: `list_workflow_runs`: a failed run can call for its logs.
ANSWERING_TOOLS = frozenset({
    "list_pull_requests", "list_pull_requests_awaiting_review", "list_issues", "search_issues",
    "get_pull_request", "get_commit", "compare_commits", "get_workflow_run_logs"})
#: Filters and the words of a person asking for them (`agents.grounded_args`). Measured with
#: `pilothouse eval`: a question for a repository's newest workflow runs came as
#: `list_workflow_runs(status="failure", branch="main")`, a few-shot example's filters.
GROUNDED_FILTERS = {
    "status": {
        "failure": ("fail", "fails", "failed", "failing", "failure", "failures", "broken",
                    "red"),
        "success": ("success", "successful", "succeeded", "passed", "passing", "green"),
        "inprogress": ("in progress", "running"),
        "queued": ("queued", "waiting", "pending")},
}
#: Names (and page sizes) the person must have given. Measured: a question for a
#: repository's recently closed pull requests came as `per_page=10`, an unasked page size.
_PAGED = ("list_pull_requests", "list_pull_requests_awaiting_review", "list_issues",
          "search_issues", "list_workflow_runs")
GROUNDED_NAMES = {**{tool: ("per_page",) for tool in _PAGED},
                  "list_workflow_runs": ("branch", "event", "per_page"),
                  # Measured: "anything waiting on me to review?" came with a login nobody
                  # gave (`reviewer="octocat"`), and an empty queue.
                  "list_pull_requests_awaiting_review": ("reviewer", "per_page")}


#: A commit cited by its SHA, as git abbreviates it (7 to 40 hex digits, with a digit and a
#: letter: a run id is all digits, an English word has no digit).
COMMIT_SHA = re.compile(r"(?<![\w-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])",
                        re.IGNORECASE)


def _takes(tool: object, argument: str) -> bool:
    return argument in (getattr(tool, "args", None) or {})


class CitedItemMiddleware(RequestRewriteMiddleware):
    """A question citing one item by its number ("#37", "PR 37") or a commit by its SHA is
    about that item: the turn's first call is offered the tools whose input takes it (an
    item's `number`; a commit's `sha`, or `base` and `head` for two SHAs), and must call one.
    Measured on held-out dev questions: "who put up <repo> #37, and has anyone approved it?"
    and "has <repo> #43 been reviewed yet?" were answered with a listing of the repository's
    pull requests, which says neither; "what's <sha> in <repo>? which pr did it come from"
    with a pull request whose number nobody gave."""

    def rewrite(self, request: ModelRequest) -> ModelRequest:
        if not first_call(request):
            return request
        question = before_notes(question_text(request))
        shas = set(COMMIT_SHA.findall(question))
        argument = "number" if GITHUB_REFERENCE.search(question) else \
            "base" if len(shas) > 1 else "sha" if shas else None
        cited = [t for t in request.tools if argument and _takes(t, argument)]
        return request.override(tools=cited, tool_choice="required") if cited else request


@asynccontextmanager
async def open_github_toolkit(
    settings: Settings, connection: GitHubConnection | None = None
) -> AsyncIterator[Toolkit]:
    """Start the GitHub tool server and yield the agent's toolkit.

    `connection` defaults to the GitHub part of `settings` (GITHUB_TOKEN, GITHUB_API_URL).
    """
    connection = connection or github_connection(settings)
    extra = {"MAX_TOOL_OUTPUT_SIZE": str(settings.max_tool_output_size),
             "PILOTHOUSE_LOG_LEVEL": settings.log_level, "PILOTHOUSE_HOME": str(settings.home)}
    launch = stdio_parameters(connection, extra_env=extra,
                              args=cli_arguments(settings, "github"))
    # One inventory for both lookups of a turn: the question's repository and each call's owner.
    repositories = GitHubRepositories(connection)
    async with open_mcp_tools("github", launch) as tools:
        one_repo = [t.name for t in tools if {"owner", "repo"} <= set(t.args)]
        # Every GitHub tool reads; nothing needs a person's approval. Each turn starts with a
        # tool call, as the Argo CD agent's does: left free, the local model answered 9 of 11
        # evaluation questions from memory ("error: Too many requests", PR counts it made up).
        yield Toolkit(name="github", prompt=GITHUB_SYSTEM_PROMPT, tools=tools,
                      extra_middleware=[ToolChoiceMiddleware(ANSWERING_TOOLS),
                                        # A repository nobody named is a guess (an
                                        # example's): asked again without the tools
                                        # about one repository. Outside the scope below,
                                        # which respells a guess of the one repository
                                        # the question names, so that is never re-asked.
                                        GroundedArgsMiddleware(
                                            {}, GROUNDED_FILTERS, GROUNDED_NAMES,
                                            about_one=dict.fromkeys(one_repo, "repo")),
                                        OneNamedResource(repositories,
                                                         REPOSITORY, one_repo,
                                                         subject=by_owner_and_repo,
                                                         narrow=False),
                                        # Outside the query's grounding, which keeps
                                        # only labels said as written ("bug", not "bugs").
                                        IssueLabelMiddleware(repositories),
                                        GroundedSearchQueryMiddleware(),
                                        CitedItemMiddleware(),
                                        RepositoryOwnerMiddleware(repositories)],
                      inventory=Inventory([repositories]))
