"""How each GitHub tool's answer is shown (`tools.views` renders; this names what matters).

Pull requests keep their number, title, author and state; workflow runs their conclusion: the
facts a review queue or a failing build is read by (the small model dropped or invented them
when it retyped JSON).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pilothouse.tools.views import ViewSpec, render

PULLS = ViewSpec("pull requests", ("number", "title", "author", "state", "draft",
                                   "requested_reviewers", "repo"))
ISSUES = ViewSpec("results", ("number", "type", "title", "author", "state", "labels", "repo"))
RUNS = ViewSpec("workflow runs", ("id", "workflow", "status", "conclusion", "branch", "sha",
                                  "actor", "pull_requests"))


def _pull_title(payload: Mapping[str, Any]) -> str:
    """`get_pull_request`'s header: the pull request's number, title, author and state, and
    the review decision (its answer nests them under `pull_request` and `reviews`)."""
    pull = payload.get("pull_request") or {}
    decision = (payload.get("reviews") or {}).get("decision")
    return (f"**#{pull.get('number')} {pull.get('title')}** by {pull.get('author')}: "
            f"{pull.get('state')}" + (f", review {decision}" if decision else ""))


def _logs_title(payload: Mapping[str, Any]) -> str:
    run = payload.get("run") or {}
    return (f"Logs of workflow run {run.get('id')} ({run.get('workflow')}): "
            f"{run.get('conclusion') or run.get('status')}")


PULL = ViewSpec(title=_pull_title)
RUN_LOGS = ViewSpec(title=_logs_title)


def _subject(payload: Mapping[str, Any]) -> str:
    if payload.get("repo"):
        return f" in {payload['repo']}"
    if payload.get("query"):
        return f" for '{payload['query']}'"
    return ""


def view(spec: ViewSpec) -> Any:
    """The `ToolRunner` view of `spec`: lists say which repository or query they show."""
    return lambda payload: render(payload, spec, _subject(payload))
