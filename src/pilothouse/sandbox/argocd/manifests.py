"""Desired and live manifests of a generated application, and the diff between them.

The desired state of a revision follows from its deploy (image tag, and the database pool a
Degraded app's bad deploy shrinks); the live state is the deployed revision's manifests plus
drift: an OutOfSync app's ConfigMap and Deployment were edited by hand, a test can add more
drift, a scale action changes the replicas. `managed_resources` answers like the real server,
with `liveState`/`targetState` as JSON strings; nothing is kept, it is built per request.
"""

from __future__ import annotations

import json
from typing import Any

from pilothouse.sandbox.argocd import deploys
from pilothouse.sandbox.argocd.fleet import AppRecord, Deploy

_KINDS: tuple[tuple[str, str, str, str], ...] = (
    # (group, version, kind, name suffix), as documents._RESOURCES
    ("", "v1", "ConfigMap", "-config"),
    ("", "v1", "Secret", "-env"),
    ("", "v1", "Service", ""),
    ("", "v1", "ServiceAccount", ""),
    ("apps", "v1", "Deployment", ""),
    ("autoscaling", "v2", "HorizontalPodAutoscaler", ""),
    ("monitoring.coreos.com", "v1", "ServiceMonitor", ""),
    ("networking.k8s.io", "v1", "Ingress", ""),
    ("policy", "v1", "PodDisruptionBudget", ""),
)


def _spec(rec: AppRecord, kind: str, deploy: Deploy) -> dict[str, Any]:
    base = rec.workload
    labels = {"app.kubernetes.io/name": base}
    if kind == "ConfigMap":
        return {"data": {"LOG_LEVEL": "info", "DB_POOL_SIZE": "0" if deploy.broken else "20",
                         "RELEASE": deploy.tag}}
    if kind == "Secret":
        return {"type": "Opaque", "data": {"DATABASE_URL": "++++++++"}}
    if kind == "Service":
        return {"spec": {"selector": labels, "ports": [{"port": 80, "targetPort": 8080}]}}
    if kind == "ServiceAccount":
        return {}
    if kind == "Deployment":
        container = {"name": "app", "image": f"ghcr.io/{rec.world.org}/{base}:{deploy.tag}",
                     "envFrom": [{"configMapRef": {"name": f"{base}-config"}}],
                     "resources": {"limits": {"memory": "512Mi"}}}
        return {"spec": {"replicas": rec.replicas, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels},
                                      "spec": {"containers": [container]}}}}
    if kind == "HorizontalPodAutoscaler":
        return {"spec": {"minReplicas": rec.replicas, "maxReplicas": rec.replicas * 4}}
    if kind == "ServiceMonitor":
        return {"spec": {"endpoints": [{"port": "http", "interval": "30s"}]}}
    if kind == "Ingress":
        return {"spec": {"rules": [{"host": f"{rec.service}.{rec.team}.{rec.world.domain}"}]}}
    return {"spec": {"minAvailable": 1}}


def manifest(rec: AppRecord, index: int, deploy: Deploy) -> dict[str, Any]:
    """Resource `index` of `_KINDS` as revision `deploy` declares it."""
    group, version, kind, suffix = _KINDS[index]
    return {"apiVersion": f"{group}/{version}" if group else version, "kind": kind,
            "metadata": {"name": f"{rec.workload}{suffix}",
                         "namespace": rec.namespace,
                         "labels": {"app.kubernetes.io/instance": rec.name}},
            **_spec(rec, kind, deploy)}


def _live(rec: AppRecord, index: int, running: Deploy) -> dict[str, Any]:
    doc = manifest(rec, index, running)
    kind = doc["kind"]
    if kind == "ConfigMap" and (rec.hand_edited or rec.drift):
        doc["data"] = {**doc["data"], "LOG_LEVEL": "debug"}
        for n in range(rec.drift):
            doc["data"][f"HOTFIX_{n + 1}"] = "true"
    if kind == "Deployment":
        replicas = rec.live_replicas if rec.live_replicas is not None else \
            rec.replicas + (1 if rec.hand_edited else 0)
        doc["spec"] = {**doc["spec"], "replicas": replicas}
    return doc


def target_manifests(rec: AppRecord, deploy: Deploy) -> list[dict[str, Any]]:
    """Every manifest of revision `deploy`, in `_KINDS` order."""
    return [manifest(rec, k, deploy) for k in range(len(_KINDS))]


def live_manifests(rec: AppRecord) -> list[dict[str, Any]]:
    """What runs in the cluster now (empty for a Missing app: nothing was created)."""
    if rec.health == "Missing":
        return []
    running = deploys.current(rec)
    return [_live(rec, k, running) for k in range(len(_KINDS))]


def resource_version(doc: dict[str, Any]) -> str:
    """A stable resourceVersion for a live object: changes whenever the object does."""
    text = json.dumps(doc, sort_keys=True)
    return str(90_000_000 + int.from_bytes(text.encode()[-64:], "big") % 9_000_000)


def managed_resources(rec: AppRecord, *, kind: str | None = None, name: str | None = None,
                      namespace: str | None = None) -> list[dict[str, Any]]:
    """`GET .../managed-resources` items: desired (branch head) against live, per resource."""
    target = target_manifests(rec, deploys.head(rec))
    live = live_manifests(rec)
    items = []
    for k, (group, _version, res_kind, _suffix) in enumerate(_KINDS):
        desired = target[k]
        meta = desired["metadata"]
        if (kind and kind != res_kind) or (name and name != meta["name"]) or \
                (namespace and namespace != meta["namespace"]):
            continue
        now = live[k] if live else None
        item: dict[str, Any] = {"kind": res_kind, "namespace": meta["namespace"],
                                "name": meta["name"],
                                "targetState": json.dumps(desired, separators=(",", ":")),
                                "liveState": json.dumps(now, separators=(",", ":")) if now
                                else "null",
                                "modified": now != desired}
        if group:
            item = {"group": group, **item}
        if now is not None:
            item["resourceVersion"] = resource_version(now)
        items.append(item)
    return items


def server_side_diff(rec: AppRecord) -> dict[str, Any]:
    """`GET .../server-side-diff`: the predicted live state after a sync, per resource."""
    items = []
    for item in managed_resources(rec):
        entry = {k: v for k, v in item.items() if k not in ("targetState", "resourceVersion")}
        entry["predictedLiveState"] = item["targetState"]
        entry["normalizedLiveState"] = item["liveState"]
        items.append(entry)
    return {"items": items, "modified": any(i["modified"] for i in items)}
