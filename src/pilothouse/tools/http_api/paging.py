"""Validate a tool's page request: pages count from 1, an oversized page is clamped with a note.

Both APIs take a page number and a page size (Argo CD's tools call it `page_size`, GitHub's
`per_page`, after the API's own parameter); what is checked and what the model is told is the
same.
"""

from __future__ import annotations

from pilothouse.errors import UserInputError


def checked_page(page: int, size: int, *, size_name: str, default: int,
                 maximum: int) -> tuple[int, tuple[str, ...]]:
    """(the page size to use, notes on any adjustment); a bad request is a `UserInputError`."""
    if page < 1:
        raise UserInputError(f"page must be 1 or more, not {page}.",
                             hint="Pages are numbered from 1; ask for page=1.")
    if size < 1:
        raise UserInputError(f"{size_name} must be between 1 and {maximum}, not {size}.",
                             hint=f"Use the default of {default}.")
    if size > maximum:
        return maximum, (f"{size_name} {size} was reduced to the maximum of {maximum}; "
                         "ask for the next page to see more.",)
    return size, ()
