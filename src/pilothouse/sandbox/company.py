"""The one made-up company both sandboxes describe: its teams, their services, environments.

Shared so the Argo CD applications and the GitHub repositories line up: `payments-api` is
deployed by Argo CD and built in its GitHub repository, so a question that spans both
agents has one answer.
"""

from __future__ import annotations

#: Team -> services it deploys. Sorted by team so team projects list in Kubernetes order.
TEAM_SERVICES: dict[str, tuple[str, ...]] = {
    "analytics": ("api", "ingest", "query", "scheduler", "warehouse-sync"),
    "billing": ("api", "invoicer", "ledger", "reconciler"),
    "catalog": ("api", "indexer", "pricing", "web"),
    "checkout": ("api", "cart", "web", "worker"),
    "data": ("airflow", "kafka-connect", "spark-operator", "trino"),
    "identity": ("auth", "directory", "oauth-proxy", "sessions"),
    "inventory": ("api", "stock-sync", "warehouse"),
    "logistics": ("api", "dispatch", "routing", "tracking"),
    "marketing": ("campaigns", "email", "web"),
    "mobile": ("bff", "config", "push-gateway"),
    "notifications": ("api", "sms", "webhooks", "worker"),
    "observability": ("alertmanager", "grafana", "loki", "prometheus", "tempo"),
    "payments": ("api", "fraud", "gateway", "ledger", "refunds", "worker"),
    "platform": ("cert-manager", "external-dns", "ingress-nginx", "keda", "vault"),
    "search": ("api", "indexer", "ranker"),
    "security": ("falco", "kyverno", "scanner", "trivy-operator"),
}
TEAMS: tuple[str, ...] = tuple(TEAM_SERVICES)
ENVIRONMENTS: tuple[str, ...] = ("dev", "production", "staging")
