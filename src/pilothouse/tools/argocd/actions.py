"""Resource actions (restart a Deployment, scale it): what a resource offers, run on approval.

The dry run finds the resource among the app's managed resources, lists the actions it offers
and, for a chosen action, fingerprints what the person approves: the action, its parameters and
the resource's live state (its resourceVersion and a digest of the live manifest), with the
same `sync.evidence_fingerprint` every gated Argo CD action uses. An approved action recomputes
it just before running; if the live object changed meanwhile (a deploy, a hand edit) nothing
runs and the answer carries the new evidence. After the action the app's health is followed.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pilothouse.errors import ApprovalRequired, UserInputError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import app_name
from pilothouse.tools.argocd.diff import parse_state, resource_key
from pilothouse.tools.argocd.errors import AppSubject
from pilothouse.tools.argocd.follow import follow_health
from pilothouse.tools.argocd.sync import EvidenceChanged, evidence_fingerprint

_APPROVAL_HINT = ("Run run_resource_action with dry_run=true, show the user the action and the "
                  "resource, and call again with dry_run=false and approved=true only after "
                  "they agree.")
_CHANGED_HINT = ("The resource changed since the approval; show the user its new state and "
                 "ask again before running the action.")


def _live_summary(live: dict[str, Any]) -> dict[str, Any]:
    """The few live facts a person checks before acting on a workload."""
    spec = live.get("spec") or {}
    containers = (((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    summary: dict[str, Any] = {}
    if "replicas" in spec:
        summary["replicas"] = spec["replicas"]
    images = [c.get("image") for c in containers if c.get("image")][:5]
    if images:
        summary["images"] = images
    return summary


async def _live_matches(client: ArgoCDClient, name: str, kind: str, resource_name: str,
                        namespace: str | None, project: str | None) -> list[tuple[Any, Any]]:
    params = {"kind": kind, "name": resource_name,
              **({"namespace": namespace} if namespace else {}),
              **({"project": project} if project else {})}
    doc = await client.get(f"/api/v1/applications/{name}/managed-resources", params,
                           subject=AppSubject(name))
    return [(item, live) for item in doc.get("items") or []
            if item.get("kind") == kind and item.get("name") == resource_name
            and (live := parse_state(item.get("liveState")))]


async def _find(client: ArgoCDClient, name: str, kind: str, resource_name: str,
                namespace: str | None, project: str | None) -> tuple[dict[str, Any], Any]:
    found = await _live_matches(client, name, kind, resource_name, namespace, project)
    if not found and namespace:
        # A namespace that holds no such resource is a guess (measured: the local model put
        # the app's name there); the one resource of that kind and name is the one meant, and
        # the dry run names its real namespace, which is what the person approves.
        found = await _live_matches(client, name, kind, resource_name, None, project)
    if len(found) == 1:
        return found[0]
    if found:
        spaces = ", ".join(sorted(str(item.get("namespace")) for item, _ in found))
        raise UserInputError(f"{kind} '{resource_name}' of '{name}' is in several namespaces: "
                             f"{spaces}.", hint="Call again with namespace set to one of them.")
    raise UserInputError(f"{kind} '{resource_name}' is not a live resource of '{name}'.",
                         hint="Check kind and name with get_application(include_resources="
                              "true) or get_application_resource_tree.")


async def _dry_run(client: ArgoCDClient, name: str, kind: str, resource_name: str,
                   action: str | None, namespace: str | None, replicas: int | None,
                   project: str | None) -> dict[str, Any]:
    item, live = await _find(client, name, kind, resource_name, namespace, project)
    namespace = item.get("namespace") or namespace
    query = {"kind": kind, "resourceName": resource_name, "group": item.get("group") or "",
             **({"namespace": namespace} if namespace else {}),
             **({"project": project} if project else {})}
    listed = await client.get(f"/api/v1/applications/{name}/resource/actions", query,
                              subject=f"{kind} '{resource_name}'")
    offered = [{"name": a.get("name"),
                **({"params": [p.get("name") for p in a["params"]]} if a.get("params") else {})}
               for a in listed.get("actions") or [] if not a.get("disabled")]
    answer: dict[str, Any] = {
        "application": name, "dry_run": True,
        "resource": resource_key({"kind": kind, "namespace": namespace, "name": resource_name}),
        "live": _live_summary(live), "offered": offered}
    if action is None:
        answer["next"] = ("Nothing was run. Pick one of the offered actions and call again "
                          "with action=<name>." if offered else
                          f"This {kind} offers no actions.")
        return answer
    if action not in {a["name"] for a in offered}:
        raise UserInputError(f"{kind} '{resource_name}' does not offer the action {action!r}.",
                             hint="Offered: " + (", ".join(str(a["name"]) for a in offered)
                                                 or "none") + ".")
    params: dict[str, str] = {}
    if action == "scale":
        if replicas is None or replicas < 0:
            raise UserInputError("scale needs replicas (0 or more).")
        params["replicas"] = str(replicas)
    live_digest = hashlib.sha256(json.dumps(live, sort_keys=True).encode()).hexdigest()[:16]
    answer.update(action=action, params=params, evidence=evidence_fingerprint(
        name, f"{answer['resource']}:{action}", False,
        [{"params": params}, {"resourceVersion": item.get("resourceVersion"),
                              "live": live_digest}]))
    shown = ", ".join(f"{k}={v}" for k, v in answer["live"].items()) or "no details"
    answer["summary"] = (f"Run '{action}'{' with ' + str(params) if params else ''} on "
                         f"{answer['resource']} of '{name}'. Live now: {shown} "
                         f"(resourceVersion {item.get('resourceVersion')}).")
    answer["query"] = query
    return answer


async def run_resource_action(client: ArgoCDClient, name: str, kind: str, resource_name: str,
                              *, action: str | None = None, namespace: str | None = None,
                              replicas: int | None = None, dry_run: bool = True,
                              approved: bool = False, expected_evidence: str | None = None,
                              project: str | None = None,
                              follow_seconds: float = 60.0) -> dict[str, Any]:
    """List a resource's actions, plan one (dry run), or run it once approved."""
    name = app_name(name)
    if not kind.strip() or not resource_name.strip():
        raise UserInputError("kind and resource_name are required, e.g. Deployment and the "
                             "deployment's name.")
    plan = await _dry_run(client, name, kind.strip(), resource_name.strip(), action,
                          namespace, replicas, project)
    query = plan.pop("query", {})
    if dry_run or action is None:
        if action is not None:
            plan["next"] = "Nothing was run. " + _APPROVAL_HINT
        return plan
    expected = (expected_evidence or "").strip()
    if not approved or not expected:
        raise ApprovalRequired(f"Running '{action}' on {plan['resource']} changes the cluster "
                               "and needs approval.", hint=_APPROVAL_HINT)
    if plan["evidence"] != expected:
        raise EvidenceChanged(f"Nothing was run: {plan['resource']} of '{name}' is no longer "
                              "what was approved.", hint=_CHANGED_HINT,
                              details={"dry_run": plan})
    body: dict[str, Any] = {"name": name, "action": action, "kind": kind,
                            "resourceName": resource_name, "group": query.get("group", ""),
                            "version": "v1", "namespace": query.get("namespace", ""),
                            "resourceActionParameters": [{"name": k, "value": v}
                                                         for k, v in plan["params"].items()]}
    if project:
        body["project"] = project
    await client.post(f"/api/v1/applications/{name}/resource/actions/v2", body,
                      subject=f"{kind} '{resource_name}'")
    health = await follow_health(client, name, project=project, limit_seconds=follow_seconds)
    return {"application": name, "dry_run": False, "action": action,
            "resource": plan["resource"], "params": plan["params"],
            "evidence": plan["evidence"], "health": health}
