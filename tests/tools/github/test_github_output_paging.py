"""Link headers, the pagination block, and fitting answers into MAX_TOOL_OUTPUT_SIZE."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pilothouse.errors import UserInputError
from pilothouse.tools.github.output import fit
from pilothouse.tools.github.paging import page_request, pagination, parse_link
from pilothouse.tools.mcp_support import dumps

REFERENCE = Path(__file__).parents[2] / "sandbox" / "github" / "github_pull_simple_example.json"


def test_parse_link_reads_githubs_header() -> None:
    header = json.loads(REFERENCE.read_text())["link_header_example"]
    assert parse_link(header) == {"next": 2, "last": 7}
    both = ('<https://ghe.acme/api/v3/repositories/1/pulls?page=3&per_page=20>; rel="prev", '
            '<https://ghe.acme/api/v3/repositories/1/pulls?per_page=20&page=5>; rel="next"')
    assert parse_link(both) == {"prev": 3, "next": 5}
    assert parse_link(None) == {} and parse_link("garbage") == {}


def test_pagination_knows_the_last_page_only_when_github_says_so() -> None:
    request = page_request(2, 20)
    assert pagination(request, {"prev": 1, "next": 3, "last": 3, "first": 1}, 20) == {
        "page": 2, "per_page": 20, "has_next": True, "has_prev": True, "last_page": 3,
        "total_pages_known": True}
    last = pagination(page_request(3, 20), {"prev": 2, "first": 1}, 12)
    assert last["last_page"] == 3 and not last["has_next"]
    beyond = pagination(page_request(9, 20), {"prev": 8, "first": 1}, 0)
    assert beyond["last_page"] is None and beyond["total_pages_known"] is False
    searched = pagination(page_request(1, 20), {"next": 2, "last": 50}, 20, total_count=5000)
    assert searched["last_page"] == 50 and searched["total_items"] == 5000


def test_page_requests_are_validated_and_clamped() -> None:
    assert page_request(1, 500).per_page == 100
    assert "reduced to the maximum of 100" in page_request(1, 500).notes[0]
    for page, per_page in ((0, 20), (1, 0)):
        with pytest.raises(UserInputError):
            page_request(page, per_page)


def test_fit_cuts_whole_items_and_says_which_per_page_fits() -> None:
    answer = {"pagination": {"page": 1}, "items": [{"n": k, "t": "x" * 90} for k in range(50)]}
    fitted = fit(answer, 2000)
    assert len(dumps(fitted)) <= 2000
    shown = fitted["truncated"]["shown"]
    assert fitted["items"] == answer["items"][:shown] and 0 < shown < 50
    assert f"per_page={shown}" in fitted["truncated"]["note"]
    assert fit(answer, 100_000) is answer


def test_fit_drops_the_oldest_log_lines_first() -> None:
    tail = [f"line {k:04d} " + "x" * 40 for k in range(400)]
    answer = {"run": {"id": 1}, "steps": [{"step": f"s{k}", "failed": k == 3}
                                          for k in range(30)],
              "failing_steps": [{"job": "j", "step": "s", "tail": tail}]}
    fitted = fit(answer, 4000)
    kept = fitted["failing_steps"][0]["tail"]
    assert len(dumps(fitted)) <= 4000
    assert kept == tail[-len(kept):] and kept[-1] == tail[-1]
    assert fitted["steps"] == [{"step": "s3", "failed": True}]
    assert fitted["truncated"]["dropped_lines"] == len(tail) - len(kept)
