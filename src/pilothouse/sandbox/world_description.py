"""What a sandbox world is made of, as data: the generators of both sandboxes read it.

A world is one made-up company: its organisation, teams and services, how it names
applications, namespaces and clusters, where manifests come from, its people and repositories,
the sizes and seeds of what is generated, and the codebase an evaluation works in. The
generators hold no names of their own, so a second world with other conventions (one-word
application names, no environment in a name, repositories not named after applications) is a
second description, not a fork of the code. `sandbox.worlds` lists the worlds there are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: Repository kinds, which decide titles, file paths and workflows.
KINDS = frozenset({"gitops", "charts", "service", "web", "docs"})
#: (sync, health, cumulative share) of a fleet's applications.
StatusMix = tuple[tuple[str, str, float], ...]
#: (name, server URL, environment, region) of a cluster secret.
Cluster = tuple[str, str, str, str]


@dataclass(frozen=True)
class RepoSpec:
    """One repository to generate: exact counts, so tests know the answers."""

    name: str
    open_prs: int = 0
    closed_prs: int = 0
    issues: int = 0
    runs: int = 0
    kind: str = "service"
    team: str = "platform"
    description: str = ""
    language: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, not {self.kind!r}")
        if min(self.open_prs, self.closed_prs, self.issues, self.runs) < 0:
            raise ValueError("counts must be zero or more")


@dataclass(frozen=True)
class Source:
    """Where applications' manifests come from, for the share of the fleet up to `upto`.

    `repo` and `path` are templates over `{org}`, `{team}`, `{service}` and `{env}`.
    """

    upto: float
    repo: str
    path: str
    kind: str  # "Helm" or "Kustomize"


# eq=False: a world is compared (and hashed, as a cache key) by identity; it holds dicts.
@dataclass(frozen=True, eq=False)
class WorldDescription:
    """One made-up company, everything both sandboxes and the evaluation generate from it."""

    #: The name `--world` takes.
    key: str
    summary: str
    # -- the organisation ---------------------------------------------------------------------
    #: GitHub organisation, also the image registry's owner (`ghcr.io/<org>/...`).
    org: str
    org_id: int
    #: Internal DNS domain: cluster API servers, ingress hosts, the Helm chart repository.
    domain: str
    #: (login, id, type) of everyone who opens, reviews, commits or deploys something.
    people: tuple[tuple[str, int, str], ...]
    #: Who deploys a hotfix in the sandbox's test hook.
    oncall: str
    # -- Argo CD --------------------------------------------------------------------------------
    #: Team (= Argo CD project) -> the services it deploys.
    team_services: Mapping[str, tuple[str, ...]]
    environments: tuple[str, ...]
    #: Environment -> the value of an application's `env` label.
    env_labels: Mapping[str, str]
    #: (team, service, environment) of each application before replicas, in generation order.
    placements: tuple[tuple[str, str, str], ...]
    #: Templates over `{team}`, `{service}`, `{env}`: application, workload, namespace names.
    app_name: str
    workload: str
    namespaces: Mapping[str, str]
    #: Name suffixes for second and later copies of a placement (then `-cell-NNN`).
    replica_regions: tuple[str, ...]
    clusters: tuple[Cluster, ...]
    #: (provider, environment, region) of clusters beyond the base ones.
    extra_cluster_parts: tuple[tuple[str, str, str], ...]
    #: Half of this team's applications run on the Argo CD cluster itself (`in-cluster`).
    in_cluster_team: str | None
    sources: tuple[Source, ...]
    helm_chart_repo: str
    status_mix: StatusMix
    #: Words in a service name that give its `tier` label, checked in order (else backend).
    tier_words: tuple[tuple[str, tuple[str, ...]], ...]
    #: (team, service) of each ApplicationSet.
    appsets: tuple[tuple[str, str], ...]
    fleet_apps: int
    fleet_seed: int
    #: The application an evaluation plants a prompt injection on.
    hostile_app: str
    # -- GitHub ---------------------------------------------------------------------------------
    repos: tuple[RepoSpec, ...]
    github_seed: int
    #: Applications that GitOps and chart pull requests change.
    gitops_apps: tuple[str, ...]
    #: Clusters that pull request paths and issue bodies mention.
    pr_clusters: tuple[str, ...]
    #: Teams with a `team:<name>` label, in label order.
    labelled_teams: tuple[str, ...]
    #: The Go module a failing test prints (`FAIL <module>/internal/ledger`).
    ci_module: str
    #: The repository whose newest failing run has the oversized (~5 MB) log, if any.
    huge_log_repo: str | None
    #: The repository whose main line the Argo CD sandbox deploys, and the generated module
    #: (`sandbox.<module>`) holding it, so the Argo CD sandbox needs no GitHub code.
    main_line_repo: str
    main_line_module: str
    # -- the evaluation's codebase --------------------------------------------------------------
    #: `path:<folder relative to the repository root>` or `package:<installed package>`.
    workspace: str
    workspace_commit: str

    @property
    def company(self) -> str:
        """The company word of the domain (`example` of `example.internal`)."""
        return self.domain.split(".")[0]

    @property
    def teams(self) -> tuple[str, ...]:
        return tuple(self.team_services)

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(login for login, _, _ in self.people)

    @property
    def base_projects(self) -> tuple[str, ...]:
        """Argo CD's `default` project and one per team."""
        return ("default", *self.teams)

    def application(self, team: str, service: str, env: str) -> str:
        return self.app_name.format(team=team, service=service, env=env)

    def workload_of(self, team: str, service: str) -> str:
        return self.workload.format(team=team, service=service)

    def namespace(self, team: str, service: str, env: str) -> str:
        return self.namespaces[env].format(team=team, service=service, env=env)

    def replica_suffix(self, replica: int) -> str:
        """The name suffix of the `replica`-th copy of a placement (0 has none)."""
        if replica == 0:
            return ""
        if replica <= len(self.replica_regions):
            return "-" + self.replica_regions[replica - 1]
        return f"-cell-{replica:03d}"

    def tier_of(self, service: str) -> str:
        """The `tier` label a service gets."""
        for tier, words in self.tier_words:
            if any(word in service for word in words):
                return tier
        return "backend"

    def source_for(self, share: float) -> Source:
        return next(s for s in self.sources if share < s.upto)

    def team_repo_urls(self, team: str) -> list[str]:
        """The repositories a team's project may deploy from, in source order."""
        seen: list[str] = []
        for source in self.sources:
            url = source.repo.format(org=self.org, team=team)
            if url not in seen:
                seen.append(url)
        return seen
