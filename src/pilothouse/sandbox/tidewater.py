"""A second world with other conventions: the evaluation's test split runs in it.

Where the default company (`sandbox.company`) names an application `<team>-<service>-<env>`,
this one names it with one word (`kelpgate`), deploys each service once (the environment is a
label and a cluster, never part of a name), groups teams into squads named after estuaries,
keeps its manifests in repositories named for what they hold (`shipyard`, `drydock`), not for
the applications, runs a smaller, less healthy fleet of its own seed on clusters of another
provider, and its codebase is a real library (h11, installed with the product), not ours.

The service names are compounds of two word lists, picked and assigned to squads by a hash:
deterministic, and unlike any name a product would ship with.
"""

from __future__ import annotations

import hashlib

from pilothouse.sandbox.world_description import RepoSpec, Source, WorldDescription

ORG = "tidewater-labs"
DOMAIN = "tidewater.dev"
SQUADS = ("humber", "medway", "mersey", "severn", "solent", "tamar", "tyne")
ENVIRONMENTS = ("live", "preview")
_FIRST = ("drift", "salt", "kelp", "brine", "shoal", "gull", "storm", "fog", "reef", "marsh",
          "surf", "tern", "dune", "cove", "swell", "spray")
_SECOND = ("line", "post", "gate", "watch", "mark", "yard", "light", "ward", "keep", "hold",
           "fall", "run", "stone", "wick", "ridge", "mere")
APPS = 160
_SALT = "tidewater"


def _hash(*parts: str) -> int:
    return int.from_bytes(hashlib.blake2b(":".join((_SALT, *parts)).encode(),
                                          digest_size=8).digest(), "big")


def _services() -> dict[str, tuple[str, ...]]:
    """`APPS` compound names, each in one squad; squads and services sorted by name."""
    # No tripled letters ("gull" + "light"): a name people could not type twice the same way.
    words = sorted((a + b for a in _FIRST for b in _SECOND if "lll" not in a + b),
                   key=lambda w: _hash("pick", w))
    by_squad: dict[str, list[str]] = {squad: [] for squad in SQUADS}
    for word in words[:APPS]:
        by_squad[SQUADS[_hash("squad", word) % len(SQUADS)]].append(word)
    return {squad: tuple(sorted(names)) for squad, names in by_squad.items()}


TEAM_SERVICES = _services()
#: About one service in seven runs only in preview.
PLACEMENTS = tuple((squad, service, "preview" if _hash("env", service) % 7 == 0 else "live")
                   for squad, services in TEAM_SERVICES.items() for service in services)
HELM_CHART_REPO = f"https://charts.{DOMAIN}/stable"
CLUSTERS: tuple[tuple[str, str, str, str], ...] = (
    ("tw-live-ams3", f"https://k8s-live-ams3.{DOMAIN}", "live", "ams3"),
    ("tw-live-fra1", f"https://k8s-live-fra1.{DOMAIN}", "live", "fra1"),
    ("tw-live-nyc3", f"https://k8s-live-nyc3.{DOMAIN}", "live", "nyc3"),
    ("tw-preview-ams3", f"https://k8s-preview-ams3.{DOMAIN}", "preview", "ams3"),
)
PEOPLE: tuple[tuple[str, int, str], ...] = (
    ("nkowalski", 6120457, "User"),
    ("amara-o", 3391820, "User"),
    ("jbright-sre", 8802716, "User"),
    ("wlindqvist", 1457702, "User"),
    ("hoshiro", 7264410, "User"),
    ("pcastell", 5093318, "User"),
    ("dvance-ops", 2718604, "User"),
    ("rmbeki", 9931025, "User"),
    ("tfairweather", 4482911, "User"),
    ("zquill", 6650173, "User"),
)
REPOS: tuple[RepoSpec, ...] = (
    RepoSpec("shipyard", open_prs=44, closed_prs=126, issues=30, runs=110, kind="gitops",
             team="tyne", description="Kustomize overlays of every live and preview service",
             language="YAML"),
    RepoSpec("tidepool", open_prs=37, closed_prs=88, issues=33, runs=130, kind="service",
             team="severn", description="Python monorepo of the severn squad's services",
             language="Python"),
    RepoSpec("ropewalk", open_prs=12, closed_prs=40, issues=14, runs=60, kind="service",
             team="humber", description="Order routing engine", language="Go"),
    RepoSpec("compass-web", open_prs=19, closed_prs=35, issues=16, runs=70, kind="web",
             team="solent", description="Customer web app", language="TypeScript"),
    RepoSpec("drydock", open_prs=14, closed_prs=52, issues=9, runs=50, kind="charts",
             team="tyne", description="Helm charts the squads share", language="Go Template"),
    RepoSpec("logbook", open_prs=3, closed_prs=9, issues=6, runs=12, kind="docs",
             team="tyne", description="Runbooks and incident notes"),
)

TIDEWATER = WorldDescription(
    key="tidewater",
    summary=f"{APPS} one-word applications, environments as labels, repositories named "
            "for what they hold",
    org=ORG, org_id=73319044, domain=DOMAIN, people=PEOPLE, oncall="dvance-ops",
    team_services=TEAM_SERVICES, environments=ENVIRONMENTS,
    env_labels={"live": "live", "preview": "preview"},
    placements=PLACEMENTS, app_name="{service}", workload="{service}",
    namespaces={"live": "{team}", "preview": "preview-{team}"},
    replica_regions=("ams3", "fra1", "nyc3"), clusters=CLUSTERS,
    extra_cluster_parts=(("doks", "live", "lon1"), ("doks", "preview", "sfo3")),
    in_cluster_team="tyne",
    sources=(Source(0.6, "https://github.com/{org}/shipyard.git", "{env}/{service}",
                    "Kustomize"),
             Source(0.9, "https://github.com/{org}/drydock.git", "charts/{service}", "Helm"),
             Source(1.0, HELM_CHART_REPO, "", "Helm")),
    helm_chart_repo=HELM_CHART_REPO,
    # Less healthy than the default fleet: enough Degraded apps for a second page of them.
    status_mix=(("Synced", "Healthy", 0.64), ("OutOfSync", "Healthy", 0.73),
                ("Synced", "Progressing", 0.78), ("OutOfSync", "Degraded", 0.87),
                ("Synced", "Degraded", 0.93), ("OutOfSync", "Missing", 0.96),
                ("Synced", "Suspended", 0.985), ("Unknown", "Unknown", 1.0)),
    tier_words=(("frontend", ("gate", "light", "post")),
                ("data", ("hold", "keep", "yard", "stone")),
                ("worker", ("run", "watch", "wick"))),
    appsets=tuple((squad, "fleet") for squad in SQUADS),
    fleet_apps=APPS, fleet_seed=4_217_733,
    hostile_app="sprayhold",
    repos=REPOS, github_seed=19_700_301,
    gitops_apps=tuple(service for services in TEAM_SERVICES.values() for service in services),
    pr_clusters=tuple(c[0] for c in CLUSTERS), labelled_teams=SQUADS,
    ci_module=f"github.com/{ORG}/ropewalk", huge_log_repo=None,
    main_line_repo="shipyard", main_line_module="main_line_tidewater",
    workspace="package:h11", workspace_commit="Import {package} {version}",
)
