"""An application that is not there: the names in the live inventory it most likely meant.

People mistype names and shorten them ("shop-apo", "shop-api-bl"). A tool that only says
"not found" leaves the model to guess a name, or to list the fleet page by page looking for one;
the inventory itself knows the candidates. Each unknown name is compared with every
application's name as the list streams past (names only, by `fields` projection), keeping the
few closest in a bounded heap, so the memory is the same at 100 or 100,000 applications.

Close is `tools.closeness`: the same name normalized, whole parts of one in the other
("shop-api" in "shop-api-blue"), or a similarity ratio of 0.75 or more. Nothing is
picked for the caller: an unknown name is never replaced by a guess, the error names the
candidates and the person (or the model, with their words) chooses.
"""

from __future__ import annotations

import heapq
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.types import CallToolResult

from pilothouse.errors import PilothouseError
from pilothouse.tools.argocd import rows
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.errors import NotFound
from pilothouse.tools.closeness import closeness
from pilothouse.tools.http_api.server import Payload, ToolRunner, View

#: How many candidates an error names.
MAX_CANDIDATES = 3
#: Candidates within this share of the best one's closeness are named beside it.
_CLEAR = 0.9


async def near_names(client: ArgoCDClient, wanted: str,
                     limit: int = MAX_CANDIDATES) -> list[str]:
    """The applications' names closest to `wanted`, closest first (none: nothing is close)."""
    best: list[tuple[float, str]] = []

    def take(item: dict[str, Any]) -> None:
        name = (item.get("metadata") or {}).get("name")
        if not isinstance(name, str):
            return
        score = closeness(wanted, name)
        if score <= 0:
            return
        entry = (score, name)  # the heap's smallest is the weakest kept
        if len(best) < limit:
            heapq.heappush(best, entry)
        elif entry > best[0]:
            heapq.heapreplace(best, entry)

    await client.scan(rows.ENDPOINTS["applications"], take,
                      params={"fields": rows.fields_param(("metadata.name",))})
    ranked = sorted(best, reverse=True)
    # One clear best ("prodution" for "production") is named alone, not beside far ones.
    return [name for score, name in ranked if ranked and score >= _CLEAR * ranked[0][0]]


def did_you_mean(candidates: list[str]) -> str:
    """The hint that names `candidates` (or says how to find a name when there are none)."""
    find = "search_argocd_resources or list_applications"
    if not candidates:
        return f"No application has a similar name. Check the exact name with {find}."
    names = " or ".join(f"'{c}'" for c in candidates)
    return f"Did you mean {names}? If none is the one, check the exact name with {find}."


class SuggestingRunner(ToolRunner[ArgoCDClient]):
    """The Argo CD tools' runner: an application that is not there names the closest ones."""

    async def __call__(self, work: Callable[[ArgoCDClient], Awaitable[Payload]],
                       view: View | None = None) -> CallToolResult:
        try:
            return await super().__call__(work, view)
        except NotFound as error:
            if error.application is None:
                raise
            try:
                candidates = await near_names(self._clients.get(), error.application)
            except PilothouseError:
                raise error from None  # the listing failed too: the plain error stands
            raise NotFound(error.message, hint=did_you_mean(candidates),
                           application=error.application) from None
