"""How each Argo CD tool's answer is shown (`tools.views` renders; this names what matters).

Tables keep the four columns an engineer scans a fleet by (name, project, sync, health) and add
a column only when the answer filtered or matched on it (a search that matched the cluster shows
the cluster), so a page of 20 applications stays near 600 tokens.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pilothouse.tools.views import ViewSpec, render

_APP_COLUMNS = ("name", "project", "sync", "health")
_APP_EXTRA = ("repo", "path", "cluster", "namespace", "labels", "selector")


def _app_title(payload: Mapping[str, Any]) -> str:
    sync = (payload.get("sync") or {}).get("status", "Unknown")
    health = (payload.get("health") or {}).get("status", "Unknown")
    return f"**{payload.get('name')}** (project {payload.get('project')}): {sync}, {health}"


def _of(label: str) -> ViewSpec:
    def title(payload: Mapping[str, Any]) -> str:
        return f"{label} of **{payload.get('application')}**" if payload.get(
            "application") else ""
    return ViewSpec(title=title, hidden=frozenset({"application"}))


APPLICATIONS = ViewSpec("applications", _APP_COLUMNS, _APP_EXTRA)
MATCHES = ViewSpec("matches", _APP_COLUMNS, _APP_EXTRA)
APPLICATION = ViewSpec(title=_app_title, hidden=frozenset({"name", "project"}),
                       keys_only=frozenset({"annotations"}))
RESOURCE_TREE = _of("Resource tree")
EVENTS = _of("Events")
LOGS = _of("Logs")
PROJECTS = ViewSpec("projects", ("name", "description", "source_repos", "destinations"))
APPLICATIONSETS = ViewSpec("applicationsets", ("name", "project", "generators",
                                               "applications"))
CLUSTERS = ViewSpec("clusters", ("name", "server", "connection", "version", "applications"))
SYNC = ViewSpec(title=lambda p: f"Sync of **{p.get('application') or p.get('name')}**"
                if p.get("application") or p.get("name") else "")


def view(spec: ViewSpec) -> Any:
    """The `ToolRunner` view of `spec`."""
    return lambda payload: render(payload, spec)


#: The columns of a search page whose items are all of one other type.
_BY_TYPE = {"cluster": CLUSTERS.columns, "project": PROJECTS.columns,
            "applicationset": APPLICATIONSETS.columns}


def search_view(payload: Mapping[str, Any]) -> str:
    """A search page: "Showing all 18 matches for 'kestrel'" or its page line."""
    query = payload.get("query")
    types = {item.get("type") for item in payload.get("items") or []
             if isinstance(item, Mapping)}
    spec = MATCHES
    if len(types) == 1 and (only := types.pop()) in _BY_TYPE:
        spec = ViewSpec("matches", _BY_TYPE[str(only)], _APP_EXTRA)
    return render(payload, spec, f" for '{query}'" if query else "")
