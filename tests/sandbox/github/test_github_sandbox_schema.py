"""Sandbox payloads have GitHub's shapes: the reference pull request's keys, nesting and size."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

REFERENCE = json.loads((Path(__file__).parent / "github_pull_simple_example.json").read_text())
PULLS = "/repos/acme-corp/payments-api/pulls"
#: Keys `GET /pulls/{n}` adds to a list item (GitHub's "pull-request" vs "pull-request-simple").
SINGLE_ONLY = {"merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments",
               "review_comments", "maintainer_can_modify", "commits", "additions", "deletions",
               "changed_files"}


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path in `value`; lists contribute their first element's keys."""
    paths: set[str] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            paths.add(prefix + key)
            paths |= key_paths(child, f"{prefix}{key}.")
    elif isinstance(value, list) and value:
        paths |= key_paths(value[0], prefix + "[].")
    return paths


def _with_reviewer_and_label(items: list[dict[str, Any]]) -> dict[str, Any]:
    return next(i for i in items if i["requested_reviewers"] and i["labels"])


def test_a_listed_pull_request_has_exactly_the_reference_keys(gh: httpx.Client) -> None:
    items = gh.get(PULLS, params={"per_page": 100}).json()
    item = _with_reviewer_and_label(items)
    assert list(item) == list(REFERENCE["item"])  # same keys, same order
    assert key_paths(item) == key_paths(REFERENCE["item"])


def test_a_listed_pull_request_is_as_heavy_as_githubs(gh: httpx.Client) -> None:
    items = gh.get(PULLS, params={"per_page": 100}).json()
    reference = len(json.dumps(REFERENCE["item"], separators=(",", ":")))
    sizes = [len(json.dumps(i, separators=(",", ":"))) for i in items]
    assert reference > 17_000
    # Full user, head and base objects: within 15% of the real thing, never a stub.
    assert min(sizes) > 0.80 * reference
    assert max(sizes) < 1.20 * reference


def test_types_match_the_reference(gh: httpx.Client) -> None:
    item = _with_reviewer_and_label(gh.get(PULLS, params={"per_page": 100}).json())

    def types(value: Any, reference: Any, path: str) -> None:
        if reference is None or value is None:
            return  # nullable fields (milestone, closed_at, ...)
        assert type(value) is type(reference), path
        if isinstance(reference, dict):
            for key in reference:
                types(value[key], reference[key], f"{path}.{key}")
        elif isinstance(reference, list) and reference and value:
            types(value[0], reference[0], f"{path}[]")

    types(item, REFERENCE["item"], "item")


def test_a_single_pull_request_adds_the_detail_fields(gh: httpx.Client) -> None:
    number = gh.get(PULLS).json()[0]["number"]
    single = gh.get(f"{PULLS}/{number}").json()
    assert set(single) == set(REFERENCE["item"]) | SINGLE_ONLY
    assert single["changed_files"] == len(gh.get(f"{PULLS}/{number}/files").json())


def test_the_link_header_has_the_references_form(gh: httpx.Client) -> None:
    pattern = re.compile(r'^<https?://[^>]+/repositories/\d+/pulls\?[^>]*page=\d+>; rel="next", '
                         r'<https?://[^>]+/repositories/\d+/pulls\?[^>]*page=\d+>; rel="last"$')
    assert pattern.match(REFERENCE["link_header_example"])
    link = gh.get(PULLS, params={"state": "all", "per_page": 100}).headers["link"]
    assert pattern.match(link), link


def test_issue_search_and_run_items_have_githubs_keys(gh: httpx.Client) -> None:
    issues = gh.get("/repos/acme-corp/payments-api/issues", params={"per_page": 100}).json()
    pull = next(i for i in issues if "pull_request" in i)
    issue = next(i for i in issues if "pull_request" not in i)
    assert set(pull) - set(issue) == {"pull_request", "draft"}
    assert set(pull["pull_request"]) == {"url", "html_url", "diff_url", "patch_url", "merged_at"}
    assert pull["html_url"].endswith(f"/pull/{pull['number']}")
    found = gh.get("/search/issues", params={"q": "repo:acme-corp/payments-api"}).json()
    assert set(found) == {"total_count", "incomplete_results", "items"}
    assert found["items"][0]["score"] == 1.0
    runs = gh.get("/repos/acme-corp/payments-api/actions/runs").json()
    assert set(runs) == {"total_count", "workflow_runs"}
    assert {"id", "name", "head_branch", "status", "conclusion", "run_number", "event",
            "logs_url", "head_commit", "repository"} <= set(runs["workflow_runs"][0])
    review = gh.get(f"{PULLS}/{_reviewed(gh)}/reviews").json()[0]
    assert {"id", "user", "state", "submitted_at", "commit_id", "_links"} <= set(review)
    file = gh.get(f"{PULLS}/{pull['number']}/files").json()[0]
    assert set(file) == {"sha", "filename", "status", "additions", "deletions", "changes",
                         "blob_url", "raw_url", "contents_url", "patch"}


def _reviewed(gh: httpx.Client) -> int:
    items = gh.get("/search/issues",
                   params={"q": "repo:acme-corp/payments-api is:pr review:approved"}).json()
    return int(items["items"][0]["number"])
