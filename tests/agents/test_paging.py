"""Which page a follow-up asks for, after a "PAGE N of M" view (the product's paging protocol)."""

from __future__ import annotations

import pytest

from pilothouse.agents.paging import asks_for_a_page, wanted_page


@pytest.mark.parametrize(("question", "shown", "pages", "page"), [
    ("next page", 1, 41, 2),
    ("show page 7", 1, 41, 7),
    ("and the previous one?", 3, 41, 2),
    ("the last page please", 1, 41, 41),
    ("the rest", 40, 41, 41),
    ("next page", 41, 41, 41),      # never past the end
    ("previous page", 1, 41, 1),    # nor before the start
    ("page 99", 1, 41, 41),
    ("next page", 2, None, 3),      # a page count the view did not know
])
def test_the_page_asked_for(question: str, shown: int, pages: int | None, page: int) -> None:
    assert asks_for_a_page(question)
    assert wanted_page(question, shown, pages) == page


@pytest.mark.parametrize("question", [
    "show me more about the checkout app", "restart the rest-api pods", "what is a page size?"])
def test_questions_that_ask_for_no_page(question: str) -> None:
    assert not asks_for_a_page(question)
