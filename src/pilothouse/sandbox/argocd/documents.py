"""Application documents as Argo CD returns them: full objects and `fields=` projections.

Each allow-listed projection path has its own builder, so a projected list renders only the
requested parts (a 100,000-app list does not build 100,000 full documents to throw most away).
The full document, shaped like `reference/argocd/examples/example_application_full.json`
(~9 KB compact), is assembled from the same builders plus the heavy parts a projection omits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pilothouse.sandbox.argocd import deploys
from pilothouse.sandbox.argocd.fleet import AppRecord

NOW = "2026-08-22T08:15:41Z"
_RESOURCES: tuple[tuple[str, str, str, str, bool], ...] = (
    # (group, version, kind, name suffix, has a health check)
    ("", "v1", "ConfigMap", "-config", False),
    ("", "v1", "Secret", "-env", False),
    ("", "v1", "Service", "", True),
    ("", "v1", "ServiceAccount", "", False),
    ("apps", "v1", "Deployment", "", True),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", "", True),
    ("monitoring.coreos.com", "v1", "ServiceMonitor", "", False),
    ("networking.k8s.io", "v1", "Ingress", "", True),
    ("policy", "v1", "PodDisruptionBudget", "", True),
)
_MANAGED_FIELDS_SPEC: dict[str, Any] = {
    "f:metadata": {"f:finalizers": {".": {}, 'v:"resources-finalizer.argocd.argoproj.io"': {}},
                   "f:labels": {".": {}, "f:env": {}, "f:team": {}, "f:tier": {}}},
    "f:spec": {".": {}, "f:destination": {".": {}, "f:namespace": {}, "f:server": {}},
               "f:project": {}, "f:source": {".": {}, "f:path": {}, "f:repoURL": {},
                                             "f:targetRevision": {}},
               "f:syncPolicy": {".": {}, "f:automated": {".": {}, "f:prune": {},
                                                         "f:selfHeal": {}},
                                "f:syncOptions": {}}},
}
_MANAGED_FIELDS_STATUS: dict[str, Any] = {
    "f:status": {".": {}, "f:controllerNamespace": {}, "f:health": {".": {}, "f:status": {}},
                 "f:history": {}, "f:operationState": {".": {}, "f:finishedAt": {},
                                                       "f:message": {}, "f:phase": {},
                                                       "f:startedAt": {}, "f:syncResult": {}},
                 "f:reconciledAt": {}, "f:resources": {}, "f:sourceType": {},
                 "f:summary": {".": {}, "f:images": {}},
                 "f:sync": {".": {}, "f:comparedTo": {}, "f:revision": {}, "f:status": {}}},
}


def image_tag(rec: AppRecord) -> str:
    """The image tag running now (the generated one until something was deployed since)."""
    if rec.extra_deploys:
        return rec.extra_deploys[-1].tag
    return f"1.{rec.index % 47}.{rec.index % 11}"


def revision(rec: AppRecord) -> str:
    """`status.sync.revision`: what the tracked branch points to."""
    return deploys.head_revision(rec)


#: Argo CD keeps the last 10 deploys (`spec.revisionHistoryLimit` default).
HISTORY_LIMIT = 10


def source(rec: AppRecord) -> dict[str, Any]:
    if rec.repo == rec.world.helm_chart_repo:
        return {"repoURL": rec.repo, "targetRevision": image_tag(rec),
                "chart": rec.workload, "helm": {"releaseName": rec.workload}}
    body: dict[str, Any] = {"repoURL": rec.repo, "path": rec.path, "targetRevision": "main"}
    if rec.source_type == "Helm":
        body["helm"] = {"valueFiles": ["values.yaml", f"values-{rec.env}.yaml"]}
    return body


def destination(rec: AppRecord) -> dict[str, Any]:
    return {"server": rec.cluster_server, "namespace": rec.namespace}


def sync_policy(rec: AppRecord) -> dict[str, Any]:
    policy: dict[str, Any] = {}
    if rec.auto_sync:
        policy["automated"] = {"prune": True, "selfHeal": True}
    policy["syncOptions"] = ["CreateNamespace=true", "ServerSideApply=true"]
    policy["retry"] = {"limit": 5,
                       "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}
    return policy


def spec(rec: AppRecord) -> dict[str, Any]:
    return {"source": source(rec), "destination": destination(rec), "project": rec.project,
            "syncPolicy": sync_policy(rec)}


def health(rec: AppRecord) -> dict[str, Any]:
    return {"status": rec.health, "lastTransitionTime": "2026-08-21T14:04:02Z"}


def images(rec: AppRecord) -> list[str]:
    return [f"ghcr.io/{rec.world.org}/{rec.workload}:{image_tag(rec)}"]


def resources(rec: AppRecord) -> list[dict[str, Any]]:
    """`status.resources`: what the app manages, with the app's problems on the Deployment."""
    out: list[dict[str, Any]] = []
    base = rec.workload
    for group, version, kind, suffix, has_health in _RESOURCES:
        item: dict[str, Any] = {"version": version, "kind": kind, "namespace": rec.namespace,
                                "name": base + suffix}
        if group:
            item = {"group": group, **item}
        drifted = rec.sync == "OutOfSync" and kind in ("ConfigMap", "Deployment")
        item["status"] = "OutOfSync" if drifted else ("Unknown" if rec.sync == "Unknown" else
                                                      "Synced")
        if has_health:
            state = rec.health if kind == "Deployment" else (
                "Missing" if rec.health == "Missing" else "Healthy")
            item["health"] = {"status": state}
            if state == "Degraded":
                item["health"]["message"] = "Deployment has minimum availability false"
        out.append(item)
    return out


def operation_phase(rec: AppRecord) -> str:
    return "Failed" if rec.sync == "OutOfSync" and rec.health == "Degraded" else "Succeeded"


def operation_state(rec: AppRecord, *, full: bool = True) -> dict[str, Any]:
    """The last sync as the controller recorded it; `full` adds the bulky per-resource result."""
    phase = operation_phase(rec)
    state: dict[str, Any] = {
        "operation": {"sync": {"revision": revision(rec), "prune": True},
                      "initiatedBy": {"automated": rec.auto_sync}},
        "phase": phase,
        "message": "successfully synced (all tasks run)" if phase == "Succeeded" else
        "one or more objects failed to apply, reason: Deployment.apps is invalid",
    }
    if full:
        state["syncResult"] = {
            "resources": [{**{k: r[k] for k in ("version", "kind", "namespace", "name")},
                           "group": r.get("group", ""), "status": "Synced",
                           "message": f"{r['kind'].lower()}/{r['name']} configured",
                           "hookPhase": "Running", "syncPhase": "Sync"}
                          for r in resources(rec)],
            "revision": revision(rec),
            "source": source(rec),
        }
    state["startedAt"] = "2026-08-21T14:03:05Z"
    state["finishedAt"] = "2026-08-21T14:03:27Z"
    return state


def conditions(rec: AppRecord) -> list[dict[str, Any]] | None:
    if rec.sync == "OutOfSync" and rec.health == "Degraded":
        return [{"type": "SyncError", "lastTransitionTime": "2026-08-21T14:03:27Z",
                 "message": "Failed sync attempt: one or more objects failed to apply"}]
    if rec.sync == "Unknown":
        return [{"type": "ComparisonError", "lastTransitionTime": "2026-08-22T08:10:00Z",
                 "message": "Failed to load target state: repository not accessible"}]
    return None


Builder = Callable[[AppRecord, dict[str, Any] | None], Any]


def _op(rec: AppRecord, override: dict[str, Any] | None) -> dict[str, Any]:
    return override if override is not None else operation_state(rec, full=False)


#: Paths the real list endpoint honours in `fields=` (see reference/argocd/README.md).
PATH_BUILDERS: dict[str, Builder] = {
    "metadata.name": lambda r, o: r.name,
    "metadata.namespace": lambda r, o: "argocd",
    "metadata.annotations": lambda r, o: r.annotations,
    "metadata.labels": lambda r, o: r.labels,
    "metadata.creationTimestamp": lambda r, o: r.created,
    "metadata.deletionTimestamp": lambda r, o: None,
    "spec": lambda r, o: spec(r),
    "spec.destination": lambda r, o: destination(r),
    "spec.project": lambda r, o: r.project,
    "spec.source": lambda r, o: source(r),
    "spec.sources": lambda r, o: None,
    "spec.sourceHydrator": lambda r, o: None,
    "spec.syncPolicy": lambda r, o: sync_policy(r),
    "status.sourceHydrator": lambda r, o: None,
    "status.summary": lambda r, o: {"images": images(r)},
    "status.health": lambda r, o: health(r),
    "status.resources": lambda r, o: resources(r),
    "status.sync.status": lambda r, o: r.sync,
    "status.sync.revision": lambda r, o: revision(r),
    "status.operationState.startedAt": lambda r, o: _op(r, o).get("startedAt"),
    "status.operationState.finishedAt": lambda r, o: _op(r, o).get("finishedAt"),
    "status.operationState.phase": lambda r, o: _op(r, o).get("phase"),
}


def full_application(rec: AppRecord, op_state: dict[str, Any] | None = None,
                     operation: dict[str, Any] | None = None) -> dict[str, Any]:
    """The whole application object, as a single GET (never trimmed) returns it."""
    metadata: dict[str, Any] = {
        "name": rec.name, "namespace": "argocd",
        "uid": f"{rec.revision[:8]}-{rec.revision[8:12]}-4{rec.revision[13:16]}-"
               f"8{rec.revision[17:20]}-{rec.revision[20:32]}",
        "resourceVersion": str(48_000_000 + rec.index), "generation": 100 + rec.index % 1900,
        "creationTimestamp": rec.created, "labels": rec.labels,
    }
    if rec.annotations:
        metadata["annotations"] = rec.annotations
    metadata["finalizers"] = ["resources-finalizer.argocd.argoproj.io"]
    metadata["managedFields"] = [
        {"manager": "argocd-server", "operation": "Update", "apiVersion": "argoproj.io/v1alpha1",
         "time": rec.created, "fieldsType": "FieldsV1", "fieldsV1": _MANAGED_FIELDS_SPEC},
        {"manager": "argocd-application-controller", "operation": "Update",
         "apiVersion": "argoproj.io/v1alpha1", "time": "2026-08-21T14:03:28Z",
         "fieldsType": "FieldsV1", "fieldsV1": _MANAGED_FIELDS_STATUS},
    ]
    history = [deploys.history_entry(rec, d, source(rec))
               for d in deploys.deploys(rec)[-HISTORY_LIMIT:]]
    status: dict[str, Any] = {
        "resources": resources(rec),
        "sync": {"status": rec.sync,
                 "comparedTo": {"source": source(rec), "destination": destination(rec)},
                 "revision": revision(rec)},
        "health": health(rec),
        "history": history,
        "reconciledAt": NOW,
        "operationState": op_state if op_state is not None else operation_state(rec),
        "sourceType": rec.source_type,
        "summary": {"images": images(rec)},
        "resourceHealthSource": "appTree",
        "controllerNamespace": "argocd",
    }
    found = conditions(rec)
    if found:
        status["conditions"] = found
    document: dict[str, Any] = {"metadata": metadata, "spec": spec(rec)}
    if operation is not None:
        document["operation"] = operation
    document["status"] = status
    return document


def parse_fields(raw: Sequence[str]) -> tuple[bool, list[str]]:
    """`fields=` values -> (exclude mode, allow-listed item paths); unknown paths are ignored."""
    entries = [e.strip() for value in raw for e in value.split(",") if e.strip()]
    exclude = bool(entries) and all(e.startswith("-") for e in entries)
    paths: list[str] = []
    for entry in entries:
        path = entry.lstrip("-")
        if path.startswith("items."):
            path = path[len("items."):]
            if path in PATH_BUILDERS:
                paths.append(path)
    kept = [p for p in paths if not any(p.startswith(o + ".") for o in paths if o != p)]
    return exclude, sorted(set(kept))


def project_application(rec: AppRecord, paths: Sequence[str],
                        op_state: dict[str, Any] | None = None) -> dict[str, Any]:
    """Only `paths`, with keys in alphabetical order as the real server's projection emits."""
    out: dict[str, Any] = {}
    for path in sorted(paths, key=lambda p: p.split(".")):
        value = PATH_BUILDERS[path](rec, op_state)
        if value is None:
            continue
        keys = path.split(".")
        node = out
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return out


def exclude_paths(document: dict[str, Any], paths: Sequence[str]) -> dict[str, Any]:
    """`document` without `paths` (the `fields=-items.x` form); shared sub-objects stay intact."""
    for path in paths:
        document = _without(document, path.split("."))
    return document


def _without(node: Any, keys: list[str]) -> Any:
    if not isinstance(node, dict) or keys[0] not in node:
        return node
    copy = dict(node)
    if len(keys) == 1:
        del copy[keys[0]]
    else:
        copy[keys[0]] = _without(node[keys[0]], keys[1:])
    return copy
