"""The words a generated GitHub organisation is made of: people, labels, titles, paths, steps.

Service names come from the Argo CD sandbox's vocabulary, so an application the Argo CD agent
reports (`payments-api-production`) has pull requests here that touch its files
(`apps/production/payments-api/values.yaml`).
"""

from __future__ import annotations

from pilothouse.sandbox.company import ENVIRONMENTS, TEAM_SERVICES

OWNER = "acme-corp"
OWNER_ID = 48151623

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
BOTS: tuple[tuple[str, int, str], ...] = (
    ("renovate[bot]", 29139614, "Bot"),
    ("dependabot[bot]", 49699333, "Bot"),
)
HUMANS: tuple[str, ...] = tuple(login for login, _, _ in PEOPLE)
ACCOUNTS: dict[str, tuple[int, str]] = {
    login: (uid, kind) for login, uid, kind in (*PEOPLE, *BOTS)
}
#: The account the sandbox's token belongs to (`GET /user`).
VIEWER = "pilothouse-bot"
ACCOUNTS[VIEWER] = (11235813, "User")

#: Label name -> (color, description).
LABELS: dict[str, tuple[str, str]] = {
    "bug": ("d73a4a", "Something isn't working"),
    "enhancement": ("a2eeef", "New feature or request"),
    "dependencies": ("0366d6", "Pull requests that update a dependency file"),
    "security": ("b60205", "Security fix or hardening"),
    "do-not-merge": ("e11d21", "Blocked: do not merge yet"),
    "needs-review": ("fbca04", "Waiting for a reviewer"),
    "env:production": ("5319e7", "Touches production"),
    "env:staging": ("c5def5", "Touches staging"),
    "size/S": ("3cbf00", "Small change"),
    "size/M": ("5d9801", "Medium change"),
    "size/L": ("7f7203", "Large change"),
    "team:payments": ("1d76db", "Owned by the payments team"),
    "team:checkout": ("1d76db", "Owned by the checkout team"),
    "team:platform": ("1d76db", "Owned by the platform team"),
    "team:identity": ("1d76db", "Owned by the identity team"),
    "team:notifications": ("1d76db", "Owned by the notifications team"),
}

#: Deployable applications: `team-service` as the Argo CD sandbox names them.
APPS: tuple[str, ...] = tuple(
    f"{team}-{service}" for team in ("payments", "checkout", "identity", "notifications",
                                     "platform", "catalog", "inventory")
    for service in TEAM_SERVICES[team]
)
ENVS: tuple[str, ...] = ENVIRONMENTS
CLUSTERS: tuple[str, ...] = ("eks-prod-eu-west-1", "eks-prod-us-east-1", "eks-staging-eu-west-1",
                             "eks-dev-eu-west-1")

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
#: What a failing step prints before GitHub's closing `##[error]` line.
FAILURES: dict[str, tuple[str, ...]] = {
    "Run golangci-lint": ("internal/ledger/post.go:88:2: ineffectual assignment to err "
                          "(ineffassign)",),
    "Run make test": ("--- FAIL: TestConcurrentIdempotencyKeys (0.42s)",
                      "    post_test.go:131: expected 1 charge, got 2",
                      "FAIL\tgithub.com/acme-corp/payments-api/internal/ledger\t3.117s"),
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
