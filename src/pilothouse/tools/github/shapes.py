"""Minimal shapes: what a person needs from a GitHub object, in well under 1.5 KB.

A pull request list item from GitHub is ~18 KB (the author, every reviewer and two full copies
of the repository, all URL templates); its summary here is ~0.5 KB. The projections run inside
the streaming parser, so the 18 KB objects never accumulate. Long strings and lists are capped
so that no single item can grow past the budget, whatever GitHub sends.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MAX_TITLE = 160
MAX_NAMES = 8
MAX_BODY = 1200


def _trim(text: Any, limit: int) -> str:
    text = str(text or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _login(user: Any) -> str | None:
    return str(user.get("login")) if isinstance(user, dict) and user.get("login") else None


def _names(values: Iterable[Any], key: str = "name", limit: int = MAX_NAMES) -> list[str]:
    names = [_trim(v.get(key) if isinstance(v, dict) else v, 50) for v in values or ()]
    names = [n for n in names if n]
    return names[:limit] + ([f"+{len(names) - limit} more"] if len(names) > limit else [])


def _pull_state(doc: dict[str, Any]) -> str:
    merged = doc.get("merged_at") or (doc.get("pull_request") or {}).get("merged_at")
    return "merged" if merged else str(doc.get("state"))


def pull_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """A pull request (list item or single) as a ~0.5 KB row."""
    reviewers = _names(doc.get("requested_reviewers") or (), "login")
    teams = ["team:" + slug for slug in _names(doc.get("requested_teams") or (), "slug")]
    return {
        "number": doc.get("number"), "title": _trim(doc.get("title"), MAX_TITLE),
        "state": _pull_state(doc), "draft": bool(doc.get("draft")),
        "author": _login(doc.get("user")),
        "head": (doc.get("head") or {}).get("ref"), "base": (doc.get("base") or {}).get("ref"),
        "labels": _names(doc.get("labels") or ()),
        "requested_reviewers": (reviewers + teams)[:MAX_NAMES],
        "created_at": doc.get("created_at"), "updated_at": doc.get("updated_at"),
        "html_url": doc.get("html_url"),
    }


def pull_details(doc: dict[str, Any]) -> dict[str, Any]:
    """A single pull request: the summary plus merge state, sizes and a trimmed body."""
    details = pull_summary(doc)
    details.update({
        "body": _trim(doc.get("body"), MAX_BODY), "merged": bool(doc.get("merged")),
        "mergeable": doc.get("mergeable"), "mergeable_state": doc.get("mergeable_state"),
        "merged_by": _login(doc.get("merged_by")), "commits": doc.get("commits"),
        "comments": doc.get("comments"), "review_comments": doc.get("review_comments"),
        "additions": doc.get("additions"), "deletions": doc.get("deletions"),
        "changed_files": doc.get("changed_files"),
    })
    return details


def issue_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """An issue, or a pull request as the issues and search endpoints list it."""
    is_pull = "pull_request" in doc
    row: dict[str, Any] = {
        "number": doc.get("number"), "type": "pull_request" if is_pull else "issue",
        "title": _trim(doc.get("title"), MAX_TITLE),
        "state": _pull_state(doc) if is_pull else doc.get("state"),
        "author": _login(doc.get("user")), "labels": _names(doc.get("labels") or ()),
        "assignees": _names(doc.get("assignees") or (), "login", 5),
        "comments": doc.get("comments"), "created_at": doc.get("created_at"),
        "updated_at": doc.get("updated_at"), "html_url": doc.get("html_url"),
    }
    if is_pull:
        row["draft"] = bool(doc.get("draft"))
    repository = str(doc.get("repository_url") or "")
    if "/repos/" in repository:  # search spans repositories: say which one
        row["repo"] = repository.split("/repos/", 1)[1]
    return row


def run_summary(doc: dict[str, Any]) -> dict[str, Any]:
    """A workflow run (~13 KB from GitHub) as a ~0.4 KB row."""
    return {
        "id": doc.get("id"), "workflow": doc.get("name"), "run_number": doc.get("run_number"),
        "title": _trim(doc.get("display_title"), 120), "event": doc.get("event"),
        "status": doc.get("status"), "conclusion": doc.get("conclusion"),
        "branch": doc.get("head_branch"), "sha": str(doc.get("head_sha") or "")[:7],
        "actor": _login(doc.get("actor")),
        "pull_requests": [p.get("number") for p in doc.get("pull_requests") or ()][:5],
        "created_at": doc.get("created_at"), "html_url": doc.get("html_url"),
    }


def file_row(doc: dict[str, Any]) -> dict[str, Any]:
    """A changed file without its patch (which can be megabytes)."""
    return {"path": _trim(doc.get("filename"), 300), "status": doc.get("status"),
            "additions": doc.get("additions"), "deletions": doc.get("deletions")}


def review_row(doc: dict[str, Any]) -> dict[str, Any]:
    return {"reviewer": _login(doc.get("user")), "state": doc.get("state"),
            "submitted_at": doc.get("submitted_at")}


def review_decision(reviews: list[dict[str, Any]]) -> str:
    """GitHub's decision with one required approval, from reviews in submission order.

    Each reviewer's latest approval or change request counts (comments never decide, a
    dismissal clears); branch protection itself is not visible to this token.
    """
    verdicts: dict[str | None, str] = {}
    for review in reviews:
        state = review.get("state")
        if state in ("APPROVED", "CHANGES_REQUESTED"):
            verdicts[review.get("reviewer")] = state
        elif state == "DISMISSED":
            verdicts.pop(review.get("reviewer"), None)
    if "CHANGES_REQUESTED" in verdicts.values():
        return "changes_requested"
    if "APPROVED" in verdicts.values():
        return "approved"
    return "review_required"
