"""The words a generated fleet is made of, per world: teams, services, clusters, repositories.

The names themselves are the world's (`sandbox.world_description`); the constants below are the
default world's, kept for tests and tools that name it. Kept apart from the generator so a test
fleet can prove its marker terms never occur naturally (see `FleetSpec` in `fleet.py`): a
marker that also matched ordinary names would make "exactly N matches" untrue.
"""

from __future__ import annotations

from pilothouse.sandbox.company import ACME, ENVIRONMENTS, TEAM_SERVICES, TEAMS
from pilothouse.sandbox.world_description import WorldDescription

__all__ = ["ENVIRONMENTS", "TEAMS", "TEAM_SERVICES"]

#: The default world's words (see `sandbox.company`).
ENV_LABEL = dict(ACME.env_labels)
REPLICA_REGIONS: tuple[str, ...] = ACME.replica_regions
BASE_CLUSTERS: tuple[tuple[str, str, str, str], ...] = ACME.clusters
EXTRA_CLUSTER_PARTS: tuple[tuple[str, str, str], ...] = ACME.extra_cluster_parts
SHARED_REPO = ACME.sources[0].repo
HELM_CHART_REPO = ACME.helm_chart_repo

IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
IN_CLUSTER_NAME = "in-cluster"

EVENT_REASONS_NORMAL = ("ScalingReplicaSet", "SuccessfulCreate", "Pulled", "Started", "Created")
EVENT_REASONS_WARNING = ("BackOff", "Unhealthy", "FailedScheduling", "FailedMount")


def tier_of(service: str) -> str:
    """The `tier` label a service of the default world gets."""
    return ACME.tier_of(service)


def replica_suffix(replica: int) -> str:
    """The name suffix of the `replica`-th copy in the default world (0 has none)."""
    return ACME.replica_suffix(replica)


def vocabulary_text(world: WorldDescription = ACME) -> str:
    """Every word the generator may emit for `world`, lower-cased, for checking marker terms."""
    words: list[str] = [*world.teams, *world.environments, *world.replica_regions, "cell",
                        "tenant", "argocd"]
    for services in world.team_services.values():
        words.extend(services)
    words.extend(world.env_labels.values())
    for name, server, env, region in world.clusters:
        words.extend((name, server, env, region))
    for parts in world.extra_cluster_parts:
        words.extend(parts)
    words.extend((IN_CLUSTER_SERVER, IN_CLUSTER_NAME, world.helm_chart_repo))
    for source in world.sources:
        words.extend((source.repo, source.path))
    words.extend((world.org, world.domain, "charts", "overlays", "values", "main", "helm"))
    words.extend(("frontend", "backend", "worker", "data", "default", "sandbox", "generated"))
    # Fixed phrases of descriptions, labels and annotations.
    words.extend(("apps", "tags", "team services", "tenant project", "default project", "true",
                  "successful", "failed", "notifications.argoproj.io", "alerts", "github",
                  "https", "kubernetes.default.svc", "resources-finalizer", "fleet"))
    words.extend(EVENT_REASONS_NORMAL + EVENT_REASONS_WARNING)
    return "\n".join(words).lower()
