"""A label the repository has, named by the person, filters the issues asked for.

A person asks for "open bugs" or "enhancement requests"; GitHub files those under labels, and
which labels a repository has is in its own list (`GET /repos/{owner}/{repo}/labels`), not in
a table of words here. Measured on held-out dev questions: "how many bugs r open on <repo>"
and "how many open bugs on <repo>" were searched as `repo:<repo> is:issue is:open`, and the
answer counted every open issue (22, not 16).

So when a call lists or searches one repository's issues and gives no label, each label of
that repository whose name the person's question says as whole words (a plural too: "bugs"
for `bug`) is added: `labels=` of `list_issues`, `label:` terms of a `search_issues` query
naming one `repo:owner/name`. A label the call already gives, or a question naming none of
the repository's labels, leaves the call as it is. The repository's owner is the one the
call gives, respelled first when it holds no such repository (`agents.repository_owner`).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.inventory import LOOKUP_SECONDS, GitHubRepositories
from pilothouse.agents.repository_owner import searched_repositories
from pilothouse.context.events import ContextAction, report
from pilothouse.context.rewrite import final_message, newest_question, with_revised_calls
from pilothouse.errors import PilothouseError

log = logging.getLogger("pilothouse.agents.issue_labels")

LIST_TOOL = "list_issues"
SEARCH_TOOL = "search_issues"


def said_labels(labels: list[str], question: str) -> list[str]:
    """The `labels` whose name `question` says as whole words (or in the plural)."""
    said = []
    for label in labels:
        words = re.escape(label.lower()).replace(r"\ ", r"[\s-]+")
        if re.search(rf"(?<![\w:/-]){words}(?:e?s)?(?![\w:/-])", question.lower()):
            said.append(label)
    return said


def _repository(call: ToolCall) -> str | None:
    """`owner/name` of the one repository whose issues `call` asks for without a label."""
    args = call["args"]
    if call["name"] == LIST_TOOL and not args.get("labels"):
        owner, repo = args.get("owner"), args.get("repo")
        return f"{owner}/{repo}" if isinstance(owner, str) and isinstance(repo, str) else None
    query = args.get("query")
    if call["name"] == SEARCH_TOOL and isinstance(query, str) and not any(
            term.lower().lstrip("-").startswith("label:") for term in query.split()):
        repos = {name.lower() for name in searched_repositories(query)}
        return repos.pop() if len(repos) == 1 and "/" in next(iter(repos)) else None
    return None


def _labelled(call: ToolCall, labels: list[str]) -> ToolCall:
    args = dict(call["args"])
    if call["name"] == LIST_TOOL:
        args["labels"] = ",".join(labels)
    else:
        args["query"] = " ".join([str(args["query"]),
                                  *(f'label:"{x}"' if " " in x else f"label:{x}" for x in labels)])
    return {**call, "args": args}


class IssueLabelMiddleware(AgentMiddleware):
    """Adds the labels the question names to a label-less call for one repository's issues
    (`repositories`: the GitHub inventory, which reads each repository's labels)."""

    def __init__(self, repositories: GitHubRepositories, *,
                 timeout_seconds: float = LOOKUP_SECONDS) -> None:
        super().__init__()
        self.repositories = repositories
        self.timeout_seconds = timeout_seconds

    async def _said(self, repository: str, question: str) -> list[str]:
        try:
            labels = await asyncio.wait_for(self.repositories.labels(repository),
                                            self.timeout_seconds)
        except (PilothouseError, OSError, TimeoutError) as exc:
            log.debug("The labels of %s were not read (%s); the call stays.", repository, exc)
            return []
        return said_labels(labels, question)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(request)
        final = final_message(response)
        calls = list(final.tool_calls) if final is not None else []
        question = newest_question(request.messages)
        wanted = {repo for call in calls if (repo := _repository(call))}
        if not wanted or not question:
            return response
        named = {repo: await self._said(repo, question) for repo in sorted(wanted)}
        added: list[str] = []

        def with_labels(call: ToolCall) -> ToolCall:
            repository = _repository(call)
            labels = named.get(repository) if repository else None
            if not labels:
                return call
            added.append(f"{call['name']} of {repository}: {', '.join(labels)}")
            return _labelled(call, labels)

        response = with_revised_calls(response, with_labels)
        if added:
            report(ContextAction("grounding", "labels the question names: " + "; ".join(added),
                                 "grounded_ids", {"arguments": len(added)}))
        return response
