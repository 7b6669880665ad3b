"""The GitHub sandbox's commit endpoints: list, get, the pulls behind a commit, compare.

Commits are the main line of squash merges (`commits.main_line`), so the SHAs the Argo CD
sandbox deploys resolve here, each to its pull request. As GitHub: `GET .../commits` is newest
first and paged by `Link`, `sha=` starts the walk at a commit, `path=` keeps commits touching
it; an unknown SHA is 422 "No commit found for SHA"; compare takes `base...head` and lists at
most 250 commits and 300 files.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pilothouse.sandbox.github.commits import Commit, MainLines
from pilothouse.sandbox.github.documents import Site, iso
from pilothouse.sandbox.github.protocol import DOCS, gh_error, json_response, page_of
from pilothouse.sandbox.github.records import Repo

MAX_COMPARE_COMMITS = 250
MAX_FILES = 300


def _email(login: str) -> str:
    return f"{login.split('[')[0]}@users.noreply.github.com"


def commit_document(site: Site, repo: Repo, commit: Commit, *, full: bool) -> dict[str, Any]:
    """A commit as GitHub lists it, or with `full` (stats and files) as a single GET has it."""
    api = f"{site.api}/repos/{repo.full_name}"
    html = f"{site.web}/{repo.full_name}/commit/{commit.sha}"
    person = {"name": commit.author, "email": _email(commit.author), "date": iso(commit.date)}
    doc: dict[str, Any] = {
        "sha": commit.sha, "node_id": f"C_kwDOJ{commit.sha[:20]}",
        "commit": {"author": person,
                   "committer": {"name": "GitHub", "email": "noreply@github.com",
                                 "date": iso(commit.date)},
                   "message": commit.message,
                   "tree": {"sha": commit.sha[::-1], "url": f"{api}/git/trees/{commit.sha[::-1]}"},
                   "url": f"{api}/git/commits/{commit.sha}", "comment_count": 0,
                   "verification": {"verified": True, "reason": "valid", "signature": None,
                                    "payload": None, "verified_at": iso(commit.date)}},
        "url": f"{api}/commits/{commit.sha}", "html_url": html,
        "comments_url": f"{api}/commits/{commit.sha}/comments",
        "author": site.user(commit.author), "committer": site.user("web-flow"),
        "parents": [{"sha": commit.parent, "url": f"{api}/commits/{commit.parent}",
                     "html_url": f"{site.web}/{repo.full_name}/commit/{commit.parent}"}]
        if commit.parent else [],
    }
    if full:
        additions = sum(f.additions for f in commit.files)
        deletions = sum(f.deletions for f in commit.files)
        doc["stats"] = {"total": additions + deletions, "additions": additions,
                        "deletions": deletions}
        doc["files"] = [_file(site, repo, commit.sha, f) for f in commit.files[:MAX_FILES]]
    return doc


def _file(site: Site, repo: Repo, sha: str, change: Any) -> dict[str, Any]:
    return {"sha": sha[::-1][:40], "filename": change.path, "status": change.status,
            "additions": change.additions, "deletions": change.deletions,
            "changes": change.additions + change.deletions,
            "blob_url": f"{site.web}/{repo.full_name}/blob/{sha}/{change.path}",
            "raw_url": f"{site.web}/{repo.full_name}/raw/{sha}/{change.path}",
            "contents_url": f"{site.api}/repos/{repo.full_name}/contents/{change.path}"
                            f"?ref={sha}",
            "patch": "@@ -1,3 +1,3 @@\n" + "-  old: value\n" * min(change.deletions, 5)
                     + "+  new: value\n" * min(change.additions, 5)}


class CommitHandlers:
    """Handlers over one world's main lines (the caller resolves the repository)."""

    def __init__(self, lines: MainLines) -> None:
        self.lines = lines

    def _at(self, repo: Repo, ref: str) -> int | None:
        line = self.lines.of(repo)
        if ref in ("main", "HEAD"):
            return len(line) - 1 if line else None
        return self.lines.position(repo, ref)

    def list_commits(self, request: Request, site: Site, repo: Repo) -> Response:
        query = request.query_params
        line = self.lines.of(repo)
        start = self._at(repo, query["sha"]) if query.get("sha") else len(line) - 1
        if start is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits#list-commits")
        chosen = list(reversed(line[:start + 1]))
        path = query.get("path")
        if path:
            chosen = [c for c in chosen if any(f.path.startswith(path) for f in c.files)]
        for bound, keep in (("since", lambda c, t: iso(c.date) >= t),
                            ("until", lambda c, t: iso(c.date) <= t)):
            if query.get(bound):
                chosen = [c for c in chosen if keep(c, query[bound])]
        chunk, headers = page_of(request, chosen, f"/repositories/{repo.id}/commits")
        return json_response([commit_document(site, repo, c, full=False) for c in chunk],
                             headers=headers)

    def get_commit(self, site: Site, repo: Repo, ref: str) -> Response:
        at = self._at(repo, ref)
        if at is None:
            return gh_error(422, f"No commit found for SHA: {ref}",
                            f"{DOCS}/commits/commits#get-a-commit")
        return json_response(commit_document(site, repo, self.lines.of(repo)[at], full=True))

    def commit_pulls(self, site: Site, repo: Repo, ref: str) -> Response:
        at = self._at(repo, ref)
        if at is None:
            return json_response([])
        pull = repo.pull(self.lines.of(repo)[at].pull)
        return json_response([site.pull(repo, pull)] if pull else [])

    def compare(self, site: Site, repo: Repo, basehead: str) -> Response:
        base_ref, sep, head_ref = basehead.partition("...")
        base = self._at(repo, base_ref) if sep else None
        head = self._at(repo, head_ref) if sep else None
        if base is None or head is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits#compare-two-commits")
        line = self.lines.of(repo)
        ahead = line[base + 1:head + 1] if head > base else ()
        behind = base - head if base > head else 0
        status = "identical" if base == head else "ahead" if head > base else "behind"
        files: dict[str, Any] = {}
        for commit in ahead:
            for change in commit.files:
                files.setdefault(change.path, (commit.sha, change))
        api = f"{site.api}/repos/{repo.full_name}"
        return json_response({
            "url": f"{api}/compare/{basehead}",
            "html_url": f"{site.web}/{repo.full_name}/compare/{basehead}",
            "permalink_url": f"{site.web}/{repo.full_name}/compare/{basehead}",
            "diff_url": f"{site.web}/{repo.full_name}/compare/{basehead}.diff",
            "patch_url": f"{site.web}/{repo.full_name}/compare/{basehead}.patch",
            "base_commit": commit_document(site, repo, line[base], full=False),
            "merge_base_commit": commit_document(site, repo, line[min(base, head)],
                                                 full=False),
            "status": status, "ahead_by": len(ahead), "behind_by": behind,
            "total_commits": len(ahead),
            "commits": [commit_document(site, repo, c, full=False)
                        for c in ahead[:MAX_COMPARE_COMMITS]],
            "files": [_file(site, repo, sha, change)
                      for sha, change in list(files.values())[:MAX_FILES]],
        })
