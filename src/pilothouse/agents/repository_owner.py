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


class RepositoryOwnerMiddleware(AgentMiddleware):
    """Respells the `owner` of each call naming a `repo` as the one visible owner holding it,
    when the owner given holds none (`source`: the repositories the token can see)."""

    def __init__(self, source: InventorySource, *,
                 timeout_seconds: float = LOOKUP_SECONDS) -> None:
        super().__init__()
        self.source = source
        self.timeout_seconds = timeout_seconds

    async def _holders(self, calls: list[ToolCall]) -> dict[str, str]:
        """`owner/repo` as the calls write it (lower case) -> the visible repository it is,
        for each call whose repository the token sees under one owner only."""
        words = []
        for call in calls:
            owner, repo = call["args"].get("owner"), call["args"].get("repo")
            if isinstance(owner, str) and isinstance(repo, str) and repo and "/" not in repo:
                words += [Candidate(f"{owner}/{repo}", 0), Candidate(repo, 0)]
        if not words:
            return {}
        try:
            found = await asyncio.wait_for(self.source.resolve(words), self.timeout_seconds)
        except (PilothouseError, OSError, TimeoutError) as exc:
            log.debug("The repository list was not read (%s); owners stay as written.", exc)
            return {}
        return {m.text.lower(): m.name for m in found if m.kind == REPOSITORY}

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        response = await handler(request)
        final = final_message(response)
        holders = await self._holders(list(final.tool_calls) if final is not None else [])
        if not holders:
            return response

        def held_by_its_owner(call: ToolCall) -> ToolCall:
            owner, repo = call["args"].get("owner"), call["args"].get("repo")
            if not isinstance(owner, str) or not isinstance(repo, str):
                return call
            if f"{owner}/{repo}".lower() in holders:  # the owner given holds it
                return call
            holder = holders.get(repo.lower())
            if holder is None:
                return call
            return {**call, "args": {**call["args"], "owner": holder.partition("/")[0]}}

        return with_revised_calls(response, held_by_its_owner)
