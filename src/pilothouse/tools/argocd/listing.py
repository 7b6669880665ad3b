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
from pilothouse.tools.argocd.details import app_name
from pilothouse.tools.argocd.errors import NotFound
from pilothouse.tools.argocd.paging import PageWindow, counts, page_request
from pilothouse.tools.argocd.search import Matcher

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


async def _known_projects(client: ArgoCDClient, wanted: list[str]) -> list[str]:
    """Which of the `wanted` project names exist."""
    found: list[str] = []

    def take(item: dict[str, Any]) -> None:
        name = str((item.get("metadata") or {}).get("name") or "")
        if name in wanted:
            found.append(name)

    await client.scan(rows.ENDPOINTS["projects"], take)
    return found


async def _is_application(client: ArgoCDClient, name: str) -> bool:
    """Whether an application is named exactly `name`."""
    try:
        await client.get(f"/api/v1/applications/{app_name(name)}", subject=f"application {name!r}")
    except (UserInputError, NotFound):
        return False
    return True


async def list_applications(client: ArgoCDClient, *, page: int = 1, page_size: int = 20,
                            project: str | None = None, sync_status: str | None = None,
                            health_status: str | None = None,
                            selector: str | None = None) -> dict[str, Any]:
    """A page of applications with health/sync counts over every match.

    A `project` that names no project at all ("production" is an environment, "orders" a
    team) is matched as text over the apps' names, labels, namespaces and repos instead, and
    the answer says so: measured on the local model, "production applications" came as
    `project="production"`, and the empty page then cost a second model call and a search.
    An application's own name as `project` lists that one application, and says which tools
    tell more of it: measured, a question for one app's sync and health came as
    `list_applications(project=X)`, and as an error instead the model then wrote an invented
    status rather than call `get_application`.
    """
    wanted = project_names(project)
    if wanted and not await _known_projects(client, wanted):
        if len(wanted) == 1 and await _is_application(client, wanted[0]):
            return await _list(client, page, page_size, sync_status, health_status, selector,
                               name=wanted[0])
        return await _list(client, page, page_size, sync_status, health_status, selector,
                           text=" ".join(wanted))
    return await _list(client, page, page_size, sync_status, health_status, selector,
                       projects=wanted)


async def _list(client: ArgoCDClient, page: int, page_size: int, sync_status: str | None,
                health_status: str | None, selector: str | None, *,
                projects: list[str] | None = None, text: str | None = None,
                name: str | None = None) -> dict[str, Any]:
    request = page_request(page, page_size)
    sync = normalize_status(sync_status, SYNC_STATUSES, "sync_status")
    health = normalize_status(health_status, HEALTH_STATUSES, "health_status")
    matcher = Matcher(text) if text else None
    params: dict[str, str | list[str]] = {"fields": rows.fields_param(
        rows.APP_SEARCH_FIELDS if matcher else rows.APP_ROW_FIELDS)}
    if projects:
        params["projects"] = projects
    if selector and selector.strip():
        params["selector"] = selector.strip()
    window: PageWindow[dict[str, Any]] = PageWindow(request)
    by_health: Counter[str] = Counter()
    by_sync: Counter[str] = Counter()

    def take(item: dict[str, Any]) -> None:
        row_sync, row_health = rows.app_status(item)
        if (sync and row_sync != sync) or (health and row_health != health):
            return
        if matcher and matcher.first_match(rows.app_search_fields(item)) is None:
            return
        if name and (item.get("metadata") or {}).get("name") != name:
            return
        by_health[row_health] += 1
        by_sync[row_sync] += 1
        window.offer(lambda: rows.app_row(item))

    await client.scan(rows.ENDPOINTS["applications"], take, params=params)
    filters = {k: v for k, v in (("project", ",".join(projects or [])), ("name", name),
                                 ("matching", text),
                                 ("sync_status", sync), ("health_status", health),
                                 ("selector", selector)) if v}
    extra: dict[str, Any] = {"filters": filters} if filters else {}
    if name:
        extra["note"] = (f"{name!r} is an application, not a project, so this is its own row. "
                         "Its deploys, events, logs or drift: get_application_history, "
                         "get_application_events, get_application_logs, diff_application "
                         f"(name={name!r}).")
    if text:
        extra["note"] = (f"No project is named {text!r}, so this lists the applications whose "
                         f"name, labels, namespace or repo match {text!r}.")
    if filters and window.total == 0:
        terms = " ".join(str(v) for k, v in filters.items()
                         if k in ("project", "matching", "selector"))
        extra["suggestion"] = (
            "Nothing matches these filters. Projects are exact names (list_projects); "
            "environments and teams are labels (selector env=production, team=orders). Or "
            f"use search_argocd_resources(query={terms or 'name'!r}) to match every resource "
            "type.")
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
