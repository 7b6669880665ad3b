"""Search across applications, projects, application sets and clusters, within a memory bound.

The whole fleet is scanned (every item of every requested type, not the first 100 as the
seed's anchor did), streamed type after type. Matches are counted per type; only the rows of the
requested page are kept. Above `MAX_SEARCH_RESULTS` the answer is the seed's error payload with a
per-type breakdown; above `WARN_SEARCH_RESULTS` it carries a warning.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pilothouse.errors import UserInputError
from pilothouse.tools.argocd import rows
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.paging import PageWindow, counts, page_request
from pilothouse.tools.tool_server import RequestRejected

_REGEX_HINTS = frozenset("^$*+?[](){}|\\")
MAX_QUERY_LENGTH = 200
_TYPE_ALIASES = {"app": "applications", "apps": "applications", "application": "applications",
                 "project": "projects", "appset": "applicationsets",
                 "appsets": "applicationsets", "applicationset": "applicationsets",
                 "cluster": "clusters"}


@dataclass(frozen=True)
class Limits:
    """The configurable result caps (`MAX_SEARCH_RESULTS`, `WARN_SEARCH_RESULTS`)."""

    max_results: int = 1000
    warn_results: int = 500


class Matcher:
    """Text or regex matching over (field, value) pairs; regex is detected from the query."""

    def __init__(self, query: str, *, case_sensitive: bool = False) -> None:
        query = query.strip()
        if not query:
            raise UserInputError("query is empty.", hint="Search for a name, label, repo, ...")
        if len(query) > MAX_QUERY_LENGTH:
            raise UserInputError(f"query is longer than {MAX_QUERY_LENGTH} characters.",
                                 hint="Search for a distinctive word instead.")
        self.regex = any(char in _REGEX_HINTS for char in query)
        flags = 0 if case_sensitive else re.IGNORECASE
        try:
            pattern = re.compile(query if self.regex else re.escape(query), flags)
        except re.error as exc:
            raise UserInputError(f"query {query!r} is not a valid regular expression ({exc}).",
                                 hint="Fix the pattern, or search for plain text without "
                                      "^ $ * + ? [ ] ( ) { } | \\.") from None
        self._search = pattern.search

    def first_match(self, fields: Iterable[tuple[str, str]]) -> str | None:
        """The name of the first field that matches, or None."""
        for name, value in fields:
            if value and self._search(value):
                return name
        return None


def resource_types(requested: Sequence[str] | str | None) -> tuple[str, ...]:
    """Validate `resource_types`; singular forms, aliases and "a,b" are accepted; none = all."""
    if isinstance(requested, str):
        requested = requested.split(",")
    if not requested or not any(r.strip() for r in requested):
        return rows.RESOURCE_TYPES
    chosen: list[str] = []
    for raw in (r for r in requested if r.strip()):
        name = raw.strip().lower()
        name = _TYPE_ALIASES.get(name, name)
        if name not in rows.RESOURCE_TYPES:
            raise UserInputError(f"unknown resource type {raw!r}.",
                                 hint=f"Use any of: {', '.join(rows.RESOURCE_TYPES)}.")
        if name not in chosen:
            chosen.append(name)
    return tuple(chosen)


def _fields(kind: str) -> dict[str, str]:
    return {"fields": rows.fields_param(rows.APP_SEARCH_FIELDS)} if kind == "applications" else {}


class SearchTooBroad(RequestRejected):
    """A query matched more than `MAX_SEARCH_RESULTS`: nothing is listed, the counts are."""


def _rejection(query: str, total: int, breakdown: dict[str, int], limits: Limits,
               kinds: tuple[str, ...]) -> SearchTooBroad:
    biggest = max(breakdown, key=lambda k: breakdown[k])
    suggestion = ("Refine the search: use a longer or more specific term (a full app name, "
                  "team or label like env=production)")
    if len(kinds) > 1:
        suggestion += f", or set resource_types to one type (most matches: {biggest})"
    suggestion += ", or use list_applications with project, sync_status or health_status."
    return SearchTooBroad(
        f"Query {query!r} matched {total:,} resources, more than the limit of "
        f"{limits.max_results:,}.", hint=suggestion,
        details={"query": query, "total_matches": total, "limit": limits.max_results,
                 "breakdown": breakdown})


async def search_resources(client: ArgoCDClient, query: str, *,
                           types: Sequence[str] | str | None = None, case_sensitive: bool = False,
                           page: int = 1, page_size: int = 20,
                           limits: Limits | None = None) -> dict[str, Any]:
    """Search `query` over the meaningful fields of every resource of the requested types."""
    limits = limits or Limits()
    request = page_request(page, page_size)
    matcher = Matcher(query, case_sensitive=case_sensitive)
    kinds = resource_types(types)
    window: PageWindow[dict[str, Any]] = PageWindow(request)
    breakdown = dict.fromkeys(kinds, 0)
    by_health: Counter[str] = Counter()
    by_sync: Counter[str] = Counter()

    async def scan(kind: str) -> None:
        fields_of = rows.SEARCH_FIELDS[kind]
        row_of: Callable[[dict[str, Any]], dict[str, Any]] = rows.ROW_BUILDERS[kind]

        def take(item: dict[str, Any]) -> None:
            matched = matcher.first_match(fields_of(item))
            if matched is None:
                return
            breakdown[kind] += 1
            if kind == "applications":
                sync, health = rows.app_status(item)
                by_health[health] += 1
                by_sync[sync] += 1
            window.offer(lambda: {"type": rows.SINGULAR[kind], **row_of(item),
                                  "matched": matched})

        await client.scan(rows.ENDPOINTS[kind], take, params=_fields(kind))

    # One type after another: only one list is ever streaming, and only the page is kept.
    for kind in kinds:
        await scan(kind)

    total = window.total
    if total > limits.max_results:
        raise _rejection(query.strip(), total, breakdown, limits, kinds)
    summary: dict[str, Any] = {"by_type": breakdown}
    if "applications" in kinds and breakdown["applications"]:
        summary["applications"] = {"health": counts(by_health), "sync": counts(by_sync)}
    extra: dict[str, Any] = {"query": query.strip(), "mode": "regex" if matcher.regex else "text"}
    if total > limits.warn_results:
        extra["warning"] = (f"Broad query: {total:,} matches (over {limits.warn_results:,}). "
                            "Showing one page; refine the query to narrow it.")
    if total == 0:
        extra["hint"] = "No matches. Try a shorter term, another spelling, or list_applications."
    return window.answer(summary, **extra)
