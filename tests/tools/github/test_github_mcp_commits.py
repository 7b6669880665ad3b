"""get_commit and compare_commits: the commits and pull requests behind deployed revisions.

The SHAs come from the Argo CD sandbox's deploy history (its apps on platform-deployments deploy
that repository's main line), so this also checks that the two sandboxes agree.
"""

from __future__ import annotations

import httpx
from github_harness import OpenTools

from pilothouse.sandbox.argocd import deploys
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.sandbox.github import RunningGitHubSandbox
from pilothouse.sandbox.github.commits import main_line_of

SHARED = "https://github.com/acme-corp/platform-deployments.git"
APP = next(a for a in (Fleet().app(i) for i in range(819)) if a.repo == SHARED
           and a.health == "Degraded")
HISTORY = deploys.deploys(APP)
LINE = main_line_of("platform-deployments")


async def test_a_deployed_revision_is_a_commit_with_its_pull_request(
        open_inproc: OpenTools, github: RunningGitHubSandbox) -> None:
    revision = HISTORY[-1].revision
    async with open_inproc() as tools:
        answer = await tools("get_commit", owner="acme-corp", repo="platform-deployments",
                             sha=revision)
        short = await tools("get_commit", owner="acme-corp", repo="platform-deployments",
                            sha=revision[:7])
    commit = next(c for c in LINE if c.sha == revision)
    assert answer.payload["message"] == commit.message == HISTORY[-1].message
    assert answer.payload["author"] == commit.author
    assert answer.payload["pull_request"]["number"] == commit.pull
    assert short.payload["sha"] == revision
    async with httpx.AsyncClient() as http:
        pull = (await http.get(
            f"{github.url}/repos/acme-corp/platform-deployments/pulls/{commit.pull}",
            headers={"Authorization": f"Bearer {github.token}"})).json()
    assert pull["merge_commit_sha"] == revision and pull["merged"] is True
    assert f"#{commit.pull}" in answer.text and commit.author in answer.text


async def test_compare_lists_what_lies_between_two_deploys(open_inproc: OpenTools) -> None:
    base, head = HISTORY[-2].revision, HISTORY[-1].revision
    positions = {c.sha: k for k, c in enumerate(LINE)}
    between = LINE[positions[base] + 1:positions[head] + 1]
    async with open_inproc() as tools:
        answer = await tools("compare_commits", owner="acme-corp", repo="platform-deployments",
                             base=base, head=head)
        backwards = await tools("compare_commits", owner="acme-corp",
                                repo="platform-deployments", base=head, head=base)
    assert answer.payload["status"] == "ahead"
    assert answer.payload["total_commits"] == len(between) >= 1
    assert [c["sha"] for c in answer.payload["commits"]] == [c.sha for c in between][-30:]
    assert answer.payload["pull_requests"] == sorted(c.pull for c in between)
    assert backwards.payload["status"] == "behind" and backwards.payload["total_commits"] == 0


async def test_bad_and_unknown_shas_say_what_to_do(open_inproc: OpenTools) -> None:
    async with open_inproc() as tools:
        bad = await tools("get_commit", owner="acme-corp", repo="platform-deployments",
                          sha="main; rm -rf /")
        unknown = await tools("get_commit", owner="acme-corp", repo="platform-deployments",
                              sha="0" * 40)
    assert bad.is_error and bad.payload["kind"] == "UserInputError"
    assert "get_application_history" in bad.payload["suggestion"]
    assert unknown.is_error and "No commit found" in unknown.payload["error"]
