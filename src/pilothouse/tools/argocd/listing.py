"""The paginated inventories: applications, projects, application sets, clusters.

Each streams the whole list once (Argo CD cannot page), filters as it goes, counts every match
into the summary and keeps only the requested page of rows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pilothouse.errors import UserInputError
from pilothouse.tools.argocd import rows
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.paging import PageWindow, counts, page_request

SYNC_STATUSES = ("Synced", "OutOfSync", "Unknown")
HEALTH_STATUSES = ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown")


def normalize_status(value: str | None, allowed: tuple[str, ...], name: str) -> str | None:
    """`value` spelled as Argo CD spells it, or a `UserInputError` listing the valid ones."""
    if value is None or not value.strip():
        return None
    for candidate in allowed:
        if candidate.lower() == value.strip().lower().replace("_", "").replace(" ", ""):
            return candidate
    raise UserInputError(f"{name}={value!r} is not a valid value.",
                         hint=f"Use one of: {', '.join(allowed)}.")


def project_names(project: str | None) -> list[str]:
    return [p.strip() for p in (project or "").split(",") if p.strip()]


async def list_applications(client: ArgoCDClient, *, page: int = 1, page_size: int = 20,
                            project: str | None = None, sync_status: str | None = None,
                            health_status: str | None = None,
                            selector: str | None = None) -> dict[str, Any]:
    """A page of applications with health/sync counts over every match."""
    request = page_request(page, page_size)
    sync = normalize_status(sync_status, SYNC_STATUSES, "sync_status")
    health = normalize_status(health_status, HEALTH_STATUSES, "health_status")
    params: dict[str, str | list[str]] = {"fields": rows.fields_param(rows.APP_ROW_FIELDS)}
    if project_names(project):
        params["projects"] = project_names(project)
    if selector and selector.strip():
        params["selector"] = selector.strip()
    window: PageWindow[dict[str, Any]] = PageWindow(request)
    by_health: Counter[str] = Counter()
    by_sync: Counter[str] = Counter()

    def take(item: dict[str, Any]) -> None:
        row_sync, row_health = rows.app_status(item)
        if (sync and row_sync != sync) or (health and row_health != health):
            return
        by_health[row_health] += 1
        by_sync[row_sync] += 1
        window.offer(lambda: rows.app_row(item))

    await client.scan(rows.ENDPOINTS["applications"], take, params=params)
    filters = {k: v for k, v in (("project", project), ("sync_status", sync),
                                 ("health_status", health), ("selector", selector)) if v}
    extra: dict[str, Any] = {"filters": filters} if filters else {}
    if filters and window.total == 0:
        # A common miss: "production" is an environment label, not a project.
        terms = " ".join(str(v) for k, v in filters.items() if k in ("project", "selector"))
        extra["suggestion"] = (
            "Nothing matches these filters. Projects are exact names; environments and teams "
            "are labels (selector env=production, team=payments). Or use "
            f"search_argocd_resources(query={terms or 'name'!r}) to match names, labels, "
            "namespaces and repos.")
    return window.answer({"health": counts(by_health), "sync": counts(by_sync)}, **extra)


async def list_projects(client: ArgoCDClient, *, page: int = 1,
                        page_size: int = 20) -> dict[str, Any]:
    """A page of projects."""
    window: PageWindow[dict[str, Any]] = PageWindow(page_request(page, page_size))
    await client.scan(rows.ENDPOINTS["projects"],
                      lambda item: window.offer(lambda: rows.project_row(item)))
    return window.answer({"projects": window.total})


async def list_applicationsets(client: ArgoCDClient, *, page: int = 1, page_size: int = 20,
                               project: str | None = None) -> dict[str, Any]:
    """A page of application sets, with counts by project over all of them."""
    window: PageWindow[dict[str, Any]] = PageWindow(page_request(page, page_size))
    by_project: Counter[str] = Counter()
    params: dict[str, str | list[str]] = {}
    if project_names(project):
        params["projects"] = project_names(project)

    def take(item: dict[str, Any]) -> None:
        row = rows.applicationset_row(item)
        by_project[row["project"] or "?"] += 1
        window.offer(lambda: row)

    await client.scan(rows.ENDPOINTS["applicationsets"], take, params=params)
    top = dict(by_project.most_common(10))
    return window.answer({"applicationsets": window.total, "top_projects": top})


async def list_clusters(client: ArgoCDClient, *, page: int = 1,
                        page_size: int = 20) -> dict[str, Any]:
    """A page of clusters, with counts by connection status."""
    window: PageWindow[dict[str, Any]] = PageWindow(page_request(page, page_size))
    by_connection: Counter[str] = Counter()

    def take(item: dict[str, Any]) -> None:
        row = rows.cluster_row(item)
        by_connection[row["connection"]] += 1
        window.offer(lambda: row)

    await client.scan(rows.ENDPOINTS["clusters"], take)
    return window.answer({"clusters": window.total, "connection": counts(by_connection)})
