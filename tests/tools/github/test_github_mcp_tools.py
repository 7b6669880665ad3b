"""Each GitHub tool through the real MCP client (in process) against the sandbox over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from github_harness import OpenTools
from starlette.applications import Starlette
from starlette.routing import Mount

from pilothouse.sandbox.argocd.server import running_app
from pilothouse.sandbox.github import RunningGitHubSandbox, create_github_sandbox_app
from pilothouse.tools.github import TOOLS


async def test_tools_and_their_compact_schemas(open_inproc: OpenTools) -> None:
    async with open_inproc() as tools:
        schemas = await tools.schemas()
        assert tuple(schemas) == TOOLS
        assert "title" not in str(schemas)  # pydantic's titles repeat names and cost tokens
        assert schemas["list_pull_requests"]["properties"]["state"]["enum"] == [
            "open", "closed", "all"]
        assert sum(len(str(s)) for s in schemas.values()) < 6000


async def test_a_pull_request_in_depth(open_inproc: OpenTools,
                                       github: RunningGitHubSandbox) -> None:
    async with open_inproc() as tools:
        repo = github.world.repos["infra-live"]
        sweeping = max(repo.pulls, key=lambda p: len(p.files))
        answer = await tools("get_pull_request", owner="acme-corp", repo="infra-live",
                                number=sweeping.number)
        assert not answer.is_error
        files = answer.payload["files"]
        assert files["count"] == len(sweeping.files) > 300
        assert len(files["paths"]) == 30 and files["paths"][0]["path"] == sweeping.files[0].path
        assert sum(files["by_directory"].values()) <= 300  # three pages of 100 were read
        assert "30 of 360 paths listed; by_directory counts the first 300 files" in files["note"]
        assert files["additions"] == sweeping.additions
        decision = {"REVIEW_REQUIRED": "review_required", "APPROVED": "approved",
                    "CHANGES_REQUESTED": "changes_requested"}
        for pull in [p for p in repo.pulls if p.reviews][:8]:
            one = await tools("get_pull_request", owner="acme-corp", repo="infra-live",
                                 number=pull.number, include_files=False)
            assert one.payload["reviews"]["decision"] == decision[pull.review_decision]
            assert one.payload["reviews"]["count"] == len(pull.reviews)
            assert "files" not in one.payload
            assert one.payload["pull_request"]["merged"] == pull.merged
            # The view's header says which pull request it is, by whom, and where it stands.
            assert one.text.startswith(f"**#{pull.number} ")
            assert f"** by {pull.author}: " in one.text.splitlines()[0]


async def test_issues_leave_pull_requests_out_unless_asked(open_inproc: OpenTools) -> None:
    async with open_inproc() as tools:
        issues = await tools("list_issues", owner="acme-corp", repo="payments-api")
        assert {i["type"] for i in issues.payload["items"]} == {"issue"}
        assert "pull requests on this GitHub page were left out" in issues.payload["notes"][0]
        both = await tools("list_issues", owner="acme-corp", repo="payments-api",
                              include_pull_requests=True)
        assert len(both.payload["items"]) == 20 and "notes" not in both.payload
        assert "repo" not in both.payload["items"][0]


async def test_filters_reach_github(open_inproc: OpenTools,
                                    github: RunningGitHubSandbox) -> None:
    async with open_inproc() as tools:
        repo = github.world.repos["payments-api"]
        target = next(p for p in repo.pulls if p.state == "closed" and p.merged)
        by_head = await tools("list_pull_requests", owner="acme-corp", repo="payments-api",
                                 state="all", head=target.head_ref)
        assert [(i["number"], i["state"]) for i in by_head.payload["items"]] == [
            (target.number, "merged")]
        runs = await tools("list_workflow_runs", owner="acme-corp", repo="payments-api",
                              branch="main", per_page=100)
        assert {r["branch"] for r in runs.payload["items"]} == {"main"}
        # The page summary counts every run on the page, though only some fit the output.
        on_main = sum(r.head_branch == "main" for r in repo.runs)
        assert sum(runs.payload["page_summary"].values()) == \
            runs.payload["truncated"]["total"] == on_main > len(runs.payload["items"])
        mine = await tools("list_pull_requests_awaiting_review", owner="acme-corp",
                              repo="payments-api", reviewer="@asmith-sre")
        assert all("asmith-sre" in i["requested_reviewers"] for i in mine.payload["items"])


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("list_pull_requests", {"owner": "acme corp", "repo": "x"}, "not a valid GitHub owner"),
    ("list_pull_requests", {"owner": "acme-corp", "repo": "a/b/c"}, "not a valid repository"),
    ("list_pull_requests", {"owner": "acme-corp", "repo": "x", "page": 0}, "page must be 1"),
    ("list_issues", {"owner": "acme-corp", "repo": "x", "per_page": 0}, "per_page must be"),
    ("get_pull_request", {"owner": "acme-corp", "repo": "x", "number": 0}, "not a pull"),
    ("search_issues", {"query": "  "}, "query is empty"),
    ("search_issues", {"query": "is:pr", "page": 51}, "only the first 1000 results"),
    ("get_workflow_run_logs", {"owner": "acme-corp", "repo": "x", "run_id": 1,
                               "tail_lines": 0}, "tail_lines must be 1"),
])
async def test_bad_arguments_are_refused_before_any_request(
        open_inproc: OpenTools, github: RunningGitHubSandbox, tool: str,
        arguments: dict[str, object], message: str) -> None:
    github.state.fail_next(1, status=500)  # a request would hit this and say "HTTP 500"
    async with open_inproc() as tools:
        answer = await tools(tool, **arguments)
    assert answer.is_error and answer.payload["kind"] == "UserInputError"
    assert message in answer.payload["error"] and answer.payload["suggestion"]
    assert len(github.state.outages) == 1


async def test_logs_of_a_running_workflow_and_a_clamped_tail(
        open_inproc: OpenTools, github: RunningGitHubSandbox) -> None:
    repo = github.world.repos["payments-api"]
    running = next(r for r in repo.runs if r.status != "completed")
    passed = next(r for r in reversed(repo.runs) if r.conclusion == "success")
    async with open_inproc() as tools:
        early = await tools("get_workflow_run_logs", owner="acme-corp", repo="payments-api",
                            run_id=running.id)
        green = await tools("get_workflow_run_logs", owner="acme-corp", repo="payments-api",
                            run_id=passed.id, tail_lines=900)
    assert early.is_error and f"is still {running.status}" in early.payload["error"]
    assert green.payload["failing_steps"] == []
    assert green.payload["last_step"]["step"] == "Complete job"
    assert "reduced to the maximum of 500" in green.payload["notes"][0]
    assert "No step reported an error" in green.payload["notes"][1]


async def test_the_oversized_log_keeps_only_its_tail(open_inproc: OpenTools,
                                                     github: RunningGitHubSandbox) -> None:
    async with open_inproc() as tools:
        repo = github.world.repos["payments-api"]
        huge = next(r for r in reversed(repo.runs) if r.conclusion == "failure")
        answer = await tools("get_workflow_run_logs", owner="acme-corp", repo="payments-api",
                                run_id=huge.id, tail_lines=500)
        (step,) = answer.payload["failing_steps"]
        assert step["lines_total"] > 50_000
        assert answer.payload["unzipped_bytes_read"] > 4_000_000
        assert step["tail"][-1].startswith("##[error]")
        assert len(answer.text) <= 10_000 and answer.payload["truncated"]["dropped_lines"] > 0


async def test_answers_fit_the_output_limit(open_inproc: OpenTools) -> None:
    async with open_inproc(max_output=3000) as tools:
        answer = await tools("list_pull_requests", owner="acme-corp", repo="infra-live")
    assert len(answer.text) <= 3000
    shown = answer.payload["truncated"]["shown"]
    assert len(answer.payload["items"]) == shown < 20
    assert f"per_page={shown}" in answer.payload["truncated"]["note"]
    assert answer.payload["pagination"]["page"] == 1  # the context survives the cut


async def test_outages_are_retried_then_reported(open_inproc: OpenTools,
                                                 github: RunningGitHubSandbox) -> None:
    async with open_inproc() as tools:
        github.state.fail_next(2, status=503)
        recovered = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
        assert not recovered.is_error
        github.state.fail_next(3, status=502)
        failed = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
        assert failed.is_error and "GitHub failed with HTTP 502" in failed.payload["error"]
        assert "githubstatus.com" in failed.payload["suggestion"]


async def test_secondary_limits_wait_or_report(open_inproc: OpenTools,
                                               github: RunningGitHubSandbox) -> None:
    async with open_inproc(max_wait=5.0) as tools:
        github.limits.throttle(1)
        waited = await tools("search_issues", query="repo:acme-corp/platform-docs is:pr")
        github.limits.throttle(120)
        refused = await tools("search_issues", query="repo:acme-corp/platform-docs is:pr")
    assert not waited.is_error and waited.payload["pagination"]["total_items"] == 8
    assert refused.is_error and "secondary rate limit" in refused.payload["error"]


async def test_without_a_token_private_repositories_look_missing(open_inproc: OpenTools) -> None:
    async with open_inproc(token=None) as tools:
        answer = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
    assert answer.is_error and "GITHUB_TOKEN is not set" in answer.payload["suggestion"]


async def test_a_repository_not_found_names_the_ones_the_token_can_see(
        open_inproc: OpenTools, github: RunningGitHubSandbox) -> None:
    # The owner comes from the person or from what the token can see, never from a guess:
    # an owner nobody said (an example's) is answered with the repository the token reads.
    owner = github.world.owner
    async with open_inproc() as tools:
        guessed = await tools("list_pull_requests", owner="example-org", repo="payments-api")
        misspelt = await tools("list_issues", owner=owner, repo="payment-api")
        unknown = await tools("list_issues", owner="example-org", repo="web-frontend")
        no_such_pull = await tools("get_pull_request", owner=owner, repo="payments-api",
                                   number=99_999)
    for answer in (guessed, misspelt):
        assert answer.is_error and answer.payload["kind"] == "UserInputError"
        assert f"The token can see {owner}/payments-api" in answer.payload["suggestion"]
    # Nothing alike, or the repository is visible (the number is what is missing): the
    # plain hint.
    for answer in (unknown, no_such_pull):
        assert answer.is_error and "token can see" not in answer.payload["suggestion"]
        assert "Check the owner and repository name" in answer.payload["suggestion"]


@pytest.fixture
def enterprise(github: RunningGitHubSandbox) -> Iterator[str]:
    """The sandbox under `/api/v3`, where GitHub Enterprise Server serves its API."""
    app = Starlette(routes=[Mount("/api/v3", app=create_github_sandbox_app())])
    with running_app(app) as url:
        yield f"{url}/api/v3"


async def test_github_enterprise_api_roots_keep_their_path(open_inproc: OpenTools,
                                                           enterprise: str) -> None:
    async with open_inproc(api_url=enterprise) as tools:
        first = await tools("list_pull_requests", owner="acme-corp", repo="payments-api")
        logs = await tools("list_workflow_runs", owner="acme-corp", repo="payments-api",
                           status="failure", per_page=2)
        tail = await tools("get_workflow_run_logs", owner="acme-corp", repo="payments-api",
                           run_id=logs.payload["items"][1]["id"])
    assert first.payload["pagination"]["last_page"] == 3
    assert tail.payload["failing_steps"]
