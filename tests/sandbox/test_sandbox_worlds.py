"""The sandboxes take a world: the default company, unchanged, or one with other conventions.

A world is data (`WorldDescription`) both generators read. The default one must stay what every
test and dev case was written against, byte for byte; the second one (the test split's) must
really differ in the conventions a product could have learned by heart: one-word application
names without an environment, another organisation, repositories not named after applications,
other clusters, squads, fleet size, seed and codebase.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import httpx
import pytest

from pilothouse.sandbox.argocd import deploys, documents, inventory
from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec
from pilothouse.sandbox.argocd.server import running_sandbox
from pilothouse.sandbox.github.server import running_github_sandbox
from pilothouse.sandbox.github.world import World, WorldSpec
from pilothouse.sandbox.world_description import WorldDescription
from pilothouse.sandbox.worlds import DEFAULT_WORLD, WORLDS, world_named

#: Everything the default world generates (every application document, the projects,
#: application sets and clusters, every repository's records), as the code before worlds made
#: it: `git show 815beda` generates the same digest.
DEFAULT_DIGEST = "2d0dc4a58f64144d"
OTHER = next(world for world in WORLDS.values() if world is not DEFAULT_WORLD)


def digest(world: WorldDescription, fleet_spec: FleetSpec | None = None) -> str:
    fleet = Fleet(fleet_spec or FleetSpec.of(world))
    h = hashlib.sha256()
    for index in range(len(fleet)):
        h.update(json.dumps(documents.full_application(fleet.app(index)),
                            sort_keys=True).encode())
    for docs in (inventory.projects(fleet), inventory.applicationsets(fleet),
                 inventory.clusters(fleet)):
        h.update(json.dumps(list(docs), sort_keys=True).encode())
    for repo in World(WorldSpec.of(world)).repos.values():
        h.update(repr((repo.pulls, repo.issues, repo.runs)).encode())
    return h.hexdigest()[:16]


def test_the_default_world_is_unchanged_byte_for_byte() -> None:
    assert FleetSpec().world is DEFAULT_WORLD and WorldSpec().world is DEFAULT_WORLD
    assert FleetSpec.of(DEFAULT_WORLD) == FleetSpec()
    assert digest(DEFAULT_WORLD, FleetSpec()) == DEFAULT_DIGEST


def test_the_second_world_generates_the_same_every_time_and_its_seed_matters() -> None:
    assert digest(OTHER) == digest(OTHER)
    assert digest(OTHER) != digest(OTHER, FleetSpec.of(OTHER, seed=1))
    assert digest(OTHER) != DEFAULT_DIGEST


def _names(world: WorldDescription) -> list[str]:
    fleet = Fleet(FleetSpec.of(world))
    return [fleet.app(index).name for index in range(len(fleet))]


def test_the_second_world_has_other_conventions() -> None:
    default, other = DEFAULT_WORLD, OTHER
    names = _names(other)
    # One word per application, each service once: no environment, no team in the name.
    assert names and all(name.isalpha() for name in names)
    assert len(set(names)) == len(names) == other.fleet_apps != default.fleet_apps
    assert not any(env in name for name in names for env in other.environments)
    fleet = Fleet(FleetSpec.of(other))
    records = [fleet.app(index) for index in range(len(fleet))]
    assert {r.env for r in records} == set(other.environments)
    assert all(r.labels["env"] == other.env_labels[r.env] for r in records)
    assert {fleet.index_of(name) for name in names} == set(range(len(fleet)))
    # Another organisation, repositories named for what they hold, not for applications.
    github = World(WorldSpec.of(other))
    assert github.owner == other.org != default.org
    repos = {repo.spec.name for repo in github.repos.values()}
    assert not repos & {*names, *(r.workload for r in records), *other.teams}
    assert {r.repo.rsplit("/", 1)[-1].removesuffix(".git") for r in records} & repos
    # Other clusters, teams, sizes, seeds and codebase.
    assert not {c[0] for c in other.clusters} & {c[0] for c in default.clusters}
    assert not set(other.teams) & set(default.teams)
    assert other.fleet_seed != default.fleet_seed and other.github_seed != default.github_seed
    assert other.workspace.startswith("package:") and other.workspace != default.workspace
    # Less healthy than the default fleet: a second page of Degraded applications.
    assert sum(r.health == "Degraded" for r in records) > 20


def test_a_deployed_revision_is_a_commit_of_the_worlds_own_main_line() -> None:
    fleet = Fleet(FleetSpec.of(OTHER))
    github = World(WorldSpec.of(OTHER))
    main_line = github.repos[OTHER.main_line_repo]
    merged = {pull.head_sha[::-1] for pull in main_line.pulls if pull.merged}
    deployed = [deploys.current(fleet.app(index)) for index in range(len(fleet))
                if deploys.github_repo(fleet.app(index).repo, OTHER) == OTHER.main_line_repo]
    assert deployed and all(d.revision in merged for d in deployed)
    authors = {d.author for d in deployed}
    assert authors & set(OTHER.humans) and not authors & set(DEFAULT_WORLD.humans)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with running_sandbox(world=OTHER) as argocd, running_github_sandbox(world=OTHER) as github, \
            httpx.Client(base_url=argocd.url, timeout=30,
                         headers={"Authorization": f"Bearer {argocd.token}"}) as argocd_api, \
            httpx.Client(base_url=github.url, timeout=30,
                         headers={"Authorization": f"token {github.token}"}) as github_api:
        yield argocd_api, github_api


def test_the_sandboxes_serve_the_second_world_over_http(
    served: tuple[httpx.Client, httpx.Client],
) -> None:
    argocd, github = served
    apps = argocd.get("/api/v1/applications").json()["items"]
    assert len(apps) == OTHER.fleet_apps
    first = apps[0]["metadata"]["name"]
    assert first == sorted(_names(OTHER))[0]
    one = argocd.get(f"/api/v1/applications/{first}").json()
    assert one["spec"]["destination"]["server"].endswith(OTHER.domain)
    assert one["spec"]["project"] in OTHER.teams
    # The default world's application is not there (Argo CD answers 403, as for no permission).
    assert argocd.get("/api/v1/applications/payments-api-production").status_code == 403
    repo = OTHER.main_line_repo
    pulls = github.get(f"/repos/{OTHER.org}/{repo}/pulls")
    assert pulls.status_code == 200 and pulls.json()[0]["base"]["repo"]["owner"]["login"] \
        == OTHER.org
    assert github.get(f"/repos/{DEFAULT_WORLD.org}/payments-api/pulls").status_code == 404
    # Argo CD's revision of an app deployed from the main-line repository is a commit there.
    deployed = next(a for a in apps if a["spec"]["source"]["repoURL"].endswith(f"/{repo}.git"))
    revision = deployed["status"]["sync"]["revision"]
    assert github.get(f"/repos/{OTHER.org}/{repo}/commits/{revision}").status_code == 200


def test_an_unknown_world_says_which_there_are() -> None:
    assert world_named(None) is DEFAULT_WORLD and world_named(OTHER.key.upper()) is OTHER
    with pytest.raises(Exception, match="Choose one of: " + ", ".join(WORLDS)):
        world_named("atlantis")
