"""The GitHub MCP server as agents run it: a subprocess on stdio, against the sandbox over HTTP.

These are the seed's scenarios end to end: 50+ pull requests arrive one page at a time in
~0.5 KB rows, not as 18 KB objects that overflow the context.
"""

from __future__ import annotations

import json
import socket

import httpx
from github_harness import OpenTools

from pilothouse.sandbox.github import RunningGitHubSandbox

MAX_ROW = 1500


async def test_fifty_two_open_pull_requests_arrive_in_three_small_pages(
        open_stdio: OpenTools, github: RunningGitHubSandbox) -> None:
    repo = github.world.repos["payments-api"]
    expected = sorted(p.number for p in repo.pulls if p.state == "open")
    assert len(expected) > 50
    seen: list[int] = []
    async with open_stdio() as tools:
        first = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
        assert not first.is_error
        assert first.payload["pagination"] == {
            "page": 1, "per_page": 20, "has_next": True, "has_prev": False, "last_page": 3,
            "total_pages_known": True}
        page = first
        while True:
            seen += [item["number"] for item in page.payload["items"]]
            if not page.payload["pagination"]["has_next"]:
                break
            page = await tools("list_pull_requests", owner="acme-corp", repo="payments-api",
                               page=page.payload["pagination"]["page"] + 1)
        assert page.payload["pagination"]["page"] == 3
        assert sorted(seen) == expected
        assert len(first.text) < 10_000  # the whole page fits MAX_TOOL_OUTPUT_SIZE
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {github.token}"}) as http:
        raw = (await http.get(f"{github.url}/repos/acme-corp/payments-api/pulls",
                              params={"per_page": 20})).json()
    for row, original in zip(first.payload["items"], raw, strict=True):
        assert row["number"] == original["number"]
        size = len(json.dumps(row, separators=(",", ":")))
        assert size < MAX_ROW < len(json.dumps(original)) / 10
        assert set(row) == {"number", "title", "state", "draft", "author", "head", "base",
                            "labels", "requested_reviewers", "created_at", "updated_at",
                            "html_url"}


async def test_per_page_500_is_clamped_to_100_and_says_so(open_stdio: OpenTools) -> None:
    async with open_stdio(max_output=200_000) as tools:
        answer = await tools("list_pull_requests", owner="acme-corp", repo="infra-live",
                             state="all", per_page=500)
    assert answer.payload["pagination"]["per_page"] == 100
    assert len(answer.payload["items"]) == 100
    assert answer.payload["pagination"]["last_page"] == 2
    assert "reduced to the maximum of 100" in answer.payload["notes"][0]


async def test_review_queue_search_and_a_failing_runs_log(open_stdio: OpenTools,
                                                          github: RunningGitHubSandbox) -> None:
    repo = github.world.repos["infra-live"]
    waiting = {p.number: list(p.requested_reviewers) for p in repo.pulls
               if p.state == "open" and not p.draft and p.review_decision == "REVIEW_REQUIRED"}
    payments = github.world.repos["payments-api"]
    failed = [r for r in payments.runs if r.conclusion == "failure"][-2]  # a normal-size log
    async with open_stdio() as tools:
        queue = await tools("list_pull_requests_awaiting_review", owner="acme-corp",
                            repo="infra-live")
        rest = await tools("list_pull_requests_awaiting_review", owner="acme-corp",
                           repo="infra-live", page=2)
        found = await tools("search_issues", query="repo:acme-corp/infra-live is:pr is:open "
                                                   "label:env:production")
        runs = await tools("list_workflow_runs", owner="acme-corp", repo="payments-api",
                           status="failure", per_page=5)
        logs = await tools("get_workflow_run_logs", owner="acme-corp", repo="payments-api",
                           run_id=failed.id, tail_lines=30)
    rows = queue.payload["items"] + rest.payload["items"]
    assert {i["number"]: i["requested_reviewers"] for i in rows} == waiting
    assert queue.payload["pagination"]["total_items"] == len(waiting) > 20
    assert queue.payload["pagination"]["last_page"] == 2 and "truncated" not in queue.payload
    created = [i["created_at"] for i in rows]
    assert created == sorted(created)  # the longest waiting first
    assert found.payload["pagination"]["total_items"] == sum(
        p.state == "open" and "env:production" in p.labels for p in repo.pulls)
    assert runs.payload["pagination"]["total_items"] == sum(
        r.conclusion == "failure" for r in payments.runs)
    assert {r["conclusion"] for r in runs.payload["items"]} == {"failure"}
    (step,) = logs.payload["failing_steps"]
    assert len(step["tail"]) == 30
    assert step["tail"][-1] == "##[error]Process completed with exit code 1."
    assert step["tail"][-1 - len(failed.failure):-1] == list(failed.failure)
    assert not any(line.startswith("20") for line in step["tail"])  # timestamps removed


async def test_clear_errors_for_a_missing_repo_and_a_spent_rate_limit(
        open_stdio: OpenTools, github: RunningGitHubSandbox) -> None:
    async with open_stdio(max_wait=1.0) as tools:
        missing = await tools("list_pull_requests", owner="acme-corp", repo="payment-api")
        github.limits.exhaust(reset_in=900)
        limited = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
        github.limits.restore()
    assert missing.is_error and missing.payload["kind"] == "UserInputError"
    assert "acme-corp/payment-api was not found" in missing.payload["error"]
    assert "owner and repository name" in missing.payload["suggestion"]
    assert limited.is_error and limited.payload["kind"] == "RateLimitError"
    assert "rate limit for core requests is exhausted" in limited.payload["error"]
    assert "resets at" in limited.payload["error"] and "(in 15 min)" in limited.payload["error"]
    assert limited.payload["resets_at"].endswith("Z")


async def test_a_rate_limit_that_resets_soon_is_waited_out(
        open_stdio: OpenTools, github: RunningGitHubSandbox) -> None:
    async with open_stdio(max_wait=10.0) as tools:
        github.limits.exhaust(reset_in=1.5)
        answer = await tools("list_pull_requests", owner="acme-corp", repo="payments-api",
                             per_page=5)
    assert not answer.is_error
    assert len(answer.payload["items"]) == 5


async def test_a_bad_token_is_a_configuration_error_that_never_shows_the_token(
        open_stdio: OpenTools) -> None:
    forged = "ghp_forgedTokenThatGitHubDoesNotKnow99"
    async with open_stdio(token=forged) as tools:
        answer = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
    assert answer.is_error and answer.payload["kind"] == "ConfigurationError"
    assert "rejected the token (Bad credentials)" in answer.payload["error"]
    assert "GITHUB_TOKEN" in answer.payload["suggestion"]
    assert forged not in answer.text


async def test_a_dead_server_is_reported_as_unreachable(open_stdio: OpenTools) -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with open_stdio(api_url=dead) as tools:
        answer = await tools("search_issues", query="is:pr")
    assert answer.is_error and answer.payload["kind"] == "UpstreamError"
    assert answer.payload["error"] == f"GitHub is unreachable at {dead} (connection failed)."
    assert "GITHUB_API_URL" in answer.payload["suggestion"]
