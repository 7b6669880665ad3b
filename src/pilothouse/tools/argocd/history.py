"""An application's deploy history, newest first, paged, with the commit behind each revision.

Argo CD keeps the history in `status.history` (the last 10 deploys by default): id, revision,
when and by whom. For a page of Git revisions the commit's author and message come from
`/revisions/{revision}/metadata`, at most `MAX_WITH_COMMITS` lookups per answer. The SHAs and
the repository are returned as they are, so a GitHub tool can follow them (the two tool
servers stay independent; the agents join them).
"""

from __future__ import annotations

from typing import Any

from pilothouse.errors import UpstreamError, UserInputError
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.details import app_name
from pilothouse.tools.argocd.errors import AppSubject
from pilothouse.tools.argocd.paging import pagination

MAX_HISTORY_PAGE = 50
MAX_WITH_COMMITS = 20


def _params(project: str | None) -> dict[str, str]:
    return {"project": project.strip()} if project and project.strip() else {}


def initiator(entry: dict[str, Any]) -> str:
    who = entry.get("initiatedBy") or {}
    return "auto-sync" if who.get("automated") else str(who.get("username") or "unknown")


def is_git(source: dict[str, Any]) -> bool:
    return bool(source.get("repoURL")) and not source.get("chart")


def github_repo(url: str) -> str | None:
    """`owner/name` of a GitHub repository URL, for the GitHub tools; None otherwise."""
    prefix = "https://github.com/"
    if not url.startswith(prefix):
        return None
    return url[len(prefix):].removesuffix(".git").strip("/") or None


async def load(client: ArgoCDClient, name: str, project: str | None) -> dict[str, Any]:
    return dict(await client.get(f"/api/v1/applications/{name}", _params(project),
                                 subject=AppSubject(name)))


async def commit_of(client: ArgoCDClient, name: str, revision: str,
                    project: str | None) -> dict[str, Any] | None:
    """Author, date and message of a Git revision, or None when Argo CD cannot tell."""
    try:
        meta = await client.get(f"/api/v1/applications/{name}/revisions/{revision}/metadata",
                                _params(project), subject=f"Revision {revision[:12]}")
    except (UpstreamError, UserInputError):
        return None
    message = str(meta.get("message") or "").strip()
    return {"author": str(meta.get("author") or "").split(" <")[0], "date": meta.get("date"),
            "message": message.splitlines()[0][:200] if message else ""}


def entry_row(entry: dict[str, Any], current_id: Any) -> dict[str, Any]:
    revision = str(entry.get("revision") or "")
    row = {"id": entry.get("id"), "revision": revision, "short": revision[:7] if len(revision)
           >= 40 else revision, "deployed_at": entry.get("deployedAt"),
           "initiated_by": initiator(entry)}
    if entry.get("id") == current_id:
        row["current"] = True
    return row


async def application_history(client: ArgoCDClient, name: str, *, page: int = 1,
                              page_size: int = 10, project: str | None = None,
                              with_commits: bool = True) -> dict[str, Any]:
    """Deploys newest first (paged), the running one marked, commits for Git revisions."""
    name = app_name(name)
    if page < 1 or page_size < 1:
        raise UserInputError("page and page_size must be 1 or more.")
    notes = []
    if page_size > MAX_HISTORY_PAGE:
        notes.append(f"page_size {page_size} was reduced to {MAX_HISTORY_PAGE}.")
        page_size = MAX_HISTORY_PAGE
    doc = await load(client, name, project)
    spec, status = doc.get("spec") or {}, doc.get("status") or {}
    source = spec.get("source") or (spec.get("sources") or [{}])[0]
    history = list(reversed(status.get("history") or []))
    current_id = history[0].get("id") if history else None
    rows = [entry_row(e, current_id) for e in history[(page - 1) * page_size:page * page_size]]
    if with_commits and is_git(source):
        for row in rows[:MAX_WITH_COMMITS]:
            commit = await commit_of(client, name, row["revision"], project)
            if commit:
                row["commit"] = commit
    answer: dict[str, Any] = {
        "application": name, "repo": source.get("repoURL"),
        "auto_sync": bool((spec.get("syncPolicy") or {}).get("automated")),
        "health": (status.get("health") or {}).get("status"),
        "sync": (status.get("sync") or {}).get("status"),
        "pagination": pagination(page, page_size, len(history)),
    }
    repo = github_repo(str(source.get("repoURL") or ""))
    if repo and is_git(source):
        answer["github_repo"] = repo
    if notes:
        answer["notes"] = notes
    answer["items"] = rows
    return answer
