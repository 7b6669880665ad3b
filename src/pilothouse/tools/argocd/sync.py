"""Syncing an application: a dry run first, a real sync only with a person's approval.

The tool is registered only when `ARGOCD_READ_ONLY=false`. Even then a real sync (dry_run=false)
is refused unless `approved=true`, which the agent runtime sets after a human approves; the
dry run tells the person what would change so the approval is informed.
"""

from __future__ import annotations

from typing import Any

from pilothouse.errors import ApprovalRequired
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import MAX_LISTED, app_name

_APPROVAL_HINT = (
    "Run sync_application with dry_run=true, show the user what would change, and call again "
    "with dry_run=false and approved=true only after they agree."
)


def _would_change(doc: dict[str, Any], prune: bool) -> list[dict[str, Any]]:
    """Resources a sync would touch: those not Synced (and, with prune, those to delete)."""
    changes = []
    for resource in (doc.get("status") or {}).get("resources") or []:
        pruned = bool(resource.get("requiresPruning"))
        if resource.get("status") != "Synced" and (prune or not pruned):
            changes.append({"kind": resource.get("kind"), "name": resource.get("name"),
                            "namespace": resource.get("namespace"),
                            "action": "delete" if pruned else "apply"})
    return changes


async def sync_application(client: ArgoCDClient, name: str, *, dry_run: bool = True,
                           approved: bool = False, prune: bool = False,
                           revision: str | None = None,
                           project: str | None = None) -> dict[str, Any]:
    """Dry-run or (approved) real sync of one application."""
    name = app_name(name)
    if not dry_run and not approved:
        raise ApprovalRequired(f"Syncing '{name}' changes the cluster and needs approval.",
                               hint=_APPROVAL_HINT)
    body: dict[str, Any] = {"name": name, "dryRun": dry_run, "prune": prune}
    if revision and revision.strip():
        body["revision"] = revision.strip()
    if project and project.strip():
        body["project"] = project.strip()
    doc = await client.post(f"/api/v1/applications/{name}/sync", body,
                            subject=f"Application '{name}'")
    changes = _would_change(doc, prune)
    state = (doc.get("status") or {}).get("operationState") or {}
    answer: dict[str, Any] = {
        "application": name, "dry_run": dry_run, "accepted": True, "prune": prune,
        "revision": body.get("revision") or (doc.get("status") or {}).get("sync", {})
        .get("revision"),
        "changes": len(changes), "resources": changes[:MAX_LISTED],
    }
    if dry_run:
        answer["next"] = ("Nothing was changed. " + _APPROVAL_HINT) if changes else \
            "Nothing was changed; the application is already in sync."
    else:
        answer["operation"] = {"phase": state.get("phase", "Running"),
                               "started": state.get("startedAt")}
        answer["next"] = ("Sync started. Check progress with get_application "
                          "(include_operation=true).")
    return answer
