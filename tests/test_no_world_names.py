"""No name of the sandbox world in the product: src/ outside `sandbox/` and `testing/`.

Measured on a world with other names: the GitHub agent searched the sandbox's organisation,
copied from our own prompt, and every call failed. A name the product ships with works by luck
on the sandbox and fails everywhere else, so the product (prompts, tool schemas, error hints,
routing words, the few-shot bank, comments and docstrings, which become tool descriptions)
names nothing the sandboxes generate.

The names come from the generators themselves, for every world the sandboxes can generate (the
default one and those with other conventions, `sandbox.worlds.WORLDS`): a fleet larger than the
world's own (so replica suffixes, tenant projects and extra clusters appear) and its GitHub
organisation, read back as the documents the sandboxes serve (applications, projects,
application sets, clusters, namespaces, repositories, accounts, and the company their hosts are
named after).

The rule, for text: every generated name counts, matched case-insensitively as a whole
identifier (not inside a longer hyphenated or dotted-off word), except the team names used
alone. The default world's teams ("payments", "search", "platform"), and the projects and
production namespaces named after them, are ordinary English words a product must be free to
write; they count inside compound names (`payments-api`, `search-indexer-staging`). Every other
name counts even when it is one word: an organisation, a company, a login, another world's
squads and one-word applications (`kelpgate`) are never ordinary words. What Argo CD
itself names (`in-cluster`, the `default` project) belongs to every world and is no sandbox name.

For the few-shot bank, whose argument values a model copies straight into a call, the rule is
stricter: no argument value names any generated resource, plain words included.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

from pilothouse.agents.example_bank import BANKS
from pilothouse.sandbox.argocd import inventory
from pilothouse.sandbox.argocd import vocabulary as argocd_words
from pilothouse.sandbox.argocd.fleet import BASE_PROJECTS, Fleet, FleetSpec
from pilothouse.sandbox.company import TEAMS
from pilothouse.sandbox.github.world import World, WorldSpec
from pilothouse.sandbox.world_description import WorldDescription
from pilothouse.sandbox.worlds import DEFAULT_WORLD, WORLDS

SRC = Path(__file__).resolve().parents[1] / "src" / "pilothouse"
#: The world's own code: it is where the names are made.
WORLD_CODE = ("sandbox", "testing")
#: Argo CD's own names, in every installation.
ARGOCD_BUILT_IN = {argocd_words.IN_CLUSTER_NAME, *(set(BASE_PROJECTS) - set(TEAMS))}


def _fleet(world: WorldDescription) -> Fleet:
    """A fleet past every natural count: replica suffixes, tenant projects, extra clusters."""
    natural = FleetSpec.of(world)
    return Fleet(FleetSpec(apps=len(world.placements) * (len(world.replica_regions) + 2),
                           projects=natural.project_count + 3,
                           applicationsets=natural.applicationset_count + 3,
                           clusters=natural.cluster_count + 3, seed=natural.seed, world=world))


def _from_url(url: str) -> Iterator[tuple[str, str]]:
    """The host of `url`, the company it names, and a GitHub URL's owner and repository."""
    parts = urlparse(url)
    host = parts.hostname or ""
    if host == "github.com":
        owner, _, repo = parts.path.strip("/").removesuffix(".git").partition("/")
        yield owner, "organisation"
        yield repo, "repository"
    elif host and host != urlparse(argocd_words.IN_CLUSTER_SERVER).hostname:
        # A host counts by its labels: the cluster or service it names, and the company.
        yield host.split(".")[-2], "company"


def generated_names() -> dict[str, str]:
    """Every name the sandboxes generate in every world, lower-cased, with what it names."""
    names: dict[str, str] = {}
    for world in WORLDS.values():
        names.update(world_names(world))
    return names


def world_names(world: WorldDescription) -> dict[str, str]:
    """Every name the sandboxes generate in `world`, lower-cased, with what it names."""
    names: dict[str, str] = {team: "team" for team in world.teams}
    fleet = _fleet(world)
    for index in range(len(fleet)):
        app = fleet.app(index)
        names.update({app.name: "application", f"{app.team}-{app.service}": "application",
                      app.namespace: "namespace", app.cluster_name: "cluster"})
        for url in (app.repo, app.cluster_server):
            names.update(dict(_from_url(url)))
    for project in inventory.projects(fleet):
        names[project["metadata"]["name"]] = "project"
    for appset in inventory.applicationsets(fleet):
        names[appset["metadata"]["name"]] = "application set"
    for cluster in inventory.clusters(fleet):
        names[cluster["name"]] = "cluster"
        names.update(dict(_from_url(cluster["server"])))
    names.update(dict(_from_url(world.helm_chart_repo)))
    github = World(WorldSpec.of(world))
    names[github.owner] = "organisation"
    for repo in github.repos.values():
        names[repo.spec.name] = "repository"
    names.update({login: "account" for login, (_, kind) in github.words.accounts.items()
                  if kind == "User"})  # GitHub Apps (`renovate[bot]`) are GitHub's own
    return {name.lower(): kind for name, kind in names.items()
            if name and name not in ARGOCD_BUILT_IN}


def text_names(names: dict[str, str]) -> set[str]:
    """The names that count in text: all but the team words used alone (see the docstring)."""
    plain_words = {team.lower() for team in TEAMS}
    return {name for name in names if name not in plain_words}


#: An identifier: letters, digits, `_` and `-`; dots, slashes and spaces separate them.
IDENTIFIER = re.compile(r"[\w-]+")


def named(text: str, names: set[str]) -> list[str]:
    """The identifiers of `text` that are one of `names` (any case), in order."""
    return [word for word in IDENTIFIER.findall(text) if word.lower() in names]


@pytest.fixture(scope="module")
def names() -> dict[str, str]:
    return generated_names()


def product_files() -> Iterator[Path]:
    for path in sorted(SRC.rglob("*")):
        relative = path.relative_to(SRC).parts
        if path.is_file() and relative[0] not in WORLD_CODE and "__pycache__" not in relative:
            yield path


@pytest.mark.parametrize("world", WORLDS.values(), ids=list(WORLDS))
def test_the_names_come_from_the_generators(names: dict[str, str],
                                            world: WorldDescription) -> None:
    # Each world's organisation, repositories, application and cluster names must all be
    # covered, or the scan below could pass by looking for nothing.
    counted = text_names(names)
    github = World(WorldSpec.of(world))
    fleet = Fleet(FleetSpec.of(world))
    assert github.owner.lower() in counted
    assert {r.spec.name.lower() for r in github.repos.values()} <= counted
    assert {a.name for a in map(fleet.app, range(len(fleet)))} <= counted
    assert {c[0] for c in world.clusters} <= counted
    assert world.company in counted and {login for login, _, _ in world.people} <= counted
    if world is DEFAULT_WORLD:
        assert len(counted) > 1_000
        assert not set(TEAMS) & counted and set(TEAMS) <= names.keys()
    else:  # another world's teams are no English words: they count even alone
        assert set(world.teams) <= counted


def test_names_are_matched_as_whole_identifiers(names: dict[str, str]) -> None:
    counted = text_names(names)
    owner, repo = World().owner, next(iter(World().repos.values())).spec.name
    app = Fleet().app(0).name
    assert named(f'search "repo:{owner}/{repo} is:pr"', counted) == [owner, repo]
    assert named(f"Check {app.upper()} at https://{app}.example.com/", counted) == [
        app.upper(), app]
    assert named(f"{app}-canary and my-{repo} and {owner}_mirror", counted) == []
    assert named(f"the {TEAMS[0]} team uses search", counted) == []


def test_no_sandbox_name_in_the_product(names: dict[str, str]) -> None:
    counted = text_names(names)
    found = []
    for path in product_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # images and other binary assets
        for number, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(SRC.parent)}:{number}: {word} ({names[word.lower()]})"
                      for word in named(line, counted)]
    assert not found, "sandbox names in the product:\n" + "\n".join(found)


def test_no_few_shot_argument_names_a_sandbox_resource(names: dict[str, str]) -> None:
    # The bank's names are the product's own neutral vocabulary (example-org, web-frontend,
    # orders-api ...): a copied one must fail the same way on every world, never succeed on
    # the sandbox by luck.
    found = []
    for agent, bank in BANKS.items():
        for example in bank:
            for value in example.args.values():
                found += [f"{agent}: {example.request!r} names {word} ({names[word]})"
                          for word in named(str(value).lower(), set(names))]
    assert not found, "\n".join(found)
    used = {v for bank in BANKS.values() for e in bank for v in e.args.values()}
    assert {"example-org", "orders-api"} <= {w for v in used for w in IDENTIFIER.findall(
        str(v))}  # the bank has GitHub names, so the check above could fail
