"""Filter and sort like GitHub: the list endpoints' parameters and the issue search syntax.

Search understands the qualifiers people use for review queues and triage (`repo:`, `is:`,
`state:`, `label:`, `-label:`, `review:`, `review-requested:`, `reviewed-by:`, `author:`,
`assignee:`, `draft:`, `base:`, `head:`, `in:`) plus free text, which must all occur in the
title or body. An unknown qualifier is searched as text, as GitHub does.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pilothouse.sandbox.github.records import Issue, Pull, Repo, Run

Entry = tuple[Repo, Pull | Issue]
RUN_STATUSES = frozenset({"queued", "in_progress", "completed", "requested", "waiting",
                          "pending", "action_required"})
RUN_CONCLUSIONS = frozenset({"success", "failure", "cancelled", "skipped", "neutral", "stale",
                             "timed_out"})


class QueryError(ValueError):
    """A parameter GitHub would reject with 422; `field` names it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def _choice(params: Mapping[str, str], name: str, allowed: tuple[str, ...],
            default: str) -> str:
    value = params.get(name) or default
    if value not in allowed:
        raise QueryError(f"{name} must be one of {', '.join(allowed)}", name)
    return value


def _direction(params: Mapping[str, str], sort: str, desc_sorts: tuple[str, ...]) -> bool:
    """True for descending; GitHub's default depends on the sort."""
    default = "desc" if sort in desc_sorts else "asc"
    return _choice(params, "direction", ("asc", "desc"), default) == "desc"


def list_pulls(repo: Repo, params: Mapping[str, str]) -> list[Pull]:
    """`GET /repos/{o}/{r}/pulls`: state, head, base, sort and direction."""
    state = _choice(params, "state", ("open", "closed", "all"), "open")
    sort = _choice(params, "sort", ("created", "updated", "popularity", "long-running"),
                   "created")
    descending = _direction(params, sort, ("created",))
    head, base = params.get("head"), params.get("base")
    head_owner, _, head_ref = (head or "").rpartition(":")
    keys: dict[str, Callable[[Pull], Any]] = {
        "created": lambda p: (p.created_at, p.number),
        "updated": lambda p: (p.updated_at, p.number),
        "popularity": lambda p: (p.comments, p.number),
        # Long-running: open the longest while still seeing activity.
        "long-running": lambda p: (p.updated_at - p.created_at, p.number),
    }
    found = [p for p in repo.pulls
             if (state == "all" or p.state == state)
             and (not head or (p.head_ref == head_ref
                               and (not head_owner or head_owner.lower() == repo.owner.lower())))
             and (not base or p.base_ref == base)]
    return sorted(found, key=keys[sort], reverse=descending)


def list_issues(repo: Repo, params: Mapping[str, str]) -> list[Entry]:
    """`GET /repos/{o}/{r}/issues`: issues and pull requests, as GitHub lists them."""
    state = _choice(params, "state", ("open", "closed", "all"), "open")
    sort = _choice(params, "sort", ("created", "updated", "comments"), "created")
    descending = _direction(params, sort, ("created", "updated", "comments"))
    labels = {x.strip() for x in (params.get("labels") or "").split(",") if x.strip()}
    creator, assignee = params.get("creator"), params.get("assignee")
    since = _since(params.get("since"))
    entries: list[Entry] = [(repo, p) for p in repo.pulls] + [(repo, i) for i in repo.issues]

    def keep(item: Pull | Issue) -> bool:
        assignees = item.assignees if isinstance(item, Issue) else ()
        return ((state == "all" or item.state == state) and labels <= set(item.labels)
                and (not creator or item.author == creator)
                and (not assignee or (assignee == "none" and not assignees)
                     or (assignee == "*" and bool(assignees)) or assignee in assignees)
                and item.updated_at >= since)

    key = {"created": lambda e: e[1].created_at, "updated": lambda e: e[1].updated_at,
           "comments": lambda e: e[1].comments}[sort]
    found = [e for e in entries if keep(e[1])]
    return sorted(found, key=lambda e: (key(e), e[1].number), reverse=descending)


def _since(value: str | None) -> int:
    if not value:
        return 0
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        raise QueryError("since must be an ISO 8601 timestamp", "since") from None


def list_runs(repo: Repo, params: Mapping[str, str]) -> list[Run]:
    """`GET /repos/{o}/{r}/actions/runs`: newest first; `status` also matches conclusions."""
    status, branch = params.get("status"), params.get("branch")
    event, actor = params.get("event"), params.get("actor")
    if status and status not in RUN_STATUSES | RUN_CONCLUSIONS:
        raise QueryError("status is not a workflow run status or conclusion", "status")
    found = [r for r in repo.runs
             if (not status or r.status == status or r.conclusion == status)
             and (not branch or r.head_branch == branch) and (not event or r.event == event)
             and (not actor or r.actor == actor)]
    return sorted(found, key=lambda r: r.id, reverse=True)


# -- search -------------------------------------------------------------------------------
def _terms(q: str) -> list[str]:
    try:
        return shlex.split(q)
    except ValueError:  # an unbalanced quote: GitHub searches the words anyway
        return q.replace('"', " ").split()


def search(repos: Mapping[str, Repo], owner: str, q: str,
           sort: str | None, order: str | None) -> list[Entry]:
    """`GET /search/issues`: every match, sorted; the caller pages and caps."""
    if not q.strip():
        raise QueryError("q is missing", "q")
    tests: list[Callable[[Repo, Pull | Issue], bool]] = []
    scope: set[str] | None = None
    words: list[str] = []
    text_fields: tuple[str, ...] = ("title", "body")
    for term in _terms(q):
        negate = term.startswith("-") and ":" in term
        name_part, sep, value = (term.lstrip("-") if negate else term).partition(":")
        key, value = name_part.lower(), value.strip()
        if not sep or not value:
            words.append(term.lower())
            continue
        if key == "repo":
            repo_owner, _, name = value.partition("/")
            if repo_owner.lower() != owner.lower() or name.lower() not in repos:
                raise QueryError("The listed users and repositories cannot be searched either "
                                 "because the resources do not exist or you do not have "
                                 "permission to view them.", "q")
            scope = (scope or set()) | {name.lower()}
        elif key in ("org", "user", "owner"):
            if value.lower() != owner.lower():
                raise QueryError("The listed users and repositories cannot be searched either "
                                 "because the resources do not exist or you do not have "
                                 "permission to view them.", "q")
        elif key == "in":
            text_fields = tuple(f for f in ("title", "body") if f in value.lower().split(","))
        else:
            check = _qualifier(key, value.lower(), value)
            if check is None:
                words.append(term.lower())
            else:
                tests.append((lambda c: lambda r, i: not c(r, i))(check) if negate else check)

    def matches(repo: Repo, item: Pull | Issue) -> bool:
        text = " ".join(getattr(item, f) for f in text_fields).lower()
        return all(w in text for w in words) and all(t(repo, item) for t in tests)

    found: list[Entry] = []
    for name, repo in repos.items():
        if scope is None or name in scope:
            items: list[Pull | Issue] = [*repo.pulls, *repo.issues]
            found.extend((repo, item) for item in items if matches(repo, item))
    order_key: Callable[[Entry], Any] = {
        "created": lambda e: e[1].created_at, "updated": lambda e: e[1].updated_at,
        "comments": lambda e: e[1].comments,
    }.get(sort or "", lambda e: e[1].created_at)  # "best match": newest first
    return sorted(found, key=lambda e: (order_key(e), e[0].id, e[1].number),
                  reverse=(order or "desc") != "asc")


def _qualifier(key: str, value: str, raw: str) -> Callable[[Repo, Pull | Issue], bool] | None:
    def is_pull(item: Pull | Issue) -> bool:
        return isinstance(item, Pull)

    def pull_only(test: Callable[[Pull], bool]) -> Callable[[Repo, Pull | Issue], bool]:
        return lambda _, i: isinstance(i, Pull) and test(i)

    if key in ("is", "type"):
        return {
            "pr": lambda _, i: is_pull(i), "pull-request": lambda _, i: is_pull(i),
            "issue": lambda _, i: not is_pull(i),
            "open": lambda _, i: i.state == "open", "closed": lambda _, i: i.state == "closed",
            "merged": pull_only(lambda p: p.merged),
            "unmerged": pull_only(lambda p: p.state == "closed" and not p.merged),
            "draft": pull_only(lambda p: p.draft),
        }.get(value)
    if key == "state" and value in ("open", "closed"):
        return lambda _, i: i.state == value
    if key == "draft" and value in ("true", "false"):
        return pull_only(lambda p: p.draft == (value == "true"))
    if key == "label":
        wanted = {x.strip().lower() for x in value.split(",") if x.strip()}
        return lambda _, i: bool(wanted & {label.lower() for label in i.labels})
    if key == "review":
        decision = {"required": "REVIEW_REQUIRED", "approved": "APPROVED",
                    "changes_requested": "CHANGES_REQUESTED"}.get(value)
        if value == "none":
            return pull_only(lambda p: not p.reviews)
        return None if decision is None else pull_only(lambda p: p.review_decision == decision)
    if key == "review-requested":
        return pull_only(lambda p: raw in p.requested_reviewers)
    if key == "reviewed-by":
        return pull_only(lambda p: any(r.reviewer == raw for r in p.reviews))
    if key == "author":
        return lambda _, i: i.author.lower() == value
    if key == "assignee":
        return lambda _, i: isinstance(i, Issue) and raw in i.assignees
    if key == "base":
        return pull_only(lambda p: p.base_ref == raw)
    if key == "head":
        return pull_only(lambda p: p.head_ref == raw)
    return None
