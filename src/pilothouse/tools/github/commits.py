"""Commits and comparisons: the GitHub half of "what changed" behind a deploy's revision.

The Argo CD tools return the SHAs an application deployed; these tools say what they are: a
commit's message, author, date, files and the pull request it came from
(`GET .../commits/{sha}/pulls`), and what lies between two deployed revisions
(`GET .../compare/{base}...{head}`): the commits, each with its pull request number, and the
files. Both answers are capped with counts of what was left out.
"""

from __future__ import annotations

import re
from typing import Any

from pilothouse.errors import UserInputError
from pilothouse.tools.github.client import GitHubClient
from pilothouse.tools.github.operations import repo_path

_SHA = re.compile(r"^[0-9a-fA-F]{7,40}$")
_PULL_REF = re.compile(r"\(#(\d+)\)\s*$")
MAX_COMMITS = 30
MAX_FILES = 20


def _sha(value: str, name: str = "sha") -> str:
    value = (value or "").strip()
    if not _SHA.match(value):
        raise UserInputError(f"{name}={value!r} is not a commit SHA.",
                             hint="Pass 7 to 40 hex characters, e.g. a revision from "
                                  "get_application_history.")
    return value.lower()


def _commit_row(doc: dict[str, Any]) -> dict[str, Any]:
    commit = doc.get("commit") or {}
    message = str(commit.get("message") or "").strip()
    first = message.splitlines()[0][:200] if message else ""
    row: dict[str, Any] = {"sha": doc.get("sha"), "short": str(doc.get("sha") or "")[:7],
                           "message": first,
                           "author": (doc.get("author") or {}).get("login")
                           or (commit.get("author") or {}).get("name"),
                           "date": (commit.get("author") or {}).get("date")}
    pull = _PULL_REF.search(first)
    if pull:
        row["pull_request"] = int(pull.group(1))
    return row


def _files(files: list[dict[str, Any]]) -> dict[str, Any]:
    shown = [{"path": f.get("filename"), "status": f.get("status"),
              "additions": f.get("additions"), "deletions": f.get("deletions")}
             for f in files[:MAX_FILES]]
    answer: dict[str, Any] = {"count": len(files), "items": shown}
    if len(files) > len(shown):
        answer["omitted"] = len(files) - len(shown)
    return answer


async def get_commit(client: GitHubClient, owner: str, repo: str, sha: str) -> dict[str, Any]:
    """One commit: message, author, date, the pull request it merged and its files."""
    path = repo_path(owner, repo)
    sha = _sha(sha)
    subject = f"Commit {sha[:12]} in {path.removeprefix('/repos/')}"
    doc = await client.get_json(f"{path}/commits/{sha}", subject=subject)
    answer = {"repo": path.removeprefix("/repos/"), **_commit_row(doc),
              "stats": doc.get("stats") or {}, "files": _files(doc.get("files") or [])}
    pulls = await client.get_json(f"{path}/commits/{sha}/pulls", subject=subject)
    if isinstance(pulls, list) and pulls:
        pull = pulls[0]
        answer["pull_request"] = {"number": pull.get("number"), "title": pull.get("title"),
                                  "author": (pull.get("user") or {}).get("login"),
                                  "merged_at": pull.get("merged_at"),
                                  "url": pull.get("html_url")}
    return answer


async def compare_commits(client: GitHubClient, owner: str, repo: str, base: str,
                          head: str) -> dict[str, Any]:
    """What `head` has that `base` has not: the commits (oldest first) and files, capped."""
    path = repo_path(owner, repo)
    base, head = _sha(base, "base"), _sha(head, "head")
    doc = await client.get_json(f"{path}/compare/{base}...{head}",
                                subject=f"Comparison {base[:7]}...{head[:7]}")
    commits = [_commit_row(c) for c in doc.get("commits") or []]
    total = int(doc.get("total_commits") or len(commits))
    shown = commits[-MAX_COMMITS:]  # the newest, nearest the deploy in question
    answer: dict[str, Any] = {
        "repo": path.removeprefix("/repos/"), "base": base[:7], "head": head[:7],
        "status": doc.get("status"), "ahead_by": doc.get("ahead_by"),
        "behind_by": doc.get("behind_by"), "total_commits": total,
        "pull_requests": sorted({c["pull_request"] for c in commits if "pull_request" in c}),
        "files": _files(doc.get("files") or []), "commits": shown}
    if total > len(shown):
        answer["omitted_commits"] = total - len(shown)
    return answer
