"""The words a generated GitHub organisation is made of: people, labels, titles, paths, steps.

The names (owner, people, applications, clusters, teams) are the world's
(`sandbox.world_description`), gathered per world by `words_for`; the titles, bugs, features
and workflow steps here are every world's. In the default world service names come from the
Argo CD sandbox's vocabulary, so an application the Argo CD agent reports
(`payments-api-production`) has pull requests here that touch its files
(`apps/production/payments-api/values.yaml`). The module constants (`OWNER`, `HUMANS`, `APPS`,
...) are the default world's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pilothouse.sandbox.company import ACME
from pilothouse.sandbox.world_description import WorldDescription

BOTS: tuple[tuple[str, int, str], ...] = (
    ("renovate[bot]", 29139614, "Bot"),
    ("dependabot[bot]", 49699333, "Bot"),
)
#: The account the sandbox's token belongs to (`GET /user`).
VIEWER = "pilothouse-bot"
VIEWER_ID = 11235813

GITOPS_TITLES: tuple[str, ...] = (
    "{app}: bump image to {version}",
    "{app}: raise HPA maxReplicas to {replicas} in {env}",
    "{app}: set memory limit to {memory}Mi in {env}",
    "Promote {app} {version} to {env}",
    "{env}: enable {feature} for {app}",
    "Rotate {app} database credentials in {env}",
    "{app}: add PodDisruptionBudget in {env}",
)
SERVICE_TITLES: tuple[str, ...] = (
    "Fix {bug}",
    "Add {feature}",
    "Refactor {module} package",
    "Handle {bug} on retry",
    "Expose {feature} metrics",
    "Speed up {module} queries",
)
DEPENDENCY_TITLES: tuple[str, ...] = (
    "Bump {dependency} from {version_from} to {version}",
    "Update {dependency} to v{version}",
)
DOCS_TITLES: tuple[str, ...] = (
    "Runbook: {app} {bug}",
    "Document {feature} rollout",
)
BUGS: tuple[str, ...] = ("idempotency-key race", "timeout on refunds", "nil pointer in webhook "
                         "handler", "double charge on 3DS retry", "stale cache after deploy",
                         "connection pool exhaustion", "flaky health check")
FEATURES: tuple[str, ...] = ("canary rollouts", "rate limiting", "request tracing",
                             "structured logging", "graceful shutdown", "topology spread")
MODULES: tuple[str, ...] = ("ledger", "checkout", "webhooks", "auth", "billing", "catalog")
DEPENDENCIES: tuple[str, ...] = ("golang.org/x/net", "github.com/stretchr/testify", "react",
                                 "typescript", "actions/checkout", "helm/chart-testing-action")

#: Workflow name -> (file, jobs); each job is (name, steps).
WORKFLOWS: dict[str, tuple[str, tuple[tuple[str, tuple[str, ...]], ...]]] = {
    "CI": (".github/workflows/ci.yml", (
        ("lint", ("Set up job", "Run actions/checkout@v4", "Run golangci-lint", "Complete job")),
        ("test", ("Set up job", "Run actions/checkout@v4", "Run actions/setup-go@v5",
                  "Run make test", "Complete job")),
    )),
    "Validate manifests": (".github/workflows/validate.yml", (
        ("validate", ("Set up job", "Run actions/checkout@v4", "Run helm template",
                      "Run kubeconform", "Complete job")),
    )),
    "Deploy": (".github/workflows/deploy.yml", (
        ("deploy", ("Set up job", "Run actions/checkout@v4", "Run docker build",
                    "Run argocd app sync", "Complete job")),
    )),
}
#: What a failing step prints; `{app}` and `{ci_module}` are filled in per run and world.
_FAILURES: dict[str, tuple[str, ...]] = {
    "Run golangci-lint": ("internal/ledger/post.go:88:2: ineffectual assignment to err "
                          "(ineffassign)",),
    "Run make test": ("--- FAIL: TestConcurrentIdempotencyKeys (0.42s)",
                      "    post_test.go:131: expected 1 charge, got 2",
                      "FAIL\t{ci_module}/internal/ledger\t3.117s"),
    "Run helm template": ("Error: YAML parse error on {app}/templates/deployment.yaml: "
                          "error converting YAML to JSON: yaml: line 42: mapping values are "
                          "not allowed in this context",),
    "Run kubeconform": ("apps/production/{app}/values.yaml - HorizontalPodAutoscaler "
                        "{app} is invalid: spec.maxReplicas: Invalid value: 0",),
    "Run docker build": ("ERROR: failed to solve: process \"/bin/sh -c go build ./...\" did "
                         "not complete successfully: exit code: 1",),
    "Run argocd app sync": ("FATA[0004] rpc error: code = FailedPrecondition desc = another "
                            "operation is already in progress",),
}


@dataclass(frozen=True, eq=False)
class Words:
    """One world's names as the GitHub generator and documents use them."""

    owner: str
    owner_id: int
    people: tuple[tuple[str, int, str], ...]
    #: login -> (id, "User" | "Bot"), the viewer included.
    accounts: dict[str, tuple[int, str]]
    #: Label name -> (color, description).
    labels: dict[str, tuple[str, str]]
    #: Deployable applications GitOps and chart pull requests change, and their teams.
    apps: tuple[str, ...]
    app_teams: dict[str, str]
    envs: tuple[str, ...]
    clusters: tuple[str, ...]
    #: What a failing step prints before GitHub's closing `##[error]` line.
    failures: dict[str, tuple[str, ...]]
    #: The company word of commit e-mail addresses (`<login>@<company>.example`).
    company: str
    huge_log_repo: str | None

    @property
    def humans(self) -> tuple[str, ...]:
        return tuple(login for login, _, _ in self.people)


def _labels(world: WorldDescription) -> dict[str, tuple[str, str]]:
    labels = {
        "bug": ("d73a4a", "Something isn't working"),
        "enhancement": ("a2eeef", "New feature or request"),
        "dependencies": ("0366d6", "Pull requests that update a dependency file"),
        "security": ("b60205", "Security fix or hardening"),
        "do-not-merge": ("e11d21", "Blocked: do not merge yet"),
        "needs-review": ("fbca04", "Waiting for a reviewer"),
    }
    # A development environment gets no label of its own; the others, one colour each.
    envs = [env for env in world.environments if env != "dev"]
    for env, color in zip(envs, ("5319e7", "c5def5", "bfd4f2"), strict=False):
        labels[f"env:{env}"] = (color, f"Touches {env}")
    labels.update({"size/S": ("3cbf00", "Small change"), "size/M": ("5d9801", "Medium change"),
                   "size/L": ("7f7203", "Large change")})
    for team in world.labelled_teams:
        labels[f"team:{team}"] = ("1d76db", f"Owned by the {team} team")
    return labels


@cache
def words_for(world: WorldDescription) -> Words:
    """The GitHub words of `world`."""
    accounts = {login: (uid, kind) for login, uid, kind in (*world.people, *BOTS)}
    accounts[VIEWER] = (VIEWER_ID, "User")
    teams = {world.workload_of(team, service): team
             for team, service, _ in world.placements}
    failures = {step: tuple(line.replace("{ci_module}", world.ci_module) for line in lines)
                for step, lines in _FAILURES.items()}
    return Words(owner=world.org, owner_id=world.org_id, people=world.people,
                 accounts=accounts, labels=_labels(world), apps=world.gitops_apps,
                 app_teams={app: teams.get(app, app.split("-")[0]) for app in world.gitops_apps},
                 envs=world.environments, clusters=world.pr_clusters, failures=failures,
                 company=world.company, huge_log_repo=world.huge_log_repo)


DEFAULT_WORDS = words_for(ACME)
OWNER = DEFAULT_WORDS.owner
OWNER_ID = DEFAULT_WORDS.owner_id
PEOPLE = DEFAULT_WORDS.people
HUMANS: tuple[str, ...] = DEFAULT_WORDS.humans
ACCOUNTS = DEFAULT_WORDS.accounts
LABELS = DEFAULT_WORDS.labels
APPS: tuple[str, ...] = DEFAULT_WORDS.apps
ENVS: tuple[str, ...] = DEFAULT_WORDS.envs
CLUSTERS: tuple[str, ...] = DEFAULT_WORDS.clusters
FAILURES = DEFAULT_WORDS.failures
