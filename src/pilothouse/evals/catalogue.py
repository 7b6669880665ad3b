"""The resources that exist in an evaluation's world, so a tool call naming another is caught.

A model that does not know a name makes one up: a `<team>-<service>-<env>` application in a
world whose applications have one-word names, the organisation of the examples it was shown,
run 4412.
On a sandbox that happens to have the name the guess works; elsewhere it fails. So the names a
call's arguments give (an application, a project, an owner, a repository, a pull request or run
number, the `repo:`/`org:` qualifiers of a search) are checked against what the world's
generators made, read from the same records the sandboxes serve. A name the person typed is
theirs, not a guess: the check leaves names that occur in the conversation to the answer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pilothouse.sandbox.argocd import inventory
from pilothouse.sandbox.argocd.fleet import Fleet, FleetSpec
from pilothouse.sandbox.github.world import World, WorldSpec

#: `repo:o/r`, `org:o`, `user:o`, `owner:o` qualifiers of a GitHub search query.
_QUALIFIER = re.compile(r"(?<![\w-])(repo|org|user|owner):(\S+)", re.IGNORECASE)


@dataclass
class Catalogue:
    """Names by kind, lower-cased: Argo CD's resources and GitHub's repositories and numbers."""

    applications: set[str] = field(default_factory=set)
    projects: set[str] = field(default_factory=set)
    owners: set[str] = field(default_factory=set)
    #: owner/repo -> the pull request and issue numbers, and the run ids, it has.
    repositories: dict[str, tuple[set[int], set[int]]] = field(default_factory=dict)

    @classmethod
    def of(cls, fleet_spec: FleetSpec, github_spec: WorldSpec) -> Catalogue:
        """What the sandboxes started from these specs serve."""
        fleet, github = Fleet(fleet_spec), World(github_spec)
        catalogue = cls(
            applications={fleet.name_of(i).lower() for i in range(len(fleet))},
            projects={p["metadata"]["name"].lower() for p in inventory.projects(fleet)},
            owners={github.owner.lower()})
        for repo in github.repos.values():
            numbers = {p.number for p in repo.pulls} | {i.number for i in repo.issues}
            catalogue.repositories[repo.full_name.lower()] = (numbers, {r.id for r in repo.runs})
        return catalogue

    def unknown(self, agent: str, args: Mapping[str, Any]) -> list[tuple[str, str]]:
        """The names in one call's arguments that do not exist here, as (kind, name)."""
        if agent == "argocd":
            return list(self._argocd(args))
        if agent == "github":
            return list(self._github(args))
        return []

    def _argocd(self, args: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
        name = args.get("name")
        if isinstance(name, str) and name.strip().lower() not in self.applications:
            yield "application", name
        project = args.get("project")
        if isinstance(project, str):
            for one in filter(None, (p.strip() for p in project.split(","))):
                if one.lower() not in self.projects:
                    yield "project", one

    def _github(self, args: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
        owner, repo = args.get("owner"), args.get("repo")
        if isinstance(owner, str):
            yield from self._owner(owner)
        if isinstance(owner, str) and isinstance(repo, str):
            full = f"{owner}/{repo}".lower()
            found = self.repositories.get(full)
            if found is None:
                if owner.lower() in self.owners:
                    yield "repository", repo
                return
            numbers, runs = found
            number, run_id = args.get("number"), args.get("run_id")
            if isinstance(number, int) and number not in numbers:
                yield f"number in {owner}/{repo}", str(number)
            if isinstance(run_id, int) and run_id not in runs:
                yield f"workflow run in {owner}/{repo}", str(run_id)
        query = args.get("query")
        if isinstance(query, str):
            for kind, value in _QUALIFIER.findall(query):
                value = value.strip("\"'")
                if kind.lower() == "repo":
                    owner_part = value.partition("/")[0]
                    if value.lower() not in self.repositories:
                        yield from self._owner(owner_part)
                        if owner_part.lower() in self.owners:
                            yield "repository", value.partition("/")[2]
                else:
                    yield from self._owner(value)

    def _owner(self, owner: str) -> Iterator[tuple[str, str]]:
        if owner.strip().lower() not in self.owners:
            yield "organisation", owner
