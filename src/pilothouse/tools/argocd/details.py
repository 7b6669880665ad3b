"""One application in depth: its trimmed summary, resource tree, events and logs.

A full application can be tens of kilobytes and a tree or log stream far more; each answer here
is a summary with counts over everything plus a capped list of what needs attention (OutOfSync
or unhealthy resources, warnings, the last log lines). Trees, events and logs are streamed.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, deque
from itertools import islice
from typing import Any

from pilothouse.errors import PilothouseError, UserInputError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.errors import AppSubject
from pilothouse.tools.argocd.paging import counts

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
MAX_LISTED = 50
MAX_TAIL_LINES = 500
MAX_LINE_CHARS = 400
MAX_EVENTS = 100
MAX_ANNOTATIONS = 20


def app_name(name: str) -> str:
    """A valid application name, or a `UserInputError` (also keeps names out of URL paths)."""
    cleaned = (name or "").strip()
    if not _NAME.match(cleaned):
        raise UserInputError(f"{name!r} is not a valid application name.",
                             hint="Names are lower-case letters, digits, '-' and '.'; find the "
                                  "exact one with search_argocd_resources.")
    return cleaned


def _params(project: str | None) -> dict[str, str]:
    return {"project": project.strip()} if project and project.strip() else {}


def _trim(text: Any, limit: int = 300) -> str:
    text = str(text or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _annotations(meta: dict[str, Any]) -> dict[str, str]:
    """The first annotations, values trimmed: untrusted text passed on as data, never parsed."""
    annotations = meta.get("annotations") or {}
    if not isinstance(annotations, dict):
        return {}
    return {str(key): _trim(value)
            for key, value in islice(annotations.items(), MAX_ANNOTATIONS)}


def _needs_attention(resource: dict[str, Any]) -> bool:
    health = (resource.get("health") or {}).get("status")
    return resource.get("status") not in (None, "Synced") or health not in (None, "Healthy")


def _resource_row(resource: dict[str, Any]) -> dict[str, Any]:
    row = {"kind": resource.get("kind"), "name": resource.get("name"),
           "namespace": resource.get("namespace"), "sync": resource.get("status")}
    health = resource.get("health") or {}
    if health.get("status"):
        row["health"] = health["status"]
    if health.get("message"):
        row["message"] = _trim(health["message"], 200)
    return row


async def get_application(client: ArgoCDClient, name: str, *, project: str | None = None,
                          include_resources: bool = False, include_conditions: bool = False,
                          include_operation: bool = False) -> dict[str, Any]:
    """A trimmed summary of one application; the bulky parts only on request."""
    name = app_name(name)
    doc = await client.get(f"/api/v1/applications/{name}", _params(project),
                           subject=AppSubject(name))
    meta, spec, status = doc.get("metadata", {}), doc.get("spec", {}), doc.get("status", {})
    source = spec.get("source") or (spec.get("sources") or [{}])[0]
    resources = status.get("resources") or []
    op = status.get("operationState") or {}
    answer: dict[str, Any] = {
        "name": meta.get("name"), "project": spec.get("project"),
        "labels": meta.get("labels") or {},
        "source": {k: source.get(k) for k in ("repoURL", "path", "chart", "targetRevision")
                   if source.get(k)},
        "destination": spec.get("destination") or {},
        "auto_sync": bool((spec.get("syncPolicy") or {}).get("automated")),
        "sync": {"status": (status.get("sync") or {}).get("status", "Unknown"),
                 "revision": (status.get("sync") or {}).get("revision")},
        "health": {k: v for k, v in (status.get("health") or {}).items()
                   if k in ("status", "message")},
        "resources": {"total": len(resources),
                      "sync": counts(Counter(r.get("status") or "Unknown" for r in resources)),
                      "needing_attention": sum(1 for r in resources if _needs_attention(r)),
                      "kinds": counts(Counter(r.get("kind") or "?" for r in resources))},
        "last_operation": {k: op.get(k) for k in ("phase", "startedAt", "finishedAt")
                           if op.get(k)},
        "conditions": len(status.get("conditions") or []),
        "images": (status.get("summary") or {}).get("images", [])[:10],
    }
    health = answer["health"].get("status")
    if health not in (None, "Healthy"):
        answer["why_not_healthy"] = await _why_not_healthy(client, name, project, resources)
    annotations = _annotations(meta)
    if annotations:
        answer["annotations"] = annotations
    if doc.get("operation"):
        answer["operation_in_progress"] = True
    if include_resources:
        ordered = sorted(resources, key=lambda r: not _needs_attention(r))
        answer["resource_list"] = [_resource_row(r) for r in ordered[:MAX_LISTED]]
        if len(resources) > MAX_LISTED:
            answer["resource_list_note"] = (f"showing {MAX_LISTED} of {len(resources)}, "
                                            "problems first")
    if include_conditions:
        answer["condition_list"] = [
            {"type": c.get("type"), "message": _trim(c.get("message")),
             "since": c.get("lastTransitionTime")}
            for c in (status.get("conditions") or [])[:20]]
    if include_operation and op:
        results = (op.get("syncResult") or {}).get("resources") or []
        failed = [r for r in results if r.get("status") not in ("Synced", None)
                  or r.get("hookPhase") in ("Failed", "Error")]
        answer["last_operation"].update(
            message=_trim(op.get("message")),
            initiated_by=(op.get("operation") or {}).get("initiatedBy"),
            revision=(op.get("syncResult") or {}).get("revision"),
            results=len(results),
            failed_results=[{"kind": r.get("kind"), "name": r.get("name"),
                             "status": r.get("status"), "message": _trim(r.get("message"), 200)}
                            for r in failed[:20]])
    return answer


#: How many unhealthy resources and warning events an unhealthy application's summary carries.
MAX_REASONS = 5


async def _why_not_healthy(client: ArgoCDClient, name: str, project: str | None,
                           resources: list[dict[str, Any]]) -> dict[str, Any]:
    """What makes an application unhealthy: its unhealthy resources and newest warnings.

    An application's health is the worst of its resources', so "is it healthy?" and "why is
    it broken?" have one answer: the resources that are not Healthy, with their messages, and
    the warning events Kubernetes recorded for its objects. A summary that said "Degraded"
    alone sent the model on to guess a cause, or to answer with the status and no reason.
    """
    unhealthy = [_resource_row(r) for r in resources
                 if (r.get("health") or {}).get("status") not in (None, "Healthy")]
    why: dict[str, Any] = {"unhealthy_resources": unhealthy[:MAX_REASONS]}
    if len(unhealthy) > MAX_REASONS:
        why["unhealthy_note"] = f"showing {MAX_REASONS} of {len(unhealthy)}"
    try:
        warnings = await events(client, name, project=project, limit=MAX_REASONS,
                                warnings_only=True)
    except PilothouseError as error:  # the summary stands without them
        why["warning_events_error"] = error.message
    else:
        why["warning_events"] = [{k: v for k, v in row.items() if k != "type"}
                                 for row in warnings["events"]]
    return why


async def resource_tree(client: ArgoCDClient, name: str, *, project: str | None = None,
                        max_unhealthy: int = 20) -> dict[str, Any]:
    """Counts of the live tree by kind and health, and the unhealthy nodes (capped)."""
    name = app_name(name)
    by_kind: Counter[str] = Counter()
    by_health: Counter[str] = Counter()
    unhealthy: list[dict[str, Any]] = []
    unhealthy_total = 0

    def take(node: dict[str, Any]) -> None:
        nonlocal unhealthy_total
        by_kind[node.get("kind") or "?"] += 1
        health = (node.get("health") or {}).get("status")
        if health:
            by_health[health] += 1
        if health and health != "Healthy":
            unhealthy_total += 1
            if len(unhealthy) < max(1, min(max_unhealthy, MAX_LISTED)):
                reason = next((i.get("value") for i in node.get("info") or []
                               if i.get("name") == "Status Reason"), None)
                row = {"kind": node.get("kind"), "name": node.get("name"),
                       "namespace": node.get("namespace"), "health": health,
                       "message": _trim((node.get("health") or {}).get("message"), 200)}
                if reason:
                    row["reason"] = reason
                unhealthy.append(row)

    await client.scan(f"/api/v1/applications/{name}/resource-tree", take, prefix="nodes.item",
                      params=_params(project), subject=AppSubject(name))
    answer = {"application": name, "nodes": sum(by_kind.values()), "by_kind": counts(by_kind),
              "by_health": counts(by_health), "unhealthy_total": unhealthy_total,
              "unhealthy": unhealthy}
    if unhealthy_total > len(unhealthy):
        answer["note"] = f"showing {len(unhealthy)} of {unhealthy_total} unhealthy nodes"
    return answer


async def events(client: ArgoCDClient, name: str, *, project: str | None = None,
                 limit: int = 20, warnings_only: bool = False) -> dict[str, Any]:
    """The newest events (capped), with counts by type and reason over all of them."""
    name = app_name(name)
    limit = max(1, min(limit, MAX_EVENTS))
    newest: list[tuple[str, int, dict[str, Any]]] = []
    by_type: Counter[str] = Counter()
    by_reason: Counter[str] = Counter()
    seen = 0

    def take(event: dict[str, Any]) -> None:
        nonlocal seen
        kind = event.get("type") or "Normal"
        by_type[kind] += 1
        by_reason[event.get("reason") or "?"] += 1
        if warnings_only and kind != "Warning":
            return
        seen += 1
        when = (event.get("lastTimestamp") or event.get("firstTimestamp")
                or (event.get("metadata") or {}).get("creationTimestamp") or "")
        target = event.get("involvedObject") or {}
        row = {"type": kind, "reason": event.get("reason"),
               "object": f"{target.get('kind')}/{target.get('name')}",
               "message": _trim(event.get("message"), 250), "count": event.get("count", 1),
               "last_seen": when}
        # A bounded min-heap on time keeps the newest `limit` events, however many stream by.
        entry = (when, seen, row)
        if len(newest) < limit:
            heapq.heappush(newest, entry)
        else:
            heapq.heappushpop(newest, entry)

    await client.scan(f"/api/v1/applications/{name}/events", take, params=_params(project),
                      subject=AppSubject(name))
    return {"application": name, "total": sum(by_type.values()), "by_type": counts(by_type),
            "top_reasons": dict(by_reason.most_common(8)),
            "events": [row for _, _, row in sorted(newest, reverse=True)]}


async def logs(client: ArgoCDClient, name: str, *, tail_lines: int = 100,
               pod_name: str | None = None, container: str | None = None,
               text_filter: str | None = None, project: str | None = None) -> dict[str, Any]:
    """The last `tail_lines` log lines of the application's pods (at most 500)."""
    name = app_name(name)
    notes = []
    if tail_lines < 1:
        raise UserInputError(f"tail_lines must be 1 or more, not {tail_lines}.")
    if tail_lines > MAX_TAIL_LINES:
        notes.append(f"tail_lines {tail_lines} was reduced to the maximum of {MAX_TAIL_LINES}.")
        tail_lines = MAX_TAIL_LINES
    params: dict[str, str | int] = {"tailLines": tail_lines, "follow": "false",
                                    **_params(project)}
    for key, value in (("podName", pod_name), ("container", container), ("filter", text_filter)):
        if value:
            params[key] = value
    lines: deque[tuple[str, str]] = deque(maxlen=tail_lines)
    pods: set[str] = set()

    def take(entry: dict[str, Any]) -> None:
        if entry.get("last"):
            return
        pod = entry.get("podName") or ""
        if len(pods) < 50:
            pods.add(pod)
        lines.append((pod, _trim(entry.get("content"), MAX_LINE_CHARS)))

    await client.scan_lines(f"/api/v1/applications/{name}/logs", take, params=params,
                            subject=AppSubject(name))
    several = len(pods) > 1
    answer: dict[str, Any] = {
        "application": name, "returned": len(lines), "pods": sorted(pods)[:20],
        "lines": [f"[{pod}] {text}" if several else text for pod, text in lines]}
    if not lines:
        notes.append("No log lines: the app may have no running pods (see "
                      "get_application_resource_tree).")
    if notes:
        answer["notes"] = notes
    return answer
