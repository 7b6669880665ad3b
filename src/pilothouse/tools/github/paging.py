"""GitHub paging: validated page requests, `Link` headers, and the `pagination` block tools return.

GitHub announces pages only in the `Link` header (`rel` next/prev/last/first) and gives no
total for plain lists, so a tool can say "page 1 of 3" only when `rel="last"` names the last
page (or when this page is the last). Search answers carry `total_count`, capped by GitHub at
1,000 reachable results.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pilothouse.tools.http_api.paging import checked_page

DEFAULT_PER_PAGE = 20
MAX_PER_PAGE = 100
#: GitHub search serves only the first 1,000 results of any query.
SEARCH_RESULT_CAP = 1000
_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="?([^",;]+)"?')


@dataclass(frozen=True)
class PageRequest:
    """A validated page request, with notes on anything that was adjusted."""

    page: int
    per_page: int
    notes: tuple[str, ...] = ()

    def params(self) -> dict[str, int]:
        return {"page": self.page, "per_page": self.per_page}


def page_request(page: int, per_page: int, *, maximum: int = MAX_PER_PAGE) -> PageRequest:
    """Validate `page`/`per_page`; a per_page above `maximum` is clamped, and a note says so."""
    size, notes = checked_page(page, per_page, size_name="per_page", default=DEFAULT_PER_PAGE,
                               maximum=maximum)
    return PageRequest(page, size, notes)


def parse_link(header: str | None) -> dict[str, int]:
    """`rel` -> page number from a `Link` header (GitHub or GitHub Enterprise)."""
    pages: dict[str, int] = {}
    for url, rel in _LINK.findall(header or ""):
        values = parse_qs(urlsplit(url).query).get("page")
        if values and values[0].isdigit():
            for name in rel.split():
                pages[name] = int(values[0])
    return pages


def pagination(request: PageRequest, links: dict[str, int], count: int,
               total_count: int | None = None) -> dict[str, Any]:
    """The `pagination` block: from the `Link` header, or from `total_count` for search."""
    has_next = "next" in links
    has_prev = "prev" in links or request.page > 1
    if total_count is not None:
        reachable = min(total_count, SEARCH_RESULT_CAP)
        last: int | None = max(1, math.ceil(reachable / request.per_page))
    elif "last" in links:
        last = links["last"]
    elif not has_next and (count or request.page == 1):
        last = request.page  # this page is the last one
    else:
        last = None  # past the end: GitHub does not say where the end is
    block: dict[str, Any] = {"page": request.page, "per_page": request.per_page,
                             "has_next": has_next, "has_prev": has_prev, "last_page": last,
                             "total_pages_known": last is not None}
    if total_count is not None:
        block["total_items"] = total_count
    return block


def page_notes(request: PageRequest, block: dict[str, Any], count: int) -> list[str]:
    """Notes for the model: clamping, and a page past the end."""
    notes = list(request.notes)
    if count == 0 and request.page > 1:
        last = block.get("last_page")
        notes.append(f"page {request.page} is past the last page" +
                     (f" ({last})." if last else "; ask for page 1."))
    return notes
