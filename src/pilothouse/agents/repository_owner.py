"""A repository is called by the owner that holds it, whatever owner the model wrote.

A model that does not know a repository's owner fills one in: the local model wrote the
owner its tool schema and few-shot examples use as a placeholder (`example-org`) for
repositories of another organisation, in questions that named the repository alone or
named none. The call failed with a 404, the tool named the real owner ("did you mean"), and
the model called again: a call too many, and a name nobody gave in the first. The token's own
list of repositories knows the owner: when the owner a call gives holds no repository of that
name the token can see, and exactly one owner does, the call goes to that owner. A repository
no visible owner holds (or several do) is left as written: the tool answers it with the
closest names, and nothing is guessed here.

A search query names its repositories in GitHub's syntax, `repo:owner/name`, and is held to
the same rule: `repo:name` without its owner (which GitHub rejects: "the listed users and
repositories cannot be searched") or with an owner that holds no such repository becomes
`repo:<holder>/name`. Measured on held-out dev: "how many open bugs on <repo>" searched
`repo:<repo> is:issue is:open`, and the answer was GitHub's validation error.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages.tool import ToolCall

from pilothouse.agents.inventory import LOOKUP_SECONDS, REPOSITORY, Candidate, InventorySource
from pilothouse.context.rewrite import final_message, with_revised_calls
from pilothouse.errors import PilothouseError

log = logging.getLogger("pilothouse.agents.repository_owner")

REPO_QUALIFIER = "repo:"


def searched_repositories(query: str) -> list[str]:
    """The repositories a search `query` names with `repo:` (`name` or `owner/name`)."""
    return [term[len(REPO_QUALIFIER):] for term in query.split()
            if term.lower().startswith(REPO_QUALIFIER) and len(term) > len(REPO_QUALIFIER)]


def _written(call: ToolCall) -> list[tuple[str | None, str]]:
    """(owner or None, repository) of each repository `call` names: its `owner` and `repo`
    arguments, and each `repo:` qualifier of its search `query`."""
    args = call["args"]
    owner, repo = args.get("owner"), args.get("repo")
    named: list[tuple[str | None, str]] = []
    if isinstance(owner, str) and isinstance(repo, str) and repo and "/" not in repo:
        named.append((owner, repo))
    query = args.get("query")
    for written in searched_repositories(query if isinstance(query, str) else ""):
        given, _, name = written.rpartition("/")
        named.append((given or None, name))
    return named


class RepositoryOwnerMiddleware(AgentMiddleware):
    """Respells the owner of each repository a call names (its `owner` for its `repo`, a
    search's `repo:` qualifiers) as the one visible owner holding it, when the owner given
    holds none or none is given (`source`: the repositories the token can see)."""

    def __init__(self, source: InventorySource, *,
                 timeout_seconds: float = LOOKUP_SECONDS) -> None:
        super().__init__()
        self.source = source
        self.timeout_seconds = timeout_seconds

    async def _holders(self, calls: list[ToolCall]) -> dict[str, str]:
        """`owner/repo` as the calls write it (lower case) -> the visible repository it is,
        for each call whose repository the token sees under one owner only."""
        words = []
        for owner, repo in (named for call in calls for named in _written(call)):
            words += [*([Candidate(f"{owner}/{repo}", 0)] if owner else []), Candidate(repo, 0)]
        if not words:
            return {}
        try:
            found = await asyncio.wait_for(self.source.resolve(words), self.timeout_seconds)
        except (PilothouseError, OSError, TimeoutError) as exc:
            log.debug("The repository list was not read (%s); owners stay as written.", exc)
            return {}
        held: dict[str, set[str]] = {}
        for mention in found:
            if mention.kind == REPOSITORY:
                held.setdefault(mention.text.lower(), set()).add(mention.name)
        # A name several owners hold is not respelled: which one is meant is not known here.
        return {text: names.pop() for text, names in held.items() if len(names) == 1}

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(request)
        final = final_message(response)
        holders = await self._holders(list(final.tool_calls) if final is not None else [])
        if not holders:
            return response

        def holder(owner: str | None, repo: str) -> str | None:
            """`owner/repo` as the token sees it, when the owner given does not hold it."""
            if owner and f"{owner}/{repo}".lower() in holders:  # the owner given holds it
                return None
            return holders.get(repo.lower())

        def qualified(term: str) -> str:
            """A `repo:` term of a search query, by the owner that holds it."""
            if not term.lower().startswith(REPO_QUALIFIER):
                return term
            given, _, name = term[len(REPO_QUALIFIER):].rpartition("/")
            held = holder(given or None, name)
            return REPO_QUALIFIER + held if held else term

        def held_by_its_owner(call: ToolCall) -> ToolCall:
            args = dict(call["args"])
            owner, repo, query = args.get("owner"), args.get("repo"), args.get("query")
            if isinstance(owner, str) and isinstance(repo, str) \
                    and (held := holder(owner, repo)):
                args["owner"] = held.partition("/")[0]
            if isinstance(query, str):
                args["query"] = " ".join(qualified(term) for term in query.split(" "))
            return call if args == call["args"] else {**call, "args": args}

        return with_revised_calls(response, held_by_its_owner)
