"""Projects, application sets and clusters of a generated fleet, as Argo CD lists them.

These lists are small next to the applications (hundreds, not hundreds of thousands), so they
are rendered per request in the order the real server uses: projects in Kubernetes list order
(by name), application sets sorted by name, clusters in informer order with `in-cluster` last.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pilothouse.sandbox.argocd import vocabulary as v
from pilothouse.sandbox.argocd.fleet import Fleet, digest, fraction
from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.world_description import Cluster, WorldDescription


def _uid(seed: int, *parts: object) -> str:
    h = f"{digest(seed, *parts):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def _tags(terms: list[str]) -> str:
    return f" Tags: {', '.join(terms)}." if terms else ""


def project_name(k: int, world: WorldDescription = ACME) -> str:
    base = world.base_projects
    return base[k] if k < len(base) else f"tenant-{k:03d}"


def project(fleet: Fleet, k: int) -> dict[str, Any]:
    """Project number `k` (generation order)."""
    world = fleet.world
    name = project_name(k, world)
    terms = fleet.markers_for("projects", k, fleet.spec.project_count)
    if name == "default":
        description, repos = "Default project", ["*"]
    elif name in world.team_services:
        description = f"{name.capitalize()} team services"
        repos = world.team_repo_urls(name)
    else:
        description, repos = f"Tenant project {k:03d}", world.team_repo_urls(name)[:1]
    pattern = "*" if name == "default" else f"{name}*"
    destinations = [{"server": c[1], "namespace": pattern} for c in world.clusters]
    destinations.append({"server": v.IN_CLUSTER_SERVER, "namespace": pattern})
    return {
        "metadata": {"name": name, "namespace": "argocd", "uid": _uid(fleet.spec.seed, "p", k),
                     "resourceVersion": str(47_110_000 + k), "generation": 1 + k % 9,
                     "creationTimestamp": "2025-02-03T12:00:00Z",
                     "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
        "spec": {
            "sourceRepos": repos,
            "destinations": destinations,
            "description": description + _tags(terms),
            "roles": [{"name": "ci", "description": "CI sync role",
                       "policies": [f"p, proj:{name}:ci, applications, sync, {name}/*, allow"],
                       "groups": [f"{world.company}:{name}-admins"]}],
            "clusterResourceWhitelist": [{"group": "", "kind": "Namespace"}],
            "orphanedResources": {"warn": True},
        },
        "status": {},
    }


def projects(fleet: Fleet) -> Iterator[dict[str, Any]]:
    count = fleet.spec.project_count
    for k in sorted(range(count), key=lambda k: project_name(k, fleet.world)):
        yield project(fleet, k)


def applicationset_name(k: int, world: WorldDescription = ACME) -> str:
    if k < len(world.appsets):
        team, service = world.appsets[k]
        return f"{team}-{service}"
    return f"tenant-{k:03d}-apps"


def applicationset(fleet: Fleet, k: int) -> dict[str, Any]:
    """Application set number `k`: one per team service, generating its per-environment apps."""
    world = fleet.world
    name = applicationset_name(k, world)
    team, service = world.appsets[k] if k < len(world.appsets) else ("default", name[:-5])
    labels = {"team": team}
    for term in fleet.markers_for("applicationsets", k, fleet.spec.applicationset_count):
        labels[term] = "true"
    shared = world.sources[0]
    path = shared.path.format(team=team, service=service, env="{{env}}")
    return {
        "metadata": {"name": name, "namespace": "argocd", "uid": _uid(fleet.spec.seed, "s", k),
                     "resourceVersion": str(48_200_000 + k), "generation": 1 + k % 12,
                     "creationTimestamp": "2025-03-10T08:00:00Z", "labels": labels},
        "spec": {
            "generators": [{"list": {"elements": [
                {"env": c[2], "cluster": c[1]} for c in world.clusters[::2]]}}],
            "template": {
                "metadata": {"name": world.application(team, service, "{{env}}"),
                             "labels": {"team": team, "env": "{{env}}"}},
                "spec": {
                    "source": {"repoURL": shared.repo.format(org=world.org, team=team),
                               "path": path, "targetRevision": "main",
                               "helm": {"valueFiles": ["values.yaml", "values-{{env}}.yaml"]}},
                    "destination": {"server": "{{cluster}}", "namespace": team},
                    "project": team if team in world.team_services else "default",
                    "syncPolicy": {"automated": {"prune": True, "selfHeal": True}},
                },
            },
            "syncPolicy": {"preserveResourcesOnDeletion": True},
        },
        "status": {
            "conditions": [
                {"type": "ErrorOccurred", "status": "False", "reason": "ApplicationSetUpToDate",
                 "message": "Successfully generated parameters for all Applications",
                 "lastTransitionTime": "2026-08-21T14:02:00Z"},
                {"type": "ResourcesUpToDate", "status": "True",
                 "reason": "ApplicationSetUpToDate", "message": "ApplicationSet up to date",
                 "lastTransitionTime": "2026-08-21T14:02:00Z"},
            ],
            "resourcesCount": 3,
        },
    }


def applicationsets(fleet: Fleet) -> Iterator[dict[str, Any]]:
    count = fleet.spec.applicationset_count
    for k in sorted(range(count), key=lambda k: applicationset_name(k, fleet.world)):
        yield applicationset(fleet, k)


def _cluster_parts(k: int, world: WorldDescription) -> Cluster:
    if k < len(world.clusters):
        return world.clusters[k]
    provider, env, region = world.extra_cluster_parts[k % len(world.extra_cluster_parts)]
    name = f"{provider}-{env}-{region}-{k:03d}"
    return name, f"https://{name}.{world.domain}", env, region


def _connection(ok: bool) -> dict[str, Any]:
    return {"status": "Successful" if ok else "Failed",
            "message": "" if ok else "dial tcp 10.40.0.12:443: i/o timeout",
            "attemptedAt": "2026-08-22T08:15:02Z"}


def cluster(fleet: Fleet, k: int) -> dict[str, Any]:
    """Cluster secret number `k`, sanitized the way the API returns it (no credentials)."""
    name, server, env, region = _cluster_parts(k, fleet.world)
    ok = fraction(digest(fleet.spec.seed, "c", k), 0) > 0.08
    labels = {"env": env, "region": region}
    for term in fleet.markers_for("clusters", k, fleet.spec.cluster_count):
        labels[term] = "true"
    share = len(fleet) // max(1, fleet.spec.cluster_count + 1)
    return {
        "server": server, "name": name,
        "config": {"tlsClientConfig": {"insecure": False}},
        "connectionState": _connection(ok), "serverVersion": "1.31",
        "info": {"connectionState": _connection(ok), "serverVersion": "1.31",
                 "cacheInfo": {"resourcesCount": 1800 + 37 * k, "apisCount": 97,
                               "lastCacheSyncTime": "2026-08-22T07:40:11Z"},
                 "applicationsCount": share},
        "labels": labels,
    }


def clusters(fleet: Fleet) -> Iterator[dict[str, Any]]:
    for k in range(fleet.spec.cluster_count):
        yield cluster(fleet, k)
    # No secret exists for the local cluster, so the server appends it.
    yield {"server": v.IN_CLUSTER_SERVER, "name": v.IN_CLUSTER_NAME,
           "config": {"tlsClientConfig": {"insecure": False}},
           "connectionState": _connection(True), "serverVersion": "1.31",
           "info": {"connectionState": _connection(True), "serverVersion": "1.31",
                    "applicationsCount": 0}}
