"""Requests and the tool call that answers each, per agent: the dynamic few-shot bank.

Written for this bank, to show argument shapes a small model gets wrong (a team or an
environment is a search, not a `project=` filter; statuses are spelled as Argo CD spells them;
a repository is `owner` + `repo`). None of them is an evaluation question or a paraphrase of
one: `tests/agents/test_example_bank.py` measures every entry against every evaluation
question, as written and with names masked (as the selector compares them), and fails above
the thresholds it justifies. Names are the product's own, none a sandbox's
(`tests/test_no_world_names.py`): a model that copies an example's name must not get an
answer by luck on the sandbox and fail on every other world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Example:
    """A request and the one call that answers it."""

    request: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)

    def line(self, with_arguments: bool = True) -> str:
        """`request -> tool(arg="value", ...)` as the prompt shows it (the tool alone when
        not `with_arguments`)."""
        if not with_arguments:
            return f'- "{self.request}" -> {self.tool}'
        args = ", ".join(f"{key}={value!r}".replace("'", '"') for key, value in
                         self.args.items())
        return f'- "{self.request}" -> {self.tool}({args})'


ARGOCD_EXAMPLES: tuple[Example, ...] = (
    Example("how many shipping apps are out of sync", "list_applications",
            {"project": "shipping", "sync_status": "OutOfSync"}),
    Example("apps deployed from the gitops-config repo", "search_argocd_resources",
            {"query": "gitops-config", "resource_types": "applications"}),
    Example("what runs on the gke-prod-asia-east1 cluster", "search_argocd_resources",
            {"query": "gke-prod-asia-east1", "resource_types": "applications"}),
    Example("media services in staging", "search_argocd_resources",
            {"query": "media.*staging"}),
    Example("everything for the accounts team", "search_argocd_resources",
            {"query": "accounts"}),
    Example("services running in the staging environment", "search_argocd_resources",
            {"query": "staging", "resource_types": "applications"}),
    Example("apps on the aks-staging-northeurope cluster", "search_argocd_resources",
            {"query": "aks-staging-northeurope", "resource_types": "applications"}),
    Example("degraded apps of the orders team", "list_applications",
            {"project": "orders", "health_status": "Degraded"}),
    Example("is mailer-webhooks-staging OK right now", "get_application",
            {"name": "mailer-webhooks-staging"}),
    Example("which pods of orders-worker-production are unhealthy",
            "get_application_resource_tree",
            {"name": "orders-worker-production"}),
    Example("why is accounts-api-dev degraded", "get_application_events",
            {"name": "accounts-api-dev", "warnings_only": True}),
    Example("tail the container output of billing-invoices-staging, 50 lines",
            "get_application_logs",
            {"name": "billing-invoices-staging", "tail_lines": 50}),
    Example("project names with their descriptions, second page", "list_projects",
            {"page": 2}),
    Example("ApplicationSets owned by the media project", "list_applicationsets",
            {"project": "media"}),
    Example("is every cluster connected", "list_clusters", {}),
    Example("suspended applications", "list_applications", {"health_status": "Suspended"}),
    Example("apps still progressing, third page", "list_applications",
            {"health_status": "Progressing", "page": 3}),
    Example("anything labelled tier=frontend", "list_applications",
            {"selector": "tier=frontend"}),
    Example("preview a sync of shipping-worker-staging", "sync_application",
            {"name": "shipping-worker-staging", "dry_run": True}),
    # Change safety (issue 18): five tools with close names; the local model reached for the
    # newest-looking one (the timeline) for a rollback plan or a list of resource actions.
    # An example of a tool about one application asks the question that tool's description
    # says it answers (history: "who deployed one application, when, and which revision"),
    # so the example nearest a question is the tool whose description answers it. Measured
    # on held-out dev questions: with the history's example "list the releases of X with their
    # commits" and the timeline's "timeline of deploys and warnings for X", the nearest example
    # to "who deployed X last?" was the timeline's, and the model called it (four cases).
    Example("who deployed accounts-login-production, when, and which revision",
            "get_application_history", {"name": "accounts-login-production"}),
    Example("has anyone hand-edited accounts-api-dev in the cluster", "diff_application",
            {"name": "accounts-api-dev"}),
    Example("what changed before the trouble with storefront-web-production started",
            "get_application_changes", {"name": "storefront-web-production"}),
    Example("preview returning accounts-login-production to deploy 12", "rollback_application",
            {"name": "accounts-login-production", "history_id": 12, "dry_run": True}),
    Example("revert media-indexer-staging to the release before the current one",
            "rollback_application", {"name": "media-indexer-staging", "dry_run": False}),
    Example("actions available on Deployment accounts-api in accounts-api-dev",
            "run_resource_action",
            {"name": "accounts-api-dev", "kind": "Deployment", "resource_name": "accounts-api"}),
    Example("trigger a rollout restart of Deployment media-indexer in media-indexer-staging "
            "through Argo CD", "run_resource_action",
            {"name": "media-indexer-staging", "kind": "Deployment",
             "resource_name": "media-indexer", "action": "restart", "dry_run": False}),
)

GITHUB_EXAMPLES: tuple[Example, ...] = (
    Example("example-org/web-frontend pull requests, most recently updated first",
            "list_pull_requests", {"owner": "example-org", "repo": "web-frontend",
                                   "sort": "updated"}),
    Example("recently closed PRs in example-org/orders-api", "list_pull_requests",
            {"owner": "example-org", "repo": "orders-api", "state": "closed"}),
    Example("details of PR 57 in example-org/invoice-service", "get_pull_request",
            {"owner": "example-org", "repo": "invoice-service", "number": 57}),
    Example("review queue of octocat in example-org/accounts-api",
            "list_pull_requests_awaiting_review",
            {"owner": "example-org", "repo": "accounts-api", "reviewer": "octocat"}),
    Example("open bugs with the p1 label in example-org/event-pipeline", "list_issues",
            {"owner": "example-org", "repo": "event-pipeline", "labels": "bug,p1"}),
    Example("issues mentioning timeouts anywhere in example-org", "search_issues",
            {"query": "org:example-org is:issue timeout"}),
    Example("PRs by octocat that are still open in example-org/gitops-config", "search_issues",
            {"query": "repo:example-org/gitops-config is:pr is:open author:octocat"}),
    Example("failed Actions runs on main in example-org/storefront-web", "list_workflow_runs",
            {"owner": "example-org", "repo": "storefront-web", "status": "failure",
             "branch": "main"}),
    Example("why did run 4412 of example-org/orders-api fail", "get_workflow_run_logs",
            {"owner": "example-org", "repo": "orders-api", "run_id": 4412}),
)

DEVOPS_EXAMPLES: tuple[Example, ...] = (
    Example("where do we open the database connection", "retrieve_code_context",
            {"query": "open database connection"}),
    Example("explain how request retries are configured", "retrieve_code_context",
            {"query": "retry configuration backoff"}),
    # How code behaves is read from the code, not grepped for a word (measured: a question
    # about how tokens are checked became `grep -rln API_TOKEN .`, copied from the grep
    # example below when it was about the API token: the only example near enough to show).
    Example("how does the invoice module sign its webhook payloads", "retrieve_code_context",
            {"query": "sign webhook payload signature"}),
    Example("where is the session timeout decided", "retrieve_code_context",
            {"query": "session timeout expiry"}),
    Example("how big is the repository on disk", "run_command", {"command": "du -sh ."}),
    Example("list the Kubernetes manifests", "run_command",
            {"command": "find . -name '*.yaml' -path '*k8s*'"}),
    Example("show the last five commits", "run_command", {"command": "git log --oneline -5"}),
    Example("which files mention the LOG_LEVEL variable", "run_command",
            {"command": "grep -rln LOG_LEVEL ."}),
)

#: Banks shown as the tool that answers each request, without its arguments. An example
#: shows a call's shape; a shell command or the words of a code search have none to show, only
#: a value, and the local model copies an example's value whole (measured on held-out dev:
#: "who made the last commit" ran the bank's `git log --oneline -5`, which prints no author;
#: a make target was looked for with its `find . -name '*.yaml' -path '*k8s*'`). Which tool
#: answers which kind of request is what these examples teach: with none shown, retrieval
#: questions became commands (dev DevOps held-out 13/26 without examples, 16/26 with).
TOOL_ONLY_BANKS = frozenset({"devops"})

BANKS: dict[str, tuple[Example, ...]] = {
    "argocd": ARGOCD_EXAMPLES, "github": GITHUB_EXAMPLES, "devops": DEVOPS_EXAMPLES,
}
