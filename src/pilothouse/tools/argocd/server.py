"""The Argo CD MCP server: paginated, memory-bounded tools over the Argo CD API.

Tool descriptions are short on purpose: a local model reads every schema on every turn at ~90
tokens/s. Every tool answers with compact JSON; failures become an `is_error` result carrying
`{error, kind, suggestion}` (`tools.tool_server`), never a stack trace. `sync_application`
is served only when `ARGOCD_READ_ONLY=false` (and not --read-only: `tools.tool_filter`), and
even then changes nothing without `approved=true` and the fingerprint of the dry run the
person approved (checked again just before the sync starts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BeforeValidator, Field

from pilothouse.config import Settings
from pilothouse.tools.argocd import (
    change_tools,
    change_views,
    details,
    instances,
    listing,
    project_hint,
    search,
    sync,
    views,
)
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.near_names import SuggestingRunner
from pilothouse.tools.argocd.output import fit
from pilothouse.tools.http_api import server as tool_base
from pilothouse.tools.http_api.server import Page, PageSize
from pilothouse.tools.tool_filter import apply_tool_filter, filter_for
from pilothouse.tools.tool_server import ToolServer

SERVER_NAME = "argocd"
READ_TOOLS: tuple[str, ...] = (
    "list_applications", "get_application", "get_application_resource_tree",
    "get_application_events", "get_application_logs", "list_projects",
    "list_applicationsets", "list_clusters", "search_argocd_resources",
)
WRITE_TOOLS: tuple[str, ...] = ("sync_application",)
# Issue 18: history, diff, what changed, rollback and resource actions (`change_tools`).
READ_TOOLS += change_tools.READ_TOOLS
WRITE_TOOLS += change_tools.WRITE_TOOLS
INSTRUCTIONS = (
    "Argo CD tools. Search when the question filters (a name, team, env); list for inventories. "
    "Answers are paged: pagination.total_pages tells how many pages exist."
)

AppName = Annotated[str, Field(description="application name")]
SYNC_STATUSES = ("Synced", "OutOfSync", "Unknown")
HEALTH_STATUSES = ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown")


def _canonical(choices: tuple[str, ...]) -> Callable[[object], object]:
    """Accept any letter case ("degraded"), answer with Argo CD's spelling ("Degraded")."""
    def canonical(value: object) -> object:
        if isinstance(value, str):
            return next((c for c in choices if c.lower() == value.strip().lower()), value)
        return value
    return canonical


# Enums in the schema: the local model's calls are grammar-constrained to the schema, so it
# can only write a status Argo CD knows (it had written sync_status="health"). Each says
# what its values mean, as Argo CD's documentation does: a person asks for what is failing or
# differs from git, not for a status name.
SyncStatus = Annotated[Literal["Synced", "OutOfSync", "Unknown"] | None,
                       BeforeValidator(_canonical(SYNC_STATUSES)),
                       Field(description="OutOfSync: the live state differs from git")]
HealthStatus = Annotated[
    Literal["Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"] | None,
    BeforeValidator(_canonical(HEALTH_STATUSES)),
    Field(description="Degraded: failing or broken; Progressing: not yet healthy, e.g. "
                      "rolling out; Suspended: paused")]
RESOURCE_TYPES = ("applications", "projects", "applicationsets", "clusters")


def _plural_types(value: object) -> object:
    """"cluster" or "Clusters" -> "clusters", for one type or a list of them."""
    def one(item: object) -> object:
        if not isinstance(item, str):
            return item
        key = item.strip().lower()
        return next((t for t in RESOURCE_TYPES if key in (t, t.removesuffix("s"))), item)
    return [one(v) for v in value] if isinstance(value, list) else one(value)


ResourceType = Literal["applications", "projects", "applicationsets", "clusters"]
ResourceTypes = Annotated[list[ResourceType] | ResourceType | None,
                          BeforeValidator(_plural_types), Field(description="default all types")]
Project = Annotated[str | None, Field(description="project name(s), comma-separated")]
ClientFactory = Callable[[], ArgoCDClient]


def build_argocd_server(settings: Settings | None = None, *,
                        client_factory: ClientFactory | None = None) -> ToolServer:
    """The Argo CD MCP server for `settings` (default: the environment)."""
    settings = settings or Settings.from_env()
    run = SuggestingRunner(
        client_factory or instances.client_factory(settings),  # issue 18: named instances
        fit=fit, max_output_chars=settings.max_tool_output_size)
    limits = search.Limits(settings.max_search_results, settings.warn_search_results)

    async def list_applications(page: Page = 1, page_size: PageSize = 20,
                                project: Project = None, sync_status: SyncStatus = None,
                                health_status: HealthStatus = None,
                                selector: Annotated[str | None, Field(
                                    description="label selector, e.g. env=production")] = None,
                                ) -> CallToolResult:
        return await run(lambda c: listing.list_applications(
            c, page=page, page_size=page_size, project=project, sync_status=sync_status,
            health_status=health_status, selector=selector), views.view(views.APPLICATIONS))

    async def get_application(name: AppName, project: str | None = None,
                              include_resources: bool = False, include_conditions: bool = False,
                              include_operation: bool = False) -> CallToolResult:
        return await run(lambda c: details.get_application(
            c, name, project=project, include_resources=include_resources,
            include_conditions=include_conditions, include_operation=include_operation),
            views.view(views.APPLICATION))

    async def get_application_resource_tree(name: AppName, project: str | None = None,
                                            max_unhealthy: int = 20) -> CallToolResult:
        return await run(lambda c: details.resource_tree(c, name, project=project,
                                                         max_unhealthy=max_unhealthy),
                         views.view(views.RESOURCE_TREE))

    async def get_application_events(name: AppName, limit: int = 20,
                                     warnings_only: bool = False,
                                     project: str | None = None) -> CallToolResult:
        return await run(lambda c: details.events(c, name, project=project, limit=limit,
                                                  warnings_only=warnings_only),
                         views.view(views.EVENTS))

    async def get_application_logs(name: AppName, tail_lines: int = 100,
                                   pod_name: str | None = None, container: str | None = None,
                                   filter: Annotated[str | None, Field(
                                       description="only lines containing this text, "
                                                   "e.g. error")] = None,
                                   project: str | None = None) -> CallToolResult:
        return await run(lambda c: details.logs(c, name, tail_lines=tail_lines,
                                                pod_name=pod_name, container=container,
                                                text_filter=filter, project=project),
                         views.view(views.LOGS))

    async def list_projects(page: Page = 1, page_size: PageSize = 20) -> CallToolResult:
        return await run(lambda c: listing.list_projects(c, page=page, page_size=page_size),
                         views.view(views.PROJECTS))

    async def list_applicationsets(page: Page = 1, page_size: PageSize = 20,
                                   project: Project = None) -> CallToolResult:
        return await run(lambda c: listing.list_applicationsets(
            c, page=page, page_size=page_size, project=project), views.view(views.APPLICATIONSETS))

    async def list_clusters(page: Page = 1, page_size: PageSize = 20) -> CallToolResult:
        return await run(lambda c: listing.list_clusters(c, page=page, page_size=page_size),
                         views.view(views.CLUSTERS))

    async def search_argocd_resources(
            query: Annotated[str, Field(description="text, or a regex (auto-detected)")],
            resource_types: ResourceTypes = None,
            case_sensitive: bool = False, page: Page = 1,
            page_size: PageSize = 20) -> CallToolResult:
        return await run(lambda c: search.search_resources(
            c, query, types=resource_types, case_sensitive=case_sensitive, page=page,
            page_size=page_size, limits=limits), views.search_view)

    async def sync_application(name: AppName, dry_run: bool = True, approved: bool = False,
                               prune: bool = False, revision: str | None = None,
                               project: str | None = None,
                               expected_evidence: Annotated[str | None, Field(
                                   description="set by Pilothouse after approval")] = None,
                               ) -> CallToolResult:
        return await run(lambda c: sync.sync_application(
            c, name, dry_run=dry_run, approved=approved, prune=prune, revision=revision,
            project=project, expected_evidence=expected_evidence), change_views.sync_view)

    # Each description says which question its tool answers, in the words of what is asked
    # for (status, events, pods, drift), not of the API: the model picks a tool by them.
    tools: list[tuple[tool_base.ToolFunction, str]] = [
        (list_applications, "Every application, or a project's, paged; filter by sync or "
                            "health status or label selector. Counts cover all matches."),
        (get_application, "One application's status: sync and health, project, repo and "
                          "path, destination cluster and namespace, images, last sync."),
        (get_application_resource_tree, "Which pods and other Kubernetes resources of one "
                                        "application are unhealthy: counts by kind and "
                                        "health, unhealthy ones listed."),
        (get_application_events, "Why one application is degraded, failing or broken: its "
                                 "Kubernetes events, newest first, with the warnings."),
        (get_application_logs, "What one application's pods log: the last lines (max 500)."),
        (list_projects, "List Argo CD projects, paged."),
        (list_applicationsets, "List ApplicationSets (templates that generate apps), paged."),
        (list_clusters, "List clusters Argo CD deploys to, paged, with connection status."),
        (search_argocd_resources, "Find applications, projects, applicationsets and clusters "
                                  "by part of a name (a team, an environment), label, repo, "
                                  "path, namespace or cluster. Paged."),
    ]
    registered = [tool_base.tool(fn, description, annotations=tool_base.READ_ONLY)
                  for fn, description in tools]
    # Writing tools say so here; `apply_tool_filter` hides them under ARGOCD_READ_ONLY (the
    # default) or PILOTHOUSE_MCP_READ_ONLY, and applies --tools / --exclude-tools.
    registered.append(tool_base.tool(
        sync_application, "Sync an application. Dry run by default; a real sync "
        "(dry_run=false) needs approved=true after the user agrees.",
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                    idempotent_hint=False, open_world_hint=True)))
    registered.extend(change_tools.change_tools(run))  # issue 18: annotated per tool
    registered = project_hint.with_project_as_hint(registered)
    registered = instances.with_instance_argument(registered, settings)  # issue 18
    server = tool_base.http_tool_server(SERVER_NAME, INSTRUCTIONS, run, registered,
                                        log_level=settings.log_level)
    apply_tool_filter(server, filter_for(settings, SERVER_NAME))
    return server
