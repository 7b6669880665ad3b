"""Client-side paging over a stream: count every match, keep only the requested page.

Argo CD returns whole lists, so the page is cut while the list streams past: `PageWindow`
counts every matching item (for `total_items`) and builds rows only for those inside the window.
A page of 20 out of 100,000 applications keeps 20 rows in memory, never the other 99,980.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pilothouse.tools.http_api.paging import checked_page

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
T = TypeVar("T")


@dataclass(frozen=True)
class PageRequest:
    """A validated page request, with notes on anything that was adjusted."""

    page: int
    page_size: int
    notes: tuple[str, ...] = ()

    @property
    def start(self) -> int:
        return (self.page - 1) * self.page_size

    @property
    def end(self) -> int:
        return self.start + self.page_size


def page_request(page: int, page_size: int, *, maximum: int = MAX_PAGE_SIZE) -> PageRequest:
    """Validate `page`/`page_size`; a page_size above `maximum` is clamped, and the note says so."""
    size, notes = checked_page(page, page_size, size_name="page_size",
                               default=DEFAULT_PAGE_SIZE, maximum=maximum)
    return PageRequest(page, size, notes)


def pagination(page: int, page_size: int, total: int) -> dict[str, Any]:
    """The `pagination` block every list answer carries."""
    total_pages = max(1, math.ceil(total / page_size))
    return {"page": page, "page_size": page_size, "total_items": total,
            "total_pages": total_pages, "has_next": page < total_pages, "has_prev": page > 1}


class PageWindow(Generic[T]):
    """Counts offered items and keeps the rows that fall on the requested page."""

    def __init__(self, request: PageRequest) -> None:
        self.request = request
        self.total = 0
        self.rows: list[T] = []

    def offer(self, build: Callable[[], T]) -> None:
        """Count one match; `build` runs only if the match is on the page."""
        if self.request.start <= self.total < self.request.end:
            self.rows.append(build())
        self.total += 1

    def answer(self, summary: dict[str, Any], **extra: Any) -> dict[str, Any]:
        """A list answer: pagination, summary, notes, then the rows (last, so a size guard
        that trims the tail trims rows, not the totals)."""
        request = self.request
        block = pagination(request.page, request.page_size, self.total)
        notes = list(request.notes)
        if request.page > block["total_pages"]:
            notes.append(f"page {request.page} is past the last page ({block['total_pages']}).")
        answer: dict[str, Any] = {"pagination": block, "summary": summary, **extra}
        if notes:
            answer["notes"] = notes
        answer["items"] = self.rows
        return answer


def counts(counter: Counter[str]) -> dict[str, int]:
    """A counter as a plain dict, largest first."""
    return dict(counter.most_common())
