"""Compact rows for the model, and the text fields search looks at, per Argo CD resource type.

A full application is ~9 KB; its row is ~200 bytes. Rows are what reach the model's context,
so they carry what a platform engineer scans a table for and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: `fields=` paths a list of applications needs (all on the server's allow-list).
APP_ROW_FIELDS: tuple[str, ...] = (
    "metadata.name", "spec.project", "spec.source", "spec.sources", "spec.destination",
    "status.sync.status", "status.health",
)
APP_SEARCH_FIELDS: tuple[str, ...] = (*APP_ROW_FIELDS, "metadata.labels")

RESOURCE_TYPES: tuple[str, ...] = ("applications", "projects", "applicationsets", "clusters")
SearchFields = Iterator[tuple[str, str]]


def fields_param(paths: tuple[str, ...]) -> str:
    return ",".join(f"items.{path}" for path in paths)


def _get(item: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(item, dict):
            return None
        item = item.get(key)
    return item


def _short_server(server: str | None) -> str:
    return (server or "").removeprefix("https://").removeprefix("http://")


def _first_source(item: dict[str, Any]) -> dict[str, Any]:
    source = _get(item, "spec", "source")
    if isinstance(source, dict):
        return source
    sources = _get(item, "spec", "sources")
    return sources[0] if isinstance(sources, list) and sources else {}


def app_status(item: dict[str, Any]) -> tuple[str, str]:
    """(sync, health) of an application item; "Unknown" where the server left it out."""
    return (_get(item, "status", "sync", "status") or "Unknown",
            _get(item, "status", "health", "status") or "Unknown")


def app_row(item: dict[str, Any]) -> dict[str, Any]:
    """name, project, sync, health, repo, path, cluster, namespace of one application."""
    source = _first_source(item)
    destination = _get(item, "spec", "destination") or {}
    sync, health = app_status(item)
    return {
        "name": _get(item, "metadata", "name"),
        "project": _get(item, "spec", "project"),
        "sync": sync,
        "health": health,
        "repo": source.get("repoURL"),
        "path": source.get("path") or source.get("chart"),
        "cluster": destination.get("name") or _short_server(destination.get("server")),
        "namespace": destination.get("namespace"),
    }


def project_row(item: dict[str, Any]) -> dict[str, Any]:
    spec = item.get("spec") or {}
    return {
        "name": _get(item, "metadata", "name"),
        "description": spec.get("description", ""),
        "source_repos": len(spec.get("sourceRepos") or []),
        "destinations": len(spec.get("destinations") or []),
    }


def applicationset_row(item: dict[str, Any]) -> dict[str, Any]:
    template = _get(item, "spec", "template", "spec") or {}
    source = template.get("source") or (template.get("sources") or [{}])[0]
    generators = [next(iter(g), "?") for g in _get(item, "spec", "generators") or []]
    return {
        "name": _get(item, "metadata", "name"),
        "project": template.get("project"),
        "repo": source.get("repoURL"),
        "path": source.get("path") or source.get("chart"),
        "generators": generators,
        "applications": _get(item, "status", "resourcesCount"),
    }


def cluster_row(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": item.get("name"),
        "server": item.get("server"),
        "connection": _get(item, "connectionState", "status")
        or _get(item, "info", "connectionState", "status") or "Unknown",
        "version": _get(item, "info", "serverVersion") or item.get("serverVersion"),
        "applications": _get(item, "info", "applicationsCount"),
    }


def _labels(labels: Any) -> SearchFields:
    if isinstance(labels, dict):
        for key, value in labels.items():
            yield "labels", f"{key}={value}"


def app_search_fields(item: dict[str, Any]) -> SearchFields:
    """Names, project, labels, repo, path, destination of an application."""
    yield "name", _get(item, "metadata", "name") or ""
    yield "project", _get(item, "spec", "project") or ""
    yield from _labels(_get(item, "metadata", "labels"))
    sources = _get(item, "spec", "sources") or []
    for source in [_get(item, "spec", "source") or {}, *sources]:
        if isinstance(source, dict):
            yield "repo", source.get("repoURL") or ""
            yield "path", source.get("path") or source.get("chart") or ""
    destination = _get(item, "spec", "destination") or {}
    yield "namespace", destination.get("namespace") or ""
    yield "cluster", destination.get("server") or destination.get("name") or ""


def project_search_fields(item: dict[str, Any]) -> SearchFields:
    spec = item.get("spec") or {}
    yield "name", _get(item, "metadata", "name") or ""
    yield "description", spec.get("description") or ""
    for repo in spec.get("sourceRepos") or []:
        yield "repo", str(repo)
    for destination in spec.get("destinations") or []:
        yield "destination", f"{destination.get('server') or destination.get('name') or ''} " \
                              f"{destination.get('namespace') or ''}".strip()


def applicationset_search_fields(item: dict[str, Any]) -> SearchFields:
    yield "name", _get(item, "metadata", "name") or ""
    yield from _labels(_get(item, "metadata", "labels"))
    template = _get(item, "spec", "template", "spec") or {}
    yield "project", template.get("project") or ""
    for source in [template.get("source") or {}, *(template.get("sources") or [])]:
        yield "repo", source.get("repoURL") or ""
        yield "path", source.get("path") or source.get("chart") or ""
    yield "namespace", _get(template, "destination", "namespace") or ""


def cluster_search_fields(item: dict[str, Any]) -> SearchFields:
    yield "name", item.get("name") or ""
    yield "server", item.get("server") or ""
    yield from _labels(item.get("labels"))
    yield "project", item.get("project") or ""


ROW_BUILDERS = {"applications": app_row, "projects": project_row,
                "applicationsets": applicationset_row, "clusters": cluster_row}
SEARCH_FIELDS = {"applications": app_search_fields, "projects": project_search_fields,
                 "applicationsets": applicationset_search_fields,
                 "clusters": cluster_search_fields}
ENDPOINTS = {"applications": "/api/v1/applications", "projects": "/api/v1/projects",
             "applicationsets": "/api/v1/applicationsets", "clusters": "/api/v1/clusters"}
SINGULAR = {"applications": "application", "projects": "project",
            "applicationsets": "applicationset", "clusters": "cluster"}
