"""The generated organisation: deterministic, exact counts, and GitHub's review rules."""

from __future__ import annotations

import dataclasses

import pytest

from pilothouse.sandbox.github import DEFAULT_REPOS, RepoSpec, World, WorldSpec
from pilothouse.sandbox.github.records import Review


def test_the_same_spec_generates_the_same_organisation() -> None:
    first, second = World(), World()
    for name, repo in first.repos.items():
        assert repo == second.repos[name]
    reseeded = World(WorldSpec(seed=1))
    assert reseeded.repos["infra-live"].pulls != first.repos["infra-live"].pulls


def test_counts_are_exact_and_numbers_are_shared_by_pulls_and_issues() -> None:
    world = World()
    for spec in DEFAULT_REPOS:
        repo = world.repos[spec.name]
        assert sum(p.state == "open" for p in repo.pulls) == spec.open_prs
        assert sum(p.state == "closed" for p in repo.pulls) == spec.closed_prs
        assert (len(repo.issues), len(repo.runs)) == (spec.issues, spec.runs)
        numbers = sorted([p.number for p in repo.pulls] + [i.number for i in repo.issues])
        assert numbers == list(range(1, len(numbers) + 1))
        created = [p.created_at for p in repo.pulls]
        assert created == sorted(created)  # a later number was opened later
    assert max(spec.open_prs for spec in DEFAULT_REPOS) >= 50
    assert sum(spec.open_prs + spec.closed_prs for spec in DEFAULT_REPOS) > 600


def test_pull_requests_follow_githubs_review_rules() -> None:
    world = World()
    pulls = [p for repo in world.repos.values() for p in repo.pulls]
    for pull in pulls:
        reviewed = {r.reviewer for r in pull.reviews}
        assert pull.author not in reviewed | set(pull.requested_reviewers)
        if pull.draft:
            assert not pull.requested_reviewers and not pull.reviews
        assert (pull.merged_at is not None) == pull.merged
        assert pull.merged <= (pull.state == "closed")
        for review in pull.reviews:
            assert pull.created_at <= review.submitted_at <= (pull.closed_at or pull.updated_at)
    decisions = {p.review_decision for p in pulls if p.state == "open" and not p.draft}
    assert decisions == {"REVIEW_REQUIRED", "APPROVED", "CHANGES_REQUESTED"}


def test_review_decision_takes_each_reviewers_latest_verdict() -> None:
    pull = World().repos["payments-api"].pulls[0]

    def with_reviews(*reviews: tuple[str, str, int]) -> str:
        made = tuple(Review(k, who, state, at) for k, (who, state, at) in enumerate(reviews))
        return dataclasses.replace(pull, reviews=made).review_decision

    assert with_reviews() == "REVIEW_REQUIRED"
    assert with_reviews(("a", "COMMENTED", 1)) == "REVIEW_REQUIRED"
    assert with_reviews(("a", "CHANGES_REQUESTED", 1), ("a", "APPROVED", 2)) == "APPROVED"
    assert with_reviews(("a", "APPROVED", 1), ("b", "CHANGES_REQUESTED", 2)) == \
        "CHANGES_REQUESTED"
    assert with_reviews(("a", "APPROVED", 2), ("a", "CHANGES_REQUESTED", 1)) == "APPROVED"


def test_paths_and_names_line_up_with_the_argocd_sandbox() -> None:
    world = World()
    paths = {f.path for p in world.repos["infra-live"].pulls for f in p.files}
    assert "apps/production/payments-api/values.yaml" in paths
    assert {"payments-api", "checkout-web", "identity-auth"} <= set(world.repos)
    assert world.repo("ACME-CORP", "Payments-API") is world.repos["payments-api"]
    assert world.repo("someone-else", "payments-api") is None
    sweeping = max(world.repos["infra-live"].pulls, key=lambda p: len(p.files))
    assert sweeping.state == "open" and len(sweeping.files) > 300


def test_failed_runs_say_why_and_one_log_is_oversized() -> None:
    world = World()
    for repo in world.repos.values():
        for run in repo.runs:
            failing = [s for j in run.jobs for s in j.steps if s.conclusion == "failure"]
            assert (run.conclusion == "failure") == bool(failing) == bool(run.failure)
    huge = [s.lines for r in world.repos["payments-api"].runs for j in r.jobs for s in j.steps]
    assert max(huge) >= 50_000


def test_specs_are_validated() -> None:
    with pytest.raises(ValueError, match="kind"):
        RepoSpec("x", kind="monorepo")
    with pytest.raises(ValueError, match="zero or more"):
        RepoSpec("x", open_prs=-1)
    with pytest.raises(ValueError, match="unique"):
        WorldSpec(repos=(RepoSpec("x"), RepoSpec("x")))
