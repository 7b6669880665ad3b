"""Rolling an application back to an earlier deploy: a proven plan first, the rollback on approval.

The dry run names the target deploy (id, revision, its commit's author and message), the diff
the rollback would apply (live state -> the target revision's manifests, capped) and the plan.
Argo CD refuses to roll back an auto-synced app, and the next auto-sync would undo it anyway, so
then the plan disables auto-sync first and says so. The plan's evidence fingerprint covers the
target, every diff line and the auto-sync step (`sync.evidence_fingerprint`, the one mechanism
every gated Argo CD action shares); an approved rollback recomputes it just before running and
does nothing if it changed (a new deploy, drift), answering with the new plan instead. After
the rollback starts, the app's health is followed until it settles.
"""

from __future__ import annotations

from typing import Any

from pilothouse.errors import ApprovalRequired, UserInputError
from pilothouse.tools.argocd import history
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import app_name
from pilothouse.tools.argocd.diff import DiffCollector, live_states, parse_state, resource_key
from pilothouse.tools.argocd.errors import AppSubject
from pilothouse.tools.argocd.follow import follow_health
from pilothouse.tools.argocd.sync import EvidenceChanged, evidence_fingerprint

_APPROVAL_HINT = ("Run rollback_application with dry_run=true, show the user the plan and its "
                  "diff, and call again with dry_run=false and approved=true only after they "
                  "agree.")
_CHANGED_HINT = ("Show the user the new plan below and ask again; roll back only if they "
                 "approve what it would do now.")
AUTO_SYNC_WARNING = ("Auto-sync is on: Argo CD refuses a rollback while it is, and the next "
                     "auto-sync would redeploy the newer revision. The plan disables auto-sync "
                     "first; re-enable it once the fix is merged.")


def _target(entries: list[dict[str, Any]], history_id: int | None) -> dict[str, Any]:
    """The deploy to go back to: `history_id`, or the newest with another revision."""
    if not entries:
        raise UserInputError("This application has no deploy history to roll back to.")
    if history_id is not None:
        found = next((e for e in entries if e.get("id") == history_id), None)
        if found is None:
            ids = ", ".join(str(e.get("id")) for e in entries[-10:])
            raise UserInputError(f"No deploy with id {history_id} in the history.",
                                 hint=f"Pick one of: {ids} (see get_application_history).")
        return found
    current = entries[-1].get("revision")
    earlier = next((e for e in reversed(entries) if e.get("revision") != current), None)
    if earlier is None:
        raise UserInputError("Every deploy in the history has the current revision: there is "
                             "nothing earlier to roll back to.")
    return earlier


async def plan_rollback(client: ArgoCDClient, name: str, history_id: int | None, prune: bool,
                        project: str | None) -> dict[str, Any]:
    """The dry run: target, its commit, the diff it would apply, the steps, the evidence."""
    doc = await history.load(client, name, project)
    spec, status = doc.get("spec") or {}, doc.get("status") or {}
    entries = list(status.get("history") or [])
    target = _target(entries, history_id)
    revision = str(target.get("revision") or "")
    source = spec.get("source") or (spec.get("sources") or [{}])[0]
    commit = await history.commit_of(client, name, revision, project) \
        if history.is_git(source) else None
    params = {"revision": revision, **({"project": project} if project else {})}
    manifests = await client.get(f"/api/v1/applications/{name}/manifests", params,
                                 subject=f"Revision {revision[:12]} of '{name}'")
    desired = {}
    for raw in manifests.get("manifests") or []:
        manifest = parse_state(raw) or {}
        meta = manifest.get("metadata") or {}
        key = resource_key({"kind": manifest.get("kind"), "namespace": meta.get("namespace"),
                            "name": meta.get("name")})
        desired[key] = manifest
    live = await live_states(client, name, project)
    collector = DiffCollector()
    for key in sorted(set(desired) | set(live)):
        item = live[key][0] if key in live else {"kind": key.split("/")[0],
                                                 "name": key.rsplit("/", 1)[-1]}
        collector.add(item, live[key][1] if key in live else None, desired.get(key))
    auto_sync = bool((spec.get("syncPolicy") or {}).get("automated"))
    current = entries[-1]
    steps = (["disable auto-sync"] if auto_sync else []) + [
        f"roll back to deploy {target.get('id')} (revision {revision[:12]})",
        "follow the app's health until Healthy or Degraded"]
    evidence = evidence_fingerprint(
        name, f"{target.get('id')}:{revision}", prune,
        [{"diff": collector.digest, "differing": collector.differing},
         {"auto_sync": auto_sync}, {"current": current.get("revision")}])
    target_row = history.entry_row(target, None)
    if commit:
        target_row["commit"] = commit
    answer: dict[str, Any] = {
        "application": name, "dry_run": True, "prune": prune,
        "current": history.entry_row(current, current.get("id")), "target": target_row,
        "auto_sync": auto_sync, "plan": steps, **collector.summary(), "evidence": evidence,
    }
    if auto_sync:
        answer["warning"] = AUTO_SYNC_WARNING
    answer["summary"] = describe_plan(answer)
    return answer


def describe_plan(plan: dict[str, Any]) -> str:
    """The plan as a person reads it in an approval prompt."""
    target = plan["target"]
    commit = target.get("commit") or {}
    by = f" by {commit['author']}" if commit.get("author") else ""
    lines = [f"Roll back '{plan['application']}' from {plan['current']['short']} to deploy "
             f"{target['id']} (revision {target['short']}, deployed {target['deployed_at']})."]
    if commit.get("message"):
        lines.append(f"Target commit{by}: {commit['message']}")
    if plan.get("warning"):
        lines.append(plan["warning"])
    lines.append("Steps: " + "; ".join(plan["plan"]) + ".")
    lines.append(f"It would change {plan['differing']} of {plan['resources']} resources:")
    lines.extend(row["diff"] for row in plan["diffs"])
    omitted = plan.get("omitted")
    if omitted:
        lines.append(f"... {omitted['lines']} more diff lines in {omitted['resources']} more "
                     "resources not shown.")
    return "\n".join(lines)


async def rollback_application(client: ArgoCDClient, name: str, *,
                               history_id: int | None = None, dry_run: bool = True,
                               approved: bool = False, expected_evidence: str | None = None,
                               prune: bool = False, project: str | None = None,
                               follow_seconds: float = 60.0) -> dict[str, Any]:
    """Plan (dry run) or, approved and with the evidence unchanged, perform a rollback."""
    name = app_name(name)
    plan = await plan_rollback(client, name, history_id, prune, project)
    if dry_run:
        plan["next"] = "Nothing was changed. " + _APPROVAL_HINT
        return plan
    expected = (expected_evidence or "").strip()
    if not approved or not expected:
        raise ApprovalRequired(f"Rolling back '{name}' changes the cluster and needs approval.",
                               hint=_APPROVAL_HINT)
    if plan["evidence"] != expected:
        raise EvidenceChanged(f"Nothing was rolled back: the plan for '{name}' is no longer "
                              "what was approved.", hint=_CHANGED_HINT,
                              details={"dry_run": plan})
    target_id = plan["target"]["id"]
    if plan["auto_sync"]:
        await client.patch(f"/api/v1/applications/{name}", {
            "name": name, "patchType": "merge",
            "patch": '{"spec":{"syncPolicy":{"automated":null}}}'},
            subject=AppSubject(name))
    body: dict[str, Any] = {"name": name, "id": target_id, "dryRun": False, "prune": prune}
    if project:
        body["project"] = project
    await client.post(f"/api/v1/applications/{name}/rollback", body,
                      subject=AppSubject(name))
    health = await follow_health(client, name, project=project, limit_seconds=follow_seconds)
    return {
        "application": name, "dry_run": False, "rolled_back_to": plan["target"],
        "auto_sync_disabled": plan["auto_sync"], "evidence": plan["evidence"],
        "health": health,
        "next": ("Rolled back. Auto-sync is off: re-enable it after the fix is merged."
                 if plan["auto_sync"] else "Rolled back."),
    }
