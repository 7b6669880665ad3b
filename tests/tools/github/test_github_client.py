"""The HTTP client on its own: memory bounds, byte caps, quota memory and secret hygiene."""

from __future__ import annotations

import json
import logging
import tracemalloc
from typing import Any

import httpx
import pytest

from pilothouse.errors import ConfigurationError, UpstreamError
from pilothouse.sandbox.argocd.server import running_app
from pilothouse.sandbox.github import RunningGitHubSandbox
from pilothouse.tools.github import GitHubClient, RateLimitError
from pilothouse.tools.github.operations import get_workflow_run_logs
from pilothouse.tools.github.shapes import pull_summary

PULLS = "/repos/acme-corp/infra-live/pulls"


def _replay(body: bytes, link: str) -> Any:
    """An ASGI app answering every request with `body`, in 64 KB chunks prepared up front, so
    that tracing memory during a request measures the client, not the server."""
    chunks = [body[k:k + 65536] for k in range(0, len(body), 65536)]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"link", link.encode())]})
        for k, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": k < len(chunks) - 1})

    return app


async def test_a_page_of_100_pull_requests_is_never_held_whole(
        github: RunningGitHubSandbox) -> None:
    params = {"state": "all", "per_page": 100}
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {github.token}"}) as http:
        answer = await http.get(github.url + PULLS, params=params)
    body = answer.content
    with running_app(_replay(body, answer.headers["link"])) as url:
        async with GitHubClient(url, github.token) as client:
            await client.get_list(PULLS, params, pull_summary)  # warm up imports and pools
            tracemalloc.start()
            try:
                listing = await client.get_list(PULLS, params, pull_summary)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
    tracemalloc.start()
    try:
        rows = [pull_summary(doc) for doc in json.loads(body)]
        _, whole_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(listing.items) == 100 and len(body) > 1_500_000
    assert listing.items == rows and listing.links == {"next": 2, "last": 2}
    # Parsing the page whole holds its 100 objects at once (~3x the body); streaming holds
    # socket buffers, one item and the small rows, whatever the page size.
    assert whole_peak > len(body) > 1.5 * peak
    assert peak < whole_peak / 4, (peak, whole_peak)


async def test_byte_caps_stop_oversized_answers(github: RunningGitHubSandbox) -> None:
    async with GitHubClient(github.url, github.token, max_list_bytes=200_000,
                            max_archive_bytes=100_000) as client:
        with pytest.raises(UpstreamError, match="exceeded the 0 MiB safety cap"):
            await client.get_list(PULLS, {"per_page": 100}, pull_summary)
        huge = next(r for r in reversed(github.world.repos["payments-api"].runs)
                    if r.conclusion == "failure")
        with pytest.raises(UpstreamError, match="archive exceeded"):
            await client.download(f"/repos/acme-corp/payments-api/actions/runs/{huge.id}/logs")


async def test_an_unzip_cap_bounds_the_work_on_a_huge_log(github: RunningGitHubSandbox) -> None:
    huge = next(r for r in reversed(github.world.repos["payments-api"].runs)
                if r.conclusion == "failure")
    async with GitHubClient(github.url, github.token) as client:
        answer = await get_workflow_run_logs(client, "acme-corp", "payments-api", huge.id,
                                             tail_lines=20, max_unzipped_bytes=1024 * 1024)
    assert answer["unzipped_bytes_read"] <= 1024 * 1024 + 64 * 1024
    assert "Stopped reading after 1 MiB" in answer["notes"][-1]


async def test_a_spent_quota_is_remembered_and_no_request_is_wasted(
        github: RunningGitHubSandbox) -> None:
    async with GitHubClient(github.url, github.token, max_rate_limit_wait=1.0) as client:
        github.limits.exhaust(reset_in=600)
        with pytest.raises(RateLimitError) as first:
            await client.get_json(f"{PULLS}/1")
        github.state.fail_next(1, status=500)  # any request sent now would meet this
        with pytest.raises(RateLimitError):
            await client.get_json(f"{PULLS}/1")
        assert len(github.state.outages) == 1
        assert client.quotas["core"].remaining == 0
        # Search has its own quota, untouched.
        github.state.outages.clear()
        await client.get_list("/search/issues", {"q": "is:pr"}, dict, prefix="items.item")
    assert first.value.reset_at - 600 == pytest.approx(github.limits.snapshot(True)["core"][
        "reset"] - 600, abs=2)


async def test_the_token_never_reaches_logs_errors_or_repr(
        github: RunningGitHubSandbox, caplog: pytest.LogCaptureFixture) -> None:
    secret = "ghp_thisTokenMustNeverBeLogged12345678"
    caplog.set_level(logging.DEBUG)
    async with GitHubClient(github.url, secret, retries=1, backoff=0.01) as client:
        github.state.fail_next(1, status=503)
        with pytest.raises(ConfigurationError) as rejected:
            await client.get_json(PULLS)
        assert secret not in repr(client)
    assert "Bad credentials" in str(rejected.value)
    assert secret not in str(rejected.value) and secret not in (rejected.value.hint or "")
    assert "retry 1" in caplog.text  # the retry was logged ...
    assert secret not in caplog.text  # ... without the token


async def test_user_info_in_the_api_url_is_never_shown() -> None:
    async with GitHubClient("http://robot:hunter22@127.0.0.1:9", "ghp_x",
                            retries=0) as client:
        with pytest.raises(UpstreamError) as failed:
            await client.get_json("/user")
        assert "hunter22" not in repr(client)
    assert "hunter22" not in str(failed.value)
    assert "unreachable at http://127.0.0.1:9" in str(failed.value)


async def test_a_throttle_that_outlasts_the_waits_is_reported_as_one(
        github: RunningGitHubSandbox) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:  # no real waiting: the throttle stays on
        slept.append(seconds)

    async with GitHubClient(github.url, github.token, max_rate_limit_wait=5.0,
                            sleep=sleep) as client:
        github.limits.throttle(3)
        with pytest.raises(RateLimitError, match="secondary rate limit"):
            await client.get_json(f"{PULLS}/1")
    assert len(slept) == 2 and all(2.5 <= s <= 3.5 for s in slept)
