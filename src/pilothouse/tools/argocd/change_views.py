"""How the change tools' answers read: deploy tables, diffs in ```diff blocks, plans, timelines.

Code renders the facts (`tools.views` for pages, tables and errors); the model carries these
views verbatim and adds a short lead. Diffs stay unified diffs so every interface can colour
them (`-` live, `+` desired).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pilothouse.tools.argocd.views import SYNC
from pilothouse.tools.views import number, page_header, render, table


def _failed(payload: Mapping[str, Any]) -> bool:
    return "error" in payload and "kind" in payload


def history_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    rows = []
    for item in payload.get("items") or []:
        commit = item.get("commit") or {}
        rows.append({"id": item.get("id"), "revision": item.get("short"),
                     "deployed": item.get("deployed_at"), "by": item.get("initiated_by"),
                     "commit": (f"{commit.get('message')} ({commit.get('author')})"
                                if commit else "-"),
                     "now": "current" if item.get("current") else ""})
    parts = [f"Deploy history of **{payload.get('application')}** "
             f"({payload.get('sync')}, {payload.get('health')}, auto-sync "
             f"{'on' if payload.get('auto_sync') else 'off'})",
             page_header(payload.get("pagination") or {}, "deploys")]
    if payload.get("github_repo"):
        # Where the revisions can be looked up: a SHA alone names no repository (measured: a
        # follow-up asked GitHub for a deployed commit in a repository named like the app).
        parts.append(f"Revisions are commits of {payload['github_repo']} on GitHub.")
    if rows:
        parts.append(table(rows, ("id", "revision", "deployed", "by", "commit", "now")))
    return "\n\n".join(p for p in parts if p)


def fenced_diff(diff: str) -> str:
    """`diff` in a ```diff block; the fence is longer than any run of backticks inside it, so
    a manifest that holds Markdown cannot close the block early."""
    longest = max((len(run) for run in re.findall(r"`+", diff)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}diff\n{diff}\n{fence}"


def capped_diff(payload: Mapping[str, Any], max_lines: int) -> str:
    """The diffs of a diff or rollback payload as one ```diff block of at most `max_lines`
    lines, then how many lines the block (and the payload) left out; "" without diffs."""
    lines = [line for row in payload.get("diffs") or []
             for line in str(row.get("diff") or "").splitlines()]
    if not lines:
        return ""
    omitted = payload.get("omitted")
    omitted = omitted if isinstance(omitted, Mapping) else {}
    # `omitted.lines` counts every line the payload left out, within a resource or not.
    left_out = max(0, len(lines) - max_lines) + int(omitted.get("lines") or 0)
    block = fenced_diff("\n".join(lines[:max_lines]))
    return block + (f"\n… {number(left_out)} more diff lines not shown." if left_out else "")


def _diffs(payload: Mapping[str, Any]) -> list[str]:
    parts = []
    for row in payload.get("diffs") or []:
        more = f" ({number(row['omitted_lines'])} more lines)" if row.get("omitted_lines") \
            else ""
        parts.append(f"**{row.get('resource')}** ({row.get('status')}){more}\n"
                     f"{fenced_diff(str(row.get('diff')))}")
    omitted = payload.get("omitted")
    if isinstance(omitted, Mapping):
        parts.append(f"Left out: {number(omitted.get('lines', 0))} diff lines, "
                     f"{number(omitted.get('resources', 0))} resources.")
    return parts


def sync_view(payload: Mapping[str, Any]) -> str:
    """A sync (dry run or started): its fields, then the diff it applies, resource by resource."""
    if _failed(payload):
        return render(payload)
    fields = {k: v for k, v in payload.items() if k not in ("diffs", "omitted", "differing")}
    return "\n\n".join([render(fields, SYNC), *_diffs(payload)])


def diff_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    head = (f"Diff of **{payload.get('application')}**: {number(payload.get('differing', 0))} "
            f"of {number(payload.get('resources', 0))} resources differ (- live, + desired).")
    return "\n\n".join([head, *_diffs(payload)])


def rollback_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    if payload.get("dry_run"):
        target, current = payload.get("target") or {}, payload.get("current") or {}
        commit = target.get("commit") or {}
        lines = [f"Rollback plan for **{payload.get('application')}** (dry run, nothing "
                 f"changed): from {current.get('short')} to deploy {target.get('id')} "
                 f"(revision {target.get('short')}, deployed {target.get('deployed_at')})."]
        if commit:
            lines.append(f"Target commit: {commit.get('message')} (author "
                         f"{commit.get('author')}, {commit.get('date')})")
        if payload.get("warning"):
            lines.append(f"**Auto-sync:** {payload['warning']}")
        lines.append("Plan: " + "; ".join(payload.get("plan") or []) + ".")
        lines.append(f"It would change {number(payload.get('differing', 0))} of "
                     f"{number(payload.get('resources', 0))} resources. Evidence "
                     f"{payload.get('evidence')}.")
        return "\n\n".join(["\n".join(lines), *_diffs(payload)])
    health = payload.get("health") or {}
    target = payload.get("rolled_back_to") or {}
    return (f"Rolled back **{payload.get('application')}** to deploy {target.get('id')} "
            f"(revision {target.get('short')}). Health: {health.get('health')}"
            f"{'' if health.get('settled') else ' (not settled yet)'} after "
            f"{health.get('waited_seconds')} s. {payload.get('next', '')}").strip()


def action_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    if not payload.get("dry_run"):
        health = payload.get("health") or {}
        return (f"Ran '{payload.get('action')}' on {payload.get('resource')} of "
                f"**{payload.get('application')}**. Health: {health.get('health')}"
                f"{'' if health.get('settled') else ' (not settled yet)'}, seen: "
                f"{' -> '.join(health.get('observed') or [])}.")
    offered = ", ".join(str(a.get("name")) for a in payload.get("offered") or []) or "none"
    live = ", ".join(f"{k} {v}" for k, v in (payload.get("live") or {}).items()) or "-"
    lines = [f"{payload.get('resource')} of **{payload.get('application')}**: actions offered: "
             f"{offered}. Live: {live}."]
    if payload.get("summary"):
        lines.append(f"{payload['summary']} Evidence {payload.get('evidence')}.")
    if payload.get("next"):
        lines.append(str(payload["next"]))
    return "\n\n".join(lines)


def changes_view(payload: Mapping[str, Any]) -> str:
    if _failed(payload):
        return render(payload)
    head = (f"What changed for **{payload.get('application')}** ({payload.get('sync')}, "
            f"{payload.get('health')}): {number(payload.get('deploys', 0))} deploys, "
            f"{number(payload.get('warning_events', 0))} warning events, oldest first.")
    body = "\n".join(f"- {line}" for line in payload.get("lines") or [])
    parts = [head, body]
    if payload.get("omitted_older"):
        parts.append(f"{number(payload['omitted_older'])} older lines left out.")
    github = payload.get("github")
    if isinstance(github, Mapping):
        parts.append(f"GitHub: {github.get('repo')} from {str(github.get('base'))[:7]} to "
                     f"{str(github.get('head'))[:7]}.")
    return "\n\n".join(p for p in parts if p)
