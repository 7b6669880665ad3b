"""A deterministic GitHub organisation: the repositories the sandbox serves.

The organisation is `acme-corp`, the owner of the Argo CD sandbox's repositories, and several
repositories are named like the Argo CD applications they deploy (`payments-api`,
`checkout-web`, `identity-auth`), so one question can move between the two agents. Counts are
exact per `RepoSpec`: `payments-api` has 52 open pull requests (three pages of 20), `infra-live`
200 in all; tests compute expected answers from the same `World`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pilothouse.sandbox.github import vocabulary as v
from pilothouse.sandbox.github.generate import DAY, RepoGenerator
from pilothouse.sandbox.github.records import Repo, RepoSpec

#: The sandbox's "now": fixed, so every generated timestamp is reproducible.
DEFAULT_NOW = int(datetime(2026, 8, 22, 9, 0, tzinfo=UTC).timestamp())

DEFAULT_REPOS: tuple[RepoSpec, ...] = (
    RepoSpec("infra-live", open_prs=57, closed_prs=143, issues=35, runs=120, kind="gitops",
             description="Live environment configuration: Argo CD apps and values per "
                         "environment and cluster", language="HCL"),
    RepoSpec("payments-api", open_prs=52, closed_prs=98, issues=40, runs=150, kind="service",
             team="payments", description="Payments API: charges, refunds and the ledger",
             language="Go"),
    RepoSpec("checkout-web", open_prs=23, closed_prs=47, issues=20, runs=80, kind="web",
             team="checkout", description="Checkout web front end", language="TypeScript"),
    RepoSpec("platform-charts", open_prs=18, closed_prs=67, issues=12, runs=60, kind="charts",
             description="Shared Helm charts for acme services", language="Go Template"),
    RepoSpec("platform-deployments", open_prs=31, closed_prs=109, issues=15, runs=90,
             kind="charts", description="Helm charts and Argo CD Applications for all acme "
                                        "services", language="Go Template"),
    RepoSpec("identity-auth", open_prs=9, closed_prs=31, issues=10, runs=40, kind="service",
             team="identity", description="Authentication service", language="Java"),
    RepoSpec("notifications-worker", open_prs=6, closed_prs=24, issues=8, runs=30,
             kind="service", team="notifications",
             description="Sends e-mail, SMS and webhooks", language="Python"),
    RepoSpec("platform-docs", open_prs=2, closed_prs=6, issues=5, runs=10, kind="docs",
             description="Runbooks and architecture notes", language=None),
    RepoSpec("sandbox-empty", kind="docs", description="An empty repository"),
)


@dataclass(frozen=True)
class WorldSpec:
    """What to generate: the owner, its repositories, a seed and the clock they were made at."""

    owner: str = v.OWNER
    repos: tuple[RepoSpec, ...] = DEFAULT_REPOS
    seed: int = 20_260_822
    now: int = DEFAULT_NOW

    def __post_init__(self) -> None:
        names = [r.name for r in self.repos]
        if len(set(names)) != len(names):
            raise ValueError("repository names must be unique")


class World:
    """Every repository of one owner, generated once at start-up (a few hundred KB)."""

    def __init__(self, spec: WorldSpec | None = None) -> None:
        self.spec = spec or WorldSpec()
        self.owner = self.spec.owner
        self.repos: dict[str, Repo] = {}
        self._by_id: dict[int, Repo] = {}
        for index, repo_spec in enumerate(self.spec.repos):
            gen = RepoGenerator(repo_spec, seed=self.spec.seed, index=index, now=self.spec.now)
            pulls, issues = gen.contents()
            runs = gen.runs(pulls)
            created = self.spec.now - (900 + 37 * index) * DAY
            latest = max([p.updated_at for p in pulls] + [created])
            repo = Repo(spec=repo_spec, owner=self.owner, id=612_345_678 + index,
                        created_at=created, pushed_at=latest, pulls=pulls, issues=issues,
                        runs=runs)
            self.repos[repo_spec.name.lower()] = repo
            self._by_id[repo.id] = repo

    def repo(self, owner: str, name: str) -> Repo | None:
        """The repository `owner/name` (case-insensitive, as on GitHub), or None."""
        if owner.lower() != self.owner.lower():
            return None
        return self.repos.get(name.lower())

    def repo_by_id(self, repo_id: int) -> Repo | None:
        return self._by_id.get(repo_id)
