"""A deterministic GitHub organisation: the repositories the sandbox serves.

The owner is the world's organisation, also the owner of the Argo CD sandbox's repositories. In
the default world (`acme-corp`) several repositories are named like the Argo CD applications
they deploy (`payments-api`, `checkout-web`, `identity-auth`), so one question can move between
the two agents. Counts are exact per `RepoSpec`: `payments-api` has 52 open pull requests
(three pages of 20), `infra-live` 200 in all; tests compute expected answers from the same
`World`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.github import vocabulary as v
from pilothouse.sandbox.github.generate import DAY, RepoGenerator
from pilothouse.sandbox.github.records import Repo, RepoSpec
from pilothouse.sandbox.world_description import WorldDescription

#: The sandbox's "now": fixed, so every generated timestamp is reproducible.
DEFAULT_NOW = int(datetime(2026, 8, 22, 9, 0, tzinfo=UTC).timestamp())

#: The default world's repositories (`sandbox.company.REPOS`).
DEFAULT_REPOS: tuple[RepoSpec, ...] = ACME.repos


@dataclass(frozen=True)
class WorldSpec:
    """What to generate: the owner, its repositories, a seed and the clock they were made at.

    The defaults are the default world's; `WorldSpec.of(world)` takes another world's names,
    repositories and seed.
    """

    owner: str = v.OWNER
    repos: tuple[RepoSpec, ...] = DEFAULT_REPOS
    seed: int = ACME.github_seed
    now: int = DEFAULT_NOW
    world: WorldDescription = ACME

    @classmethod
    def of(cls, world: WorldDescription, *, seed: int | None = None) -> WorldSpec:
        """The organisation of `world`, with its own seed unless `seed` says."""
        return cls(owner=world.org, repos=world.repos, world=world,
                   seed=world.github_seed if seed is None else seed)

    def __post_init__(self) -> None:
        names = [r.name for r in self.repos]
        if len(set(names)) != len(names):
            raise ValueError("repository names must be unique")

    @property
    def words(self) -> v.Words:
        return v.words_for(self.world)


class World:
    """Every repository of one owner, generated once at start-up (a few hundred KB)."""

    def __init__(self, spec: WorldSpec | None = None) -> None:
        self.spec = spec or WorldSpec()
        self.owner = self.spec.owner
        self.words = self.spec.words
        self.repos: dict[str, Repo] = {}
        self._by_id: dict[int, Repo] = {}
        for index, repo_spec in enumerate(self.spec.repos):
            gen = RepoGenerator(repo_spec, seed=self.spec.seed, index=index, now=self.spec.now,
                                words=self.words)
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
