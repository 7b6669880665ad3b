"""What changed before an application's trouble: its deploys and events, in time order.

The Argo CD half of "what changed before orders-api went Degraded?". Each line names its
evidence: a deploy's history id and revision SHA (with the commit's author and message), an
event's reason and object. The answer also gives the GitHub repository and the SHAs to compare
(previous deploy -> current), so the GitHub agent can fetch the commits and pull requests behind
them: the two tool servers stay independent, the supervisor joins their answers. Bounded: the
newest `limit` lines, with a count of the older ones left out.
"""

from __future__ import annotations

from typing import Any

from pilothouse.errors import UserInputError
from pilothouse.tools.argocd import history
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import _trim, app_name
from pilothouse.tools.argocd.errors import AppSubject

MAX_LINES = 50
MAX_COMMITS = 10


async def application_changes(client: ArgoCDClient, name: str, *, limit: int = 20,
                              project: str | None = None) -> dict[str, Any]:
    """Deploys and warning events of `name`, oldest first, the newest `limit` of them."""
    name = app_name(name)
    if limit < 1:
        raise UserInputError("limit must be 1 or more.")
    limit = min(limit, MAX_LINES)
    doc = await history.load(client, name, project)
    spec, status = doc.get("spec") or {}, doc.get("status") or {}
    source = spec.get("source") or (spec.get("sources") or [{}])[0]
    entries = list(status.get("history") or [])
    lines: list[dict[str, Any]] = []
    git = history.is_git(source)
    for k, entry in enumerate(entries):
        row = history.entry_row(entry, entries[-1].get("id"))
        line: dict[str, Any] = {"at": row["deployed_at"], "what": "deploy", "id": row["id"],
                                "revision": row["revision"], "by": row["initiated_by"]}
        if git and k >= len(entries) - MAX_COMMITS:
            commit = await history.commit_of(client, name, row["revision"], project)
            if commit:
                line["commit"] = commit
        lines.append(line)
    warnings = 0

    def take(event: dict[str, Any]) -> None:
        nonlocal warnings
        if (event.get("type") or "Normal") != "Warning":
            return
        warnings += 1
        target = event.get("involvedObject") or {}
        lines.append({"at": event.get("firstTimestamp") or event.get("lastTimestamp"),
                      "what": "event", "reason": event.get("reason"),
                      "object": f"{target.get('kind')}/{target.get('name')}",
                      "message": _trim(event.get("message"), 200),
                      "count": event.get("count", 1), "last_seen": event.get("lastTimestamp")})
        if len(lines) > 4 * MAX_LINES:  # keep the newest; the stream is bounded, the list too
            lines.sort(key=lambda item: str(item.get("at") or ""))
            del lines[:len(lines) - 2 * MAX_LINES]

    await client.scan(f"/api/v1/applications/{name}/events", take,
                      params={"project": project} if project else None,
                      subject=AppSubject(name))
    lines.sort(key=lambda item: str(item.get("at") or ""))
    kept = lines[-limit:]
    answer: dict[str, Any] = {
        "application": name, "health": (status.get("health") or {}).get("status"),
        "sync": (status.get("sync") or {}).get("status"), "repo": source.get("repoURL"),
        "deploys": len(entries), "warning_events": warnings, "timeline": kept,
        "lines": [_render(item) for item in kept]}
    if len(lines) > len(kept):
        answer["omitted_older"] = len(lines) - len(kept)
    repo = history.github_repo(str(source.get("repoURL") or ""))
    if git and repo and len(entries) >= 2:
        answer["github"] = {"repo": repo, "base": entries[-2].get("revision"),
                            "head": entries[-1].get("revision"),
                            "next": "compare_commits on the GitHub agent lists the commits and "
                                    "pull requests between base and head."}
    return answer


def _render(item: dict[str, Any]) -> str:
    """One timeline line, with its evidence (SHA and deploy id, or event reason)."""
    if item["what"] == "deploy":
        revision = str(item.get("revision") or "")
        short = revision[:7] if len(revision) >= 40 else revision
        commit = item.get("commit") or {}
        text = f"{item['at']} deploy {item['id']} of {short} by {item['by']}"
        if commit.get("message"):
            text += f": {commit['message']} (author {commit.get('author')})"
        return text
    count = f" (x{item['count']})" if item.get("count", 1) > 1 else ""
    return f"{item['at']} {item['reason']} on {item['object']}{count}: {item['message']}"
