"""The sandbox answers like GitHub: Link-only paging, filters, search, runs, logs and errors."""

from __future__ import annotations

import io
import math
import zipfile

import httpx
import pytest

from pilothouse.sandbox.github import (
    RepoSpec,
    RunningGitHubSandbox,
    World,
    WorldSpec,
    running_github_sandbox,
)
from pilothouse.sandbox.github.protocol import DEFAULT_PER_PAGE
from pilothouse.tools.github.paging import parse_link

PULLS = "/repos/acme-corp/payments-api/pulls"


def test_pages_are_announced_only_in_the_link_header(gh: httpx.Client, world: World) -> None:
    open_count = world.spec.repos[1].open_prs
    first = gh.get(PULLS)
    assert len(first.json()) == DEFAULT_PER_PAGE  # GitHub's default page of 30
    assert not any("total" in name for name in first.headers)
    links = parse_link(first.headers["link"])
    assert links == {"next": 2, "last": math.ceil(open_count / DEFAULT_PER_PAGE)}
    seen: list[int] = []
    page = 1
    while True:
        response = gh.get(PULLS, params={"per_page": 20, "page": page})
        seen += [p["number"] for p in response.json()]
        links = parse_link(response.headers.get("link"))
        if "next" not in links:
            assert links == {"prev": page - 1, "first": 1}
            break
        page = links["next"]
    assert page == 3 and len(seen) == len(set(seen)) == open_count == 52


def test_per_page_is_capped_at_100_and_a_page_past_the_end_is_empty(gh: httpx.Client) -> None:
    everything = gh.get("/repos/acme-corp/infra-live/pulls",
                        params={"state": "all", "per_page": 500})
    assert len(everything.json()) == 100
    assert parse_link(everything.headers["link"]) == {"next": 2, "last": 2}
    beyond = gh.get(PULLS, params={"per_page": 20, "page": 9})
    assert beyond.json() == [] and parse_link(beyond.headers["link"])["first"] == 1
    one_page = gh.get("/repos/acme-corp/platform-docs/pulls")
    assert len(one_page.json()) == 2 and "link" not in one_page.headers


def test_state_head_base_sort_and_direction(gh: httpx.Client, world: World) -> None:
    repo = world.repos["payments-api"]
    closed = gh.get(PULLS, params={"state": "closed", "per_page": 100, "page": 1}).json()
    assert len(closed) == 98 and {p["state"] for p in closed} == {"closed"}
    oldest = gh.get(PULLS, params={"direction": "asc", "per_page": 1}).json()[0]
    assert oldest["number"] == min(p.number for p in repo.pulls if p.state == "open")
    target = repo.pulls[-1]
    by_head = gh.get(PULLS, params={"state": "all",
                                    "head": f"acme-corp:{target.head_ref}"}).json()
    assert [p["number"] for p in by_head] == [target.number]
    release = gh.get(PULLS, params={"state": "all", "base": "release/2026.08",
                                    "per_page": 100}).json()
    assert release and {p["base"]["ref"] for p in release} == {"release/2026.08"}
    popular = gh.get(PULLS, params={"sort": "popularity", "per_page": 100}).json()
    comments = [repo.pull(p["number"]).comments for p in popular]  # type: ignore[union-attr]
    assert comments == sorted(comments)  # a non-created sort defaults to ascending
    refused = gh.get(PULLS, params={"state": "merged"})
    assert refused.status_code == 422 and refused.json()["message"] == "Validation Failed"


def test_issues_list_pull_requests_too(gh: httpx.Client, world: World) -> None:
    repo = world.repos["payments-api"]
    items = gh.get("/repos/acme-corp/payments-api/issues",
                   params={"state": "all", "per_page": 100}).json()
    items += gh.get("/repos/acme-corp/payments-api/issues",
                    params={"state": "all", "per_page": 100, "page": 2}).json()
    pulls = [i for i in items if "pull_request" in i]
    assert len(items) == len(repo.pulls) + len(repo.issues)
    assert len(pulls) == len(repo.pulls)
    labelled = gh.get("/repos/acme-corp/payments-api/issues",
                      params={"labels": "bug,team:payments", "state": "all",
                              "per_page": 100}).json()
    assert labelled and all({"bug", "team:payments"} <= {x["name"] for x in i["labels"]}
                            for i in labelled)


def test_search_qualifiers(gh: httpx.Client, world: World) -> None:
    repo = world.repos["infra-live"]

    def total(q: str) -> int:
        response = gh.get("/search/issues", params={"q": q})
        assert response.status_code == 200, response.text
        return int(response.json()["total_count"])

    waiting = [p for p in repo.pulls if p.state == "open" and not p.draft
               and p.review_decision == "REVIEW_REQUIRED"]
    assert total("repo:acme-corp/infra-live is:pr is:open review:required draft:false") == \
        len(waiting) > 0
    asked = waiting[0].requested_reviewers[0]
    assert total(f"repo:acme-corp/infra-live is:pr is:open review-requested:{asked}") == sum(
        asked in p.requested_reviewers for p in repo.pulls if p.state == "open")
    assert total('repo:acme-corp/infra-live is:issue label:"bug"') == sum(
        "bug" in i.labels for i in repo.issues)
    assert total("repo:acme-corp/infra-live is:pr -label:dependencies author:renovate[bot]") == 0
    assert total("repo:acme-corp/infra-live is:pr is:merged") == sum(p.merged for p in repo.pulls)
    text = total("repo:acme-corp/infra-live payments production")
    assert 0 < text < total("repo:acme-corp/infra-live")
    assert total("org:acme-corp is:pr is:open") == sum(
        r.open_prs for r in world.spec.repos)


def test_search_refuses_unknown_repos_and_the_1001st_result(gh: httpx.Client) -> None:
    unknown = gh.get("/search/issues", params={"q": "repo:acme-corp/nope is:pr"})
    assert unknown.status_code == 422 and "cannot be searched" in unknown.text
    empty = gh.get("/search/issues", params={"q": " "})
    assert empty.status_code == 422
    big = WorldSpec(repos=(RepoSpec("monorepo", closed_prs=1150, kind="service"),))
    with running_github_sandbox(big) as sandbox:
        auth = {"Authorization": f"Bearer {sandbox.token}"}
        search = f"{sandbox.url}/search/issues"
        capped = httpx.get(search, params={"q": "is:pr", "per_page": 100}, headers=auth)
        beyond = httpx.get(search, params={"q": "is:pr", "per_page": 100, "page": 11},
                           headers=auth)
    assert capped.json()["total_count"] == 1150
    assert parse_link(capped.headers["link"])["last"] == 10  # 1,000 reachable, not 1,150
    assert beyond.status_code == 422 and "first 1000" in beyond.json()["message"]


def test_workflow_runs_filters_and_totals(gh: httpx.Client, world: World) -> None:
    repo = world.repos["payments-api"]
    runs = "/repos/acme-corp/payments-api/actions/runs"
    failed = gh.get(runs, params={"status": "failure", "per_page": 5}).json()
    assert failed["total_count"] == sum(r.conclusion == "failure" for r in repo.runs)
    ids = [r["id"] for r in failed["workflow_runs"]]
    assert ids == sorted(ids, reverse=True) and len(ids) == 5
    main = gh.get(runs, params={"branch": "main", "event": "push", "per_page": 100}).json()
    assert {(r["head_branch"], r["event"]) for r in main["workflow_runs"]} == {("main", "push")}
    assert gh.get(runs, params={"status": "sideways"}).status_code == 422


def test_logs_redirect_to_an_archive_that_takes_no_token(gh: httpx.Client,
                                                         world: World) -> None:
    repo = world.repos["payments-api"]
    run = [r for r in repo.runs if r.conclusion == "failure"][-2]  # not the oversized one
    answer = gh.get(f"/repos/acme-corp/payments-api/actions/runs/{run.id}/logs")
    assert answer.status_code == 302
    location = answer.headers["location"]
    assert gh.get(location).status_code == 400  # our token must not travel with it
    archive = httpx.get(location)
    assert archive.headers["content-type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(archive.content)).namelist()
    failing = next(s for j in run.jobs for s in j.steps if s.conclusion == "failure")
    job = next(j for j in run.jobs if failing in j.steps)
    step_file = f"{job.name}/{failing.number}_{failing.name.replace('/', '')}.txt"
    assert step_file in names and any("/" not in n for n in names)
    text = zipfile.ZipFile(io.BytesIO(archive.content)).read(step_file).decode()
    assert text.rstrip().endswith("##[error]Process completed with exit code 1.")
    assert run.failure[0] in text
    forged = location.replace("sig=", "sig=0")
    assert httpx.get(forged).status_code == 403
    running = next(r for r in repo.runs if r.status != "completed")
    assert gh.get(f"/repos/acme-corp/payments-api/actions/runs/{running.id}/logs"
                  ).status_code == 404


def test_credentials(gh_anonymous: httpx.Client, github_sandbox: RunningGitHubSandbox) -> None:
    bad = gh_anonymous.get(PULLS, headers={"Authorization": "Bearer ghp_wrong"})
    assert bad.status_code == 401
    assert bad.json() == {"message": "Bad credentials",
                          "documentation_url": "https://docs.github.com/rest", "status": "401"}
    classic = gh_anonymous.get(PULLS, headers={"Authorization": f"token {github_sandbox.token}"})
    assert classic.status_code == 200
    assert gh_anonymous.get(PULLS).status_code == 404  # private: invisible without a token
    assert gh_anonymous.get("/user").json()["message"] == "Requires authentication"
    anonymous_search = gh_anonymous.get("/search/issues", params={"q": "org:acme-corp"})
    assert anonymous_search.json()["total_count"] == 0
    assert gh_anonymous.get("/rate_limit").json()["rate"]["limit"] == 60


def test_the_token_lists_the_repositories_it_can_see(gh: httpx.Client, gh_anonymous: httpx.Client,
                                                     world: World) -> None:
    first = gh.get("/user/repos", params={"per_page": 4})
    names = [r["full_name"] for r in first.json()]
    links = parse_link(first.headers["link"])
    assert links == {"next": 2, "last": math.ceil(len(world.repos) / 4)}
    rest = [r["full_name"] for page in range(2, links["last"] + 1)
            for r in gh.get("/user/repos", params={"per_page": 4, "page": page}).json()]
    assert names + rest == sorted(f"{world.owner}/{name}" for name in world.repos)
    assert gh_anonymous.get("/user/repos").status_code == 401


def test_unknown_paths_and_every_answer_are_marked(gh: httpx.Client) -> None:
    missing = gh.get("/repos/acme-corp/payments-api/wiki")
    assert missing.status_code == 404 and missing.json()["status"] == "404"
    for response in (missing, gh.get("/user"), gh.get(f"{PULLS}/99999")):
        assert response.headers["x-pilothouse-sandbox"] == "true"
    assert gh.get(f"{PULLS}/99999").json()["message"] == "Not Found"
    assert gh.get("/user").json()["login"] == "pilothouse-bot"


def test_rate_limit_headers_count_down_and_rate_limit_is_free(gh: httpx.Client) -> None:
    first = gh.get(PULLS, params={"per_page": 1})
    second = gh.get(PULLS, params={"per_page": 1})
    assert int(first.headers["x-ratelimit-remaining"]) - 1 == \
        int(second.headers["x-ratelimit-remaining"])
    assert second.headers["x-ratelimit-limit"] == "5000"
    before = gh.get("/rate_limit").json()["resources"]["core"]["used"]
    assert gh.get("/rate_limit").json()["resources"]["core"]["used"] == before
    search = gh.get("/search/issues", params={"q": "is:pr"})
    assert search.headers["x-ratelimit-resource"] == "search"
    assert search.headers["x-ratelimit-limit"] == "30"


def test_an_exhausted_limit_is_403_until_the_reset(gh: httpx.Client,
                                                   github_sandbox: RunningGitHubSandbox) -> None:
    github_sandbox.limits.exhaust(reset_in=600)
    refused = gh.get(PULLS)
    assert refused.status_code == 403
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert "rate limit exceeded" in refused.json()["message"]
    assert gh.get("/search/issues", params={"q": "is:pr"}).status_code == 200  # own bucket
    github_sandbox.limits.exhaust(reset_in=-1)  # a reset in the past: refilled on next use
    assert gh.get(PULLS).status_code == 200


def test_secondary_limits_and_outages(gh: httpx.Client,
                                      github_sandbox: RunningGitHubSandbox) -> None:
    github_sandbox.limits.throttle(30)
    throttled = gh.get(PULLS)
    assert throttled.status_code == 403 and int(throttled.headers["retry-after"]) == 30
    github_sandbox.limits.restore()
    github_sandbox.state.fail_next(2, status=502)
    assert [gh.get(PULLS).status_code for _ in range(3)] == [502, 502, 200]


@pytest.mark.parametrize("path", ["/repositories/612345679/pulls",
                                  "/repositories/612345679/actions/runs"])
def test_link_targets_are_served(gh: httpx.Client, path: str) -> None:
    response = gh.get(path, params={"per_page": 2, "page": 2})
    assert response.status_code == 200 and parse_link(response.headers["link"])["prev"] == 1
