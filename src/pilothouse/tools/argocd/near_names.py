"""An application that is not there: the names in the live inventory it most likely meant.

People mistype names and shorten them ("shop-apo", "shop-api-bl"). A tool that only says
"not found" leaves the model to guess a name, or to list the fleet page by page looking for one;
the inventory itself knows the candidates. Each unknown name is compared with every
application's name as the list streams past (names only, by `fields` projection), keeping the
few closest in a bounded heap, so the memory is the same at 100 or 100,000 applications.

Close means one of: the same name once case, spaces, dots and underscores are normalized; a
name that contains the one asked for, or is contained in it, as whole hyphen-separated parts
("shop-api" in "shop-api-blue"); or a similarity ratio of 0.75 or more. Nothing is
picked for the caller: an unknown name is never replaced by a guess, the error names the
candidates and the person (or the model, with their words) chooses.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Awaitable, Callable
from difflib import SequenceMatcher
from typing import Any

from mcp.types import CallToolResult

from pilothouse.errors import PilothouseError
from pilothouse.tools.argocd import rows
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.errors import NotFound
from pilothouse.tools.http_api.server import Payload, ToolRunner, View

#: How many candidates an error names.
MAX_CANDIDATES = 3
_MIN_RATIO = 0.75
#: Candidates within this share of the best one's closeness are named beside it.
_CLEAR = 0.9
_SEPARATORS = re.compile(r"[\s_.]+")


def normal(name: str) -> str:
    """`name` as names are compared: lower case, separators as hyphens."""
    return _SEPARATORS.sub("-", name.strip().lower())


def closeness(wanted: str, name: str) -> float:
    """How close `name` is to `wanted`, 0 (not a candidate) to 2 (the same, normalized)."""
    a, b = normal(wanted), normal(name)
    if a == b:
        return 2.0
    parts_a, parts_b = a.split("-"), b.split("-")
    if _contains(parts_b, parts_a) or _contains(parts_a, parts_b):
        return 1.0 + min(len(a), len(b)) / max(len(a), len(b)) / 2
    ratio = SequenceMatcher(None, a, b).ratio()
    return ratio if ratio >= _MIN_RATIO else 0.0


def _contains(parts: list[str], run: list[str]) -> bool:
    """Whether `run` occurs in `parts` as consecutive whole parts."""
    return any(parts[i:i + len(run)] == run for i in range(len(parts) - len(run) + 1))


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
