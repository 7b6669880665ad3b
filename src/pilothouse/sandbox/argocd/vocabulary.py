"""The words a generated fleet is made of: teams, services, environments, clusters, repositories.

Kept apart from the generator so a test fleet can prove its marker terms never occur naturally
(see `FleetSpec` in `fleet.py`): a marker that also matched ordinary names would make
"exactly N matches" untrue.
"""

from __future__ import annotations

from pilothouse.sandbox.company import ENVIRONMENTS, TEAM_SERVICES, TEAMS

#: Short label value per environment, as platform teams tend to write them.
ENV_LABEL: dict[str, str] = {"dev": "dev", "production": "production", "staging": "staging"}
#: Name suffixes for second and later copies of a team/service/env triple.
REPLICA_REGIONS: tuple[str, ...] = (
    "eu-west-1",
    "us-east-1",
    "ap-south-1",
    "us-west-2",
    "eu-central-1",
)

#: (name, server, environment, region) of the cluster secrets every fleet has.
BASE_CLUSTERS: tuple[tuple[str, str, str, str], ...] = (
    ("eks-prod-eu-west-1", "https://eks-prod-eu-west-1.acme.internal", "production", "eu-west-1"),
    ("eks-prod-us-east-1", "https://eks-prod-us-east-1.acme.internal", "production", "us-east-1"),
    ("gke-prod-europe-west4", "https://gke-prod-europe-west4.acme.internal", "production",
     "europe-west4"),
    ("eks-staging-eu-west-1", "https://eks-staging-eu-west-1.acme.internal", "staging",
     "eu-west-1"),
    ("eks-staging-us-east-1", "https://eks-staging-us-east-1.acme.internal", "staging",
     "us-east-1"),
    ("eks-dev-eu-west-1", "https://eks-dev-eu-west-1.acme.internal", "dev", "eu-west-1"),
)
IN_CLUSTER_SERVER = "https://kubernetes.default.svc"
IN_CLUSTER_NAME = "in-cluster"
#: Clusters beyond the base ones are named after these (provider, environment, region).
EXTRA_CLUSTER_PARTS: tuple[tuple[str, str, str], ...] = (
    ("eks", "prod", "eu-west-1"),
    ("aks", "staging", "westeurope"),
    ("gke", "dev", "us-central1"),
)

SHARED_REPO = "https://github.com/acme-corp/platform-deployments.git"
HELM_CHART_REPO = "https://charts.acme.internal/stable"

#: Service words that hint at a tier label.
FRONTEND_WORDS = ("web", "bff", "gateway")
DATA_WORDS = ("ledger", "warehouse", "kafka", "trino", "airflow", "spark", "loki", "tempo")
WORKER_WORDS = ("worker", "scheduler", "ingest", "sync", "indexer", "reconciler", "dispatch")

EVENT_REASONS_NORMAL = ("ScalingReplicaSet", "SuccessfulCreate", "Pulled", "Started", "Created")
EVENT_REASONS_WARNING = ("BackOff", "Unhealthy", "FailedScheduling", "FailedMount")


def tier_of(service: str) -> str:
    """The `tier` label a service gets."""
    if any(word in service for word in FRONTEND_WORDS):
        return "frontend"
    if any(word in service for word in DATA_WORDS):
        return "data"
    if any(word in service for word in WORKER_WORDS):
        return "worker"
    return "backend"


def replica_suffix(replica: int) -> str:
    """The name suffix of the `replica`-th copy (0 has none)."""
    if replica == 0:
        return ""
    if replica <= len(REPLICA_REGIONS):
        return "-" + REPLICA_REGIONS[replica - 1]
    return f"-cell-{replica:03d}"


def vocabulary_text() -> str:
    """Every word the generator may emit, lower-cased, for checking marker terms."""
    words: list[str] = [*TEAMS, *ENVIRONMENTS, *REPLICA_REGIONS, "cell", "tenant", "argocd"]
    for services in TEAM_SERVICES.values():
        words.extend(services)
    for name, server, env, region in BASE_CLUSTERS:
        words.extend((name, server, env, region))
    for parts in EXTRA_CLUSTER_PARTS:
        words.extend(parts)
    words.extend((IN_CLUSTER_SERVER, IN_CLUSTER_NAME, SHARED_REPO, HELM_CHART_REPO))
    words.extend(("acme-corp", "acme.internal", "charts", "overlays", "values", "main", "helm"))
    words.extend(("frontend", "backend", "worker", "data", "default", "sandbox", "generated"))
    # Fixed phrases of descriptions, labels and annotations.
    words.extend(("apps", "tags", "team services", "tenant project", "default project", "true",
                  "successful", "failed", "notifications.argoproj.io", "alerts", "github",
                  "https", "kubernetes.default.svc", "resources-finalizer"))
    words.extend(EVENT_REASONS_NORMAL + EVENT_REASONS_WARNING)
    return "\n".join(words).lower()
