"""Paging, output fitting and matching: the pure pieces behind the tools."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pilothouse.errors import UserInputError
from pilothouse.tools.argocd.output import fit
from pilothouse.tools.argocd.paging import PageWindow, page_request, pagination
from pilothouse.tools.argocd.search import Matcher, resource_types
from pilothouse.tools.mcp_support import dumps


def test_819_items_at_20_per_page_are_41_pages() -> None:
    assert pagination(1, 20, 819) == {"page": 1, "page_size": 20, "total_items": 819,
                                      "total_pages": 41, "has_next": True, "has_prev": False}
    assert pagination(41, 20, 819)["has_next"] is False
    assert pagination(1, 20, 0)["total_pages"] == 1


@given(total=st.integers(0, 5000), size=st.integers(1, 100), page=st.integers(1, 60))
def test_the_window_keeps_exactly_the_page_and_builds_nothing_else(total: int, size: int,
                                                                   page: int) -> None:
    window: PageWindow[int] = PageWindow(page_request(page, size))
    built: list[int] = []
    for index in range(total):
        window.offer(lambda index=index: built.append(index) or index)  # type: ignore[misc]
    assert window.total == total
    assert window.rows == built == list(range(total))[(page - 1) * size: page * size]


def test_page_requests_are_validated_and_clamped() -> None:
    assert page_request(2, 500).page_size == 100
    assert "500" in page_request(2, 500).notes[0]
    for page, size in ((0, 20), (-1, 20), (1, 0), (1, -5)):
        with pytest.raises(UserInputError):
            page_request(page, size)


def test_fit_keeps_whole_items_and_says_how_to_see_the_rest() -> None:
    answer = {"pagination": {"page": 1}, "items": [{"name": f"app-{i:03d}", "x": "y" * 80}
                                                   for i in range(100)]}
    fitted = fit(answer, 2_000)
    assert len(dumps(fitted)) <= 2_000
    kept = fitted["truncated"]["shown"]
    assert fitted["items"] == answer["items"][:kept] and fitted["pagination"] == {"page": 1}
    assert f"page_size={kept}" in fitted["truncated"]["note"]
    assert fit({"items": [1, 2]}, 2_000) == {"items": [1, 2]}


def test_fit_keeps_the_newest_log_lines() -> None:
    answer = {"application": "a", "lines": [f"line {i} " + "x" * 50 for i in range(200)]}
    fitted = fit(answer, 1_500)
    assert fitted["lines"][-1] == answer["lines"][-1]
    assert len(json.dumps(fitted, separators=(",", ":"))) <= 1_500


def test_matcher_detects_regex_and_escapes_plain_text() -> None:
    assert Matcher("payments.api").first_match([("name", "payments-api")]) is None
    assert Matcher("payments.api").regex is False
    regex = Matcher("^pay.*-(prod|staging)$")
    assert regex.regex and regex.first_match([("path", "x"), ("name", "pay-api-prod")]) == "name"
    assert Matcher("Prod").first_match([("env", "production")]) == "env"
    assert Matcher("Prod", case_sensitive=True).first_match([("env", "production")]) is None
    with pytest.raises(UserInputError, match="not a valid regular expression"):
        Matcher("[unclosed")


def test_resource_types_accept_aliases_and_reject_unknowns() -> None:
    assert resource_types(None) == ("applications", "projects", "applicationsets", "clusters")
    assert resource_types(["app", "cluster", "apps"]) == ("applications", "clusters")
    assert resource_types("appsets, projects") == ("applicationsets", "projects")
    with pytest.raises(UserInputError, match="unknown resource type 'pods'"):
        resource_types(["pods"])
