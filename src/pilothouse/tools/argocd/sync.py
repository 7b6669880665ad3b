"""Syncing an application: a dry run first, a real sync only with a person's approval.

The tool is registered only when `ARGOCD_READ_ONLY=false`. Even then a real sync (dry_run=false)
is refused unless `approved=true`, which the agent runtime sets after a human approves. The
approval is bound to evidence: every dry run answers with a fingerprint of what would change
(the resources, their statuses and actions, the target revision), the approval prompt shows
that dry run, and an approved sync carries the fingerprint the person saw. Just before the real
sync starts, the tool runs the dry run again; if the fingerprint differs, nothing is synced and
the answer carries the new dry run, so the person is asked again about what is true now.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pilothouse.errors import ApprovalRequired
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import MAX_LISTED, app_name
from pilothouse.tools.argocd.diff import DiffCollector, live_states
from pilothouse.tools.argocd.errors import AppSubject
from pilothouse.tools.tool_server import RequestRejected


class EvidenceChanged(RequestRejected):
    """An approved sync whose dry run no longer matches what the person approved."""


_APPROVAL_HINT = (
    "Run sync_application with dry_run=true, show the user what would change, and call again "
    "with dry_run=false and approved=true only after they agree."
)
_CHANGED_HINT = (
    "Show the user the new dry run below and ask again; call sync_application with "
    "dry_run=false only if they approve what would change now."
)


def _would_change(doc: dict[str, Any], prune: bool) -> list[dict[str, Any]]:
    """Resources a sync would touch: those not Synced (and, with prune, those to delete)."""
    changes = []
    for resource in (doc.get("status") or {}).get("resources") or []:
        pruned = bool(resource.get("requiresPruning"))
        if resource.get("status") != "Synced" and (prune or not pruned):
            changes.append({"kind": resource.get("kind"), "name": resource.get("name"),
                            "namespace": resource.get("namespace"),
                            "status": resource.get("status") or "Unknown",
                            "action": "delete" if pruned else "apply"})
    return changes


def evidence_fingerprint(application: str, revision: str | None, prune: bool,
                         changes: list[dict[str, Any]]) -> str:
    """A short hash of everything a person approves: what changes, how, and to which revision.

    Computed over every change (not only the listed ones) in a canonical order, so the same
    cluster state always gives the same fingerprint and any difference gives another.
    """
    ordered = sorted(json.dumps(c, sort_keys=True, default=str) for c in changes)
    canonical = json.dumps({"application": application, "revision": revision or "",
                            "prune": prune, "changes": ordered}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _body(name: str, dry_run: bool, prune: bool, revision: str | None,
          project: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "dryRun": dry_run, "prune": prune}
    if revision and revision.strip():
        body["revision"] = revision.strip()
    if project and project.strip():
        body["project"] = project.strip()
    return body


def _target_revision(body: dict[str, Any], doc: dict[str, Any]) -> str | None:
    return body.get("revision") or ((doc.get("status") or {}).get("sync") or {}).get("revision")


async def _dry_run(client: ArgoCDClient, name: str, prune: bool, revision: str | None,
                   project: str | None) -> dict[str, Any]:
    """The dry run's answer: what would change, the target revision and its fingerprint."""
    body = _body(name, True, prune, revision, project)
    doc = await client.post(f"/api/v1/applications/{name}/sync", body,
                            subject=AppSubject(name))
    changes = _would_change(doc, prune)
    target = _target_revision(body, doc)
    # What the person approves includes the lines that change: live -> desired, per resource.
    # Argo CD's desired state is its current target's, so a sync to another revision shows
    # the resources only.
    collector = DiffCollector()
    if not body.get("revision"):
        for item, live, desired in (await live_states(client, name, project)).values():
            collector.add(item, live, desired)
    diff = {k: v for k, v in collector.summary().items() if k != "resources"}
    answer: dict[str, Any] = {
        "application": name, "dry_run": True, "accepted": True, "prune": prune,
        "revision": target, "changes": len(changes), "resources": changes[:MAX_LISTED],
        **diff,
        "evidence": evidence_fingerprint(name, target, prune,
                                         [*changes, {"diff": collector.digest}]),
    }
    answer["next"] = ("Nothing was changed. " + _APPROVAL_HINT) if changes else \
        "Nothing was changed; the application is already in sync."
    return answer


async def sync_application(client: ArgoCDClient, name: str, *, dry_run: bool = True,
                           approved: bool = False, prune: bool = False,
                           revision: str | None = None, project: str | None = None,
                           expected_evidence: str | None = None) -> dict[str, Any]:
    """Dry-run or (approved, evidence unchanged) real sync of one application."""
    name = app_name(name)
    if dry_run:
        return await _dry_run(client, name, prune, revision, project)
    expected = (expected_evidence or "").strip()
    if not approved or not expected:
        raise ApprovalRequired(f"Syncing '{name}' changes the cluster and needs approval.",
                               hint=_APPROVAL_HINT)
    # The approval covered one dry run; check that it still describes what would happen.
    now = await _dry_run(client, name, prune, revision, project)
    if now["evidence"] != expected:
        now.pop("next")
        raise EvidenceChanged(f"Nothing was synced: what a sync of '{name}' would change is no "
                              "longer what was approved.", hint=_CHANGED_HINT,
                              details={"dry_run": now})
    body = _body(name, False, prune, revision, project)
    doc = await client.post(f"/api/v1/applications/{name}/sync", body,
                            subject=AppSubject(name))
    state = (doc.get("status") or {}).get("operationState") or {}
    return {
        "application": name, "dry_run": False, "accepted": True, "prune": prune,
        "revision": now["revision"], "changes": now["changes"], "resources": now["resources"],
        "evidence": now["evidence"],
        "operation": {"phase": state.get("phase", "Running"), "started": state.get("startedAt")},
        "next": "Sync started. Check progress with get_application (include_operation=true).",
    }
