"""Live state of a generated application: resource tree, Kubernetes events and pod logs.

All of it follows from the application's record, so a Degraded application has a crash-looping
pod, BackOff warnings and error lines in its logs, which is what an agent must find.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from pilothouse.sandbox.argocd.documents import image_tag
from pilothouse.sandbox.argocd.fleet import AppRecord, digest

LOG_LINES_PER_POD = 150
_ERRORS = (
    "ERROR failed to connect to postgres: dial tcp 10.40.3.4:5432: connect: connection refused",
    "ERROR readiness probe dependency check failed: upstream timeout after 5s",
    "FATAL shutting down: too many consecutive failures",
)


def _uid(rec: AppRecord, n: int) -> str:
    return f"{rec.revision[:8]}-{n:04d}-4000-8000-{rec.revision[-12:]}"


def pod_names(rec: AppRecord) -> list[str]:
    if rec.health in ("Missing", "Suspended"):
        return []
    rs = f"{rec.workload}-{rec.revision[:9]}"
    return [f"{rs}-{rec.revision[10 + 5 * k:15 + 5 * k]}" for k in range(rec.replicas)]


def _pod_health(rec: AppRecord, k: int, count: int) -> dict[str, Any]:
    if k == count - 1 and rec.health == "Degraded":
        return {"status": "Degraded", "message": "back-off 5m0s restarting failed container"}
    if k == count - 1 and rec.health == "Progressing":
        return {"status": "Progressing", "message": "ContainerCreating"}
    return {"status": "Healthy"}


def resource_tree(rec: AppRecord) -> dict[str, Any]:
    """`GET .../resource-tree`: managed resources plus the ReplicaSet and Pods they own."""
    ns, base = rec.namespace, rec.workload
    image = f"ghcr.io/{rec.world.org}/{base}:{image_tag(rec)}"
    created = "2025-03-11T09:13:02Z"
    deploy: dict[str, Any] = {
              "group": "apps", "version": "v1", "kind": "Deployment", "namespace": ns,
              "name": base, "uid": _uid(rec, 1), "info": [{"name": "Revision", "value": "Rev:42"}],
              "resourceVersion": "98765432", "images": [image],
              "health": {"status": rec.health if rec.health != "Unknown" else "Healthy"},
              "createdAt": created}
    if rec.health == "Degraded":
        deploy["health"]["message"] = "Deployment has minimum availability false"
    nodes: list[dict[str, Any]] = [
        {"version": "v1", "kind": "Service", "namespace": ns, "name": base, "uid": _uid(rec, 4),
         "networkingInfo": {"targetLabels": {"app.kubernetes.io/name": base}},
         "resourceVersion": "98765001", "health": {"status": "Healthy"}, "createdAt": created},
        {"version": "v1", "kind": "ConfigMap", "namespace": ns, "name": f"{base}-config",
         "uid": _uid(rec, 5), "resourceVersion": "98765002", "createdAt": created},
        deploy,
    ]
    pods = pod_names(rec)
    if pods:
        rs_name = pods[0].rsplit("-", 1)[0]
        nodes.append({"group": "apps", "version": "v1", "kind": "ReplicaSet", "namespace": ns,
                      "name": rs_name, "uid": _uid(rec, 2),
                      "parentRefs": [{"group": "apps", "kind": "Deployment", "namespace": ns,
                                      "name": base, "uid": _uid(rec, 1)}],
                      "info": [{"name": "Revision", "value": "Rev:42"}],
                      "resourceVersion": "98765430", "images": [image],
                      "health": {"status": "Healthy"}, "createdAt": "2026-08-21T14:03:20Z"})
    for k, pod in enumerate(pods):
        pod_health = _pod_health(rec, k, len(pods))
        reason = "CrashLoopBackOff" if pod_health["status"] == "Degraded" else "Running"
        nodes.append({"version": "v1", "kind": "Pod", "namespace": ns, "name": pod,
                      "uid": _uid(rec, 10 + k),
                      "parentRefs": [{"group": "apps", "kind": "ReplicaSet", "namespace": ns,
                                      "name": pods[0].rsplit("-", 1)[0], "uid": _uid(rec, 2)}],
                      "info": [{"name": "Status Reason", "value": reason},
                               {"name": "Node", "value": f"ip-10-20-3-{14 + k}"},
                               {"name": "Containers", "value": "0/1" if reason != "Running"
                                else "1/1"}],
                      "resourceVersion": str(98765428 + k), "images": [image],
                      "health": pod_health, "createdAt": "2026-08-21T14:03:21Z"})
    if rec.service in ("api", "web", "gateway", "bff"):
        nodes.append({"group": "networking.k8s.io", "version": "v1", "kind": "Ingress",
                      "namespace": ns, "name": base, "uid": _uid(rec, 6),
                      "resourceVersion": "98765003", "health": {"status": "Healthy"},
                      "createdAt": created})
    return {"nodes": nodes, "hosts": [{"name": f"ip-10-20-3-{14 + k}",
                                       "systemInfo": {"architecture": "amd64",
                                                      "operatingSystem": "linux",
                                                      "kernelVersion": "6.1.102"}}
                                      for k in range(min(len(pods), 2))]}


def events(rec: AppRecord) -> dict[str, Any]:
    """`GET .../events`: an `eventsEventList` for the app's objects."""
    ns, base = rec.namespace, rec.workload
    items: list[dict[str, Any]] = []

    def add(kind: str, name: str, kind_type: str, reason: str, message: str, count: int,
            minute: int) -> None:
        n = len(items)
        items.append({
            "metadata": {"name": f"{name}.{rec.revision[n:n + 16]}", "namespace": ns,
                         "uid": _uid(rec, 100 + n), "resourceVersion": str(99_000_000 + n),
                         "creationTimestamp": f"2026-08-22T07:{minute:02d}:00Z"},
            "involvedObject": {"kind": kind, "namespace": ns, "name": name,
                               "apiVersion": "apps/v1" if kind != "Pod" else "v1"},
            "reason": reason, "message": message,
            "source": {"component": "kubelet" if kind == "Pod" else "deployment-controller"},
            "firstTimestamp": f"2026-08-22T07:{minute:02d}:00Z",
            "lastTimestamp": f"2026-08-22T08:{minute:02d}:30Z",
            "count": count, "type": kind_type, "reportingComponent": "",
            "reportingInstance": "",
        })

    add("Deployment", base, "Normal", "ScalingReplicaSet",
        f"Scaled up replica set {base}-{rec.revision[:9]} to {rec.replicas}", 1, 1)
    for k, pod in enumerate(pod_names(rec)):
        add("Pod", pod, "Normal", "Pulled", f"Container image \"{base}:{image_tag(rec)}\" "
            "already present on machine", 1, 2 + k)
        add("Pod", pod, "Normal", "Started", "Started container app", 1, 2 + k)
        if rec.health == "Degraded" and k == rec.replicas - 1:
            add("Pod", pod, "Warning", "BackOff", "Back-off restarting failed container app "
                f"in pod {pod}", 37, 30)
            add("Pod", pod, "Warning", "Unhealthy", "Readiness probe failed: HTTP probe failed "
                "with statuscode: 503", 112, 31)
    if rec.health == "Progressing":
        add("Deployment", base, "Normal", "ScalingReplicaSet", "Rolling update in progress",
            1, 40)
    return {"metadata": {}, "items": items}


def _pod_lines(rec: AppRecord, pod: str, failing: bool) -> list[tuple[str, str]]:
    lines = []
    for n in range(LOG_LINES_PER_POD):
        second = n * 11
        stamp = f"2026-08-22T08:{second // 60 % 60:02d}:{second % 60:02d}Z"
        if failing and n >= LOG_LINES_PER_POD - len(_ERRORS):
            text = _ERRORS[n - (LOG_LINES_PER_POD - len(_ERRORS))]
        else:
            status = 200 if digest(rec.index, pod, n) % 23 else 500
            text = (f"INFO {rec.service} handled GET /v1/{rec.service}/{n % 17} "
                    f"status={status} duration_ms={3 + n % 40}")
        lines.append((stamp, f"{stamp} {text}"))
    return lines


def log_entries(rec: AppRecord, *, tail: int | None, pod: str | None, text: str | None,
                match_case: bool) -> Iterator[dict[str, Any]]:
    """Log entries (the `result` of each NDJSON line), tail applied per pod, time-ordered."""
    pods = [p for p in pod_names(rec) if pod is None or p == pod]
    streams = []
    for k, name in enumerate(pods):
        failing = rec.health == "Degraded" and k == len(pods) - 1
        lines = _pod_lines(rec, name, failing)
        if text:
            needle = text if match_case else text.lower()
            lines = [ln for ln in lines if needle in (ln[1] if match_case else ln[1].lower())]
        if tail is not None and tail >= 0:
            lines = lines[-tail:] if tail else []
        streams.append([(stamp, name, content) for stamp, content in lines])
    for stamp, name, content in heapq.merge(*streams):
        yield {"content": content, "timeStamp": stamp, "last": False,
               "timeStampStr": stamp.replace("Z", ".000000000Z"), "podName": name}
    yield {"content": "", "timeStamp": "2026-08-22T08:30:00Z", "last": True,
           "timeStampStr": "2026-08-22T08:30:00.000000000Z", "podName": ""}
