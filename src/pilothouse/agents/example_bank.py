"""Requests and the tool call that answers each, per agent: the dynamic few-shot bank.

Written for this bank, to show argument shapes a small model gets wrong (a team or an
environment is a search, not a `project=` filter; statuses are spelled as Argo CD spells them;
a repository is `owner` + `repo`). None of them is an evaluation question or a paraphrase of
one: `tests/agents/test_example_bank.py` measures every entry against every evaluation
question, as written and with names masked (as the selector compares them), and fails above
the thresholds it justifies. Names are the sandboxes' own.
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

    def line(self) -> str:
        """`request -> tool(arg="value", ...)` as the prompt shows it."""
        args = ", ".join(f"{key}={value!r}".replace("'", '"') for key, value in
                         self.args.items())
        return f'- "{self.request}" -> {self.tool}({args})'


ARGOCD_EXAMPLES: tuple[Example, ...] = (
    Example("how many billing apps are out of sync", "list_applications",
            {"project": "billing", "sync_status": "OutOfSync"}),
    Example("apps deployed from the platform-deployments repo", "search_argocd_resources",
            {"query": "platform-deployments", "resource_types": "applications"}),
    Example("what runs on the gke-prod-europe-west4 cluster", "search_argocd_resources",
            {"query": "gke-prod-europe-west4", "resource_types": "applications"}),
    Example("logistics services in staging", "search_argocd_resources",
            {"query": "logistics.*staging"}),
    Example("everything for the identity team", "search_argocd_resources",
            {"query": "identity"}),
    Example("services running in the staging environment", "search_argocd_resources",
            {"query": "staging", "resource_types": "applications"}),
    Example("apps on the eks-staging-eu-west-1 cluster", "search_argocd_resources",
            {"query": "eks-staging-eu-west-1", "resource_types": "applications"}),
    Example("degraded apps of the checkout team", "list_applications",
            {"project": "checkout", "health_status": "Degraded"}),
    Example("is notifications-webhooks-staging OK right now", "get_application",
            {"name": "notifications-webhooks-staging"}),
    Example("which pods of orders-worker-production are failing", "get_application_resource_tree",
            {"name": "orders-worker-production"}),
    Example("recent warning events for checkout-api-dev", "get_application_events",
            {"name": "checkout-api-dev", "warnings_only": True}),
    Example("tail the container output of billing-invoices-staging, 50 lines",
            "get_application_logs",
            {"name": "billing-invoices-staging", "tail_lines": 50}),
    Example("project names with their descriptions, second page", "list_projects",
            {"page": 2}),
    Example("ApplicationSets owned by the data project", "list_applicationsets",
            {"project": "data"}),
    Example("is every cluster connected", "list_clusters", {}),
    Example("suspended applications", "list_applications", {"health_status": "Suspended"}),
    Example("apps still progressing, third page", "list_applications",
            {"health_status": "Progressing", "page": 3}),
    Example("anything labelled tier=frontend", "list_applications",
            {"selector": "tier=frontend"}),
    Example("preview a sync of payments-worker-staging", "sync_application",
            {"name": "payments-worker-staging", "dry_run": True}),
    # Change safety (issue 18): five tools with close names; the local model reached for the
    # newest-looking one (the timeline) for a rollback plan or a list of resource actions.
    Example("list the releases of identity-auth-production with their commits",
            "get_application_history", {"name": "identity-auth-production"}),
    Example("has anyone hand-edited checkout-api-dev in the cluster", "diff_application",
            {"name": "checkout-api-dev"}),
    Example("timeline of deploys and warnings for checkout-web-production",
            "get_application_changes", {"name": "checkout-web-production"}),
    Example("preview returning identity-auth-production to deploy 12", "rollback_application",
            {"name": "identity-auth-production", "history_id": 12, "dry_run": True}),
    Example("revert search-indexer-staging to the release before the current one",
            "rollback_application", {"name": "search-indexer-staging", "dry_run": False}),
    Example("actions available on Deployment checkout-api in checkout-api-dev",
            "run_resource_action",
            {"name": "checkout-api-dev", "kind": "Deployment", "resource_name": "checkout-api"}),
    Example("trigger a rollout restart of Deployment search-indexer in search-indexer-staging "
            "through Argo CD", "run_resource_action",
            {"name": "search-indexer-staging", "kind": "Deployment",
             "resource_name": "search-indexer", "action": "restart", "dry_run": False}),
)

GITHUB_EXAMPLES: tuple[Example, ...] = (
    Example("acme-corp/checkout-web pull requests, most recently updated first",
            "list_pull_requests", {"owner": "acme-corp", "repo": "checkout-web",
                                   "sort": "updated"}),
    Example("recently closed PRs in acme-corp/orders-api", "list_pull_requests",
            {"owner": "acme-corp", "repo": "orders-api", "state": "closed"}),
    Example("details of PR 57 in acme-corp/billing-service", "get_pull_request",
            {"owner": "acme-corp", "repo": "billing-service", "number": 57}),
    Example("review queue of asmith-sre in acme-corp/identity-api",
            "list_pull_requests_awaiting_review",
            {"owner": "acme-corp", "repo": "identity-api", "reviewer": "asmith-sre"}),
    Example("open bugs with the p1 label in acme-corp/data-pipeline", "list_issues",
            {"owner": "acme-corp", "repo": "data-pipeline", "labels": "bug,p1"}),
    Example("issues mentioning timeouts anywhere in acme-corp", "search_issues",
            {"query": "org:acme-corp is:issue timeout"}),
    Example("PRs by jdoe that are still open in acme-corp/infra-live", "search_issues",
            {"query": "repo:acme-corp/infra-live is:pr is:open author:jdoe"}),
    Example("failed Actions runs on main in acme-corp/catalog-web", "list_workflow_runs",
            {"owner": "acme-corp", "repo": "catalog-web", "status": "failure",
             "branch": "main"}),
    Example("why did run 4412 of acme-corp/orders-api fail", "get_workflow_run_logs",
            {"owner": "acme-corp", "repo": "orders-api", "run_id": 4412}),
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

BANKS: dict[str, tuple[Example, ...]] = {
    "argocd": ARGOCD_EXAMPLES, "github": GITHUB_EXAMPLES, "devops": DEVOPS_EXAMPLES,
}
