"""The default world: the made-up company both sandboxes describe unless told otherwise.

Shared so the Argo CD applications and the GitHub repositories line up: `payments-api` is
deployed by Argo CD and built in its GitHub repository, so a question that spans both
agents has one answer. Its conventions: applications are `<team>-<service>-<environment>`,
namespaces `<team>-<environment>` (production: `<team>`), repositories named after the
applications they build. Every existing test and evaluation case depends on it, name for name:
change it and they change.
"""

from __future__ import annotations

from pilothouse.sandbox.world_description import RepoSpec, Source, WorldDescription

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

ORG = "acme-corp"
DOMAIN = "acme.internal"
SHARED_REPO = f"https://github.com/{ORG}/platform-deployments.git"
HELM_CHART_REPO = f"https://charts.{DOMAIN}/stable"
#: (name, server, environment, region) of the cluster secrets every fleet has.
CLUSTERS: tuple[tuple[str, str, str, str], ...] = (
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
#: (login, id, type) of everyone who opens, reviews or triggers something.
PEOPLE: tuple[tuple[str, int, str], ...] = (
    ("jdoe-dev", 7734211, "User"),
    ("asmith-sre", 5521098, "User"),
    ("mchen", 1203344, "User"),
    ("rpatel-platform", 9087712, "User"),
    ("lgarcia", 3345121, "User"),
    ("kokafor", 6612093, "User"),
    ("tnguyen", 2299871, "User"),
    ("bwilliams-sec", 8876120, "User"),
    ("ykim", 4455012, "User"),
    ("ssilva", 1998234, "User"),
    ("dmueller", 7012388, "User"),
    ("fkhan-oncall", 5120934, "User"),
)
REPOS: tuple[RepoSpec, ...] = (
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
#: Teams whose services GitOps pull requests change (the GitHub sandbox's `APPS`).
GITOPS_TEAMS = ("payments", "checkout", "identity", "notifications", "platform", "catalog",
                "inventory")

ACME = WorldDescription(
    key="acme",
    summary="819 applications named <team>-<service>-<env>, repositories named after them",
    org=ORG, org_id=48151623, domain=DOMAIN, people=PEOPLE, oncall="fkhan-oncall",
    team_services=TEAM_SERVICES, environments=ENVIRONMENTS,
    env_labels={"dev": "dev", "production": "production", "staging": "staging"},
    placements=tuple((team, service, env) for team, services in TEAM_SERVICES.items()
                     for service in services for env in ENVIRONMENTS),
    app_name="{team}-{service}-{env}", workload="{team}-{service}",
    namespaces={"dev": "{team}-dev", "staging": "{team}-staging", "production": "{team}"},
    replica_regions=("eu-west-1", "us-east-1", "ap-south-1", "us-west-2", "eu-central-1"),
    clusters=CLUSTERS,
    extra_cluster_parts=(("eks", "prod", "eu-west-1"), ("aks", "staging", "westeurope"),
                         ("gke", "dev", "us-central1")),
    in_cluster_team="platform",
    sources=(Source(0.55, SHARED_REPO, "charts/{team}-{service}", "Helm"),
             Source(0.9, "https://github.com/{org}/{team}-deploy.git",
                    "apps/{service}/overlays/{env}", "Kustomize"),
             Source(1.0, HELM_CHART_REPO, "", "Helm")),
    helm_chart_repo=HELM_CHART_REPO,
    status_mix=(("Synced", "Healthy", 0.78), ("OutOfSync", "Healthy", 0.86),
                ("Synced", "Progressing", 0.91), ("OutOfSync", "Degraded", 0.95),
                ("Synced", "Degraded", 0.97), ("OutOfSync", "Missing", 0.985),
                ("Synced", "Suspended", 0.995), ("Unknown", "Unknown", 1.0)),
    tier_words=(("frontend", ("web", "bff", "gateway")),
                ("data", ("ledger", "warehouse", "kafka", "trino", "airflow", "spark", "loki",
                          "tempo")),
                ("worker", ("worker", "scheduler", "ingest", "sync", "indexer", "reconciler",
                            "dispatch"))),
    appsets=tuple((team, service) for team, services in TEAM_SERVICES.items()
                  for service in services),
    fleet_apps=819, fleet_seed=8_069_395,
    hostile_app="payments-gateway-production",
    repos=REPOS, github_seed=20_260_822,
    gitops_apps=tuple(f"{team}-{service}" for team in GITOPS_TEAMS
                      for service in TEAM_SERVICES[team]),
    pr_clusters=("eks-prod-eu-west-1", "eks-prod-us-east-1", "eks-staging-eu-west-1",
                 "eks-dev-eu-west-1"),
    labelled_teams=("payments", "checkout", "platform", "identity", "notifications"),
    ci_module=f"github.com/{ORG}/payments-api", huge_log_repo="payments-api",
    main_line_repo="platform-deployments", main_line_module="main_line_data",
    workspace="path:evals/workspace", workspace_commit="Import the orders service",
)
