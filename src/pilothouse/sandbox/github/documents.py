"""Render records as GitHub REST documents: the same keys, order and nesting as the real API.

A pull request list item is ~18 KB, like GitHub's (`reference/github/`): the author, each
requested reviewer and both `head` and `base` (each with a full repository and its owner) are
complete objects full of URL templates. API URLs point at the serving sandbox, web URLs at
github.com, as GitHub Enterprise points both at its own host.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pilothouse.sandbox.github import vocabulary as v
from pilothouse.sandbox.github.records import Issue, Pull, Repo, Review, Run

WEB = "https://github.com"


def iso(moment: int | None) -> str | None:
    """Epoch seconds as GitHub writes times (`2026-08-22T07:58:19Z`)."""
    if moment is None:
        return None
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node(prefix: str, number: int) -> str:
    return prefix + base64.b64encode(number.to_bytes(8, "big")).decode().rstrip("=")


@dataclass(frozen=True)
class Site:
    """Where documents point: the API root of the serving sandbox and the web root."""

    api: str
    web: str = WEB
    #: The world's names: accounts, labels, the organisation.
    words: v.Words = v.DEFAULT_WORDS

    def user(self, login: str) -> dict[str, Any]:
        words = self.words
        # An unknown login still gets a stable id (hash() differs between processes).
        uid, kind = words.accounts.get(
            login, (int(hashlib.sha1(login.encode()).hexdigest()[:6], 16), "User"))
        if login == words.owner:
            uid, kind = words.owner_id, "Organization"
        url = f"{self.api}/users/{login}"
        return {
            "login": login, "id": uid, "node_id": f"U_kgDOB{uid}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
            "gravatar_id": "", "url": url, "html_url": f"{self.web}/{login}",
            "followers_url": f"{url}/followers",
            "following_url": f"{url}/following{{/other_user}}",
            "gists_url": f"{url}/gists{{/gist_id}}",
            "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{url}/subscriptions", "organizations_url": f"{url}/orgs",
            "repos_url": f"{url}/repos", "events_url": f"{url}/events{{/privacy}}",
            "received_events_url": f"{url}/received_events", "type": kind,
            "user_view_type": "public", "site_admin": False,
        }

    def label(self, repo: Repo, name: str) -> dict[str, Any]:
        labels = self.words.labels
        color, description = labels.get(name, ("ededed", ""))
        label_id = 5_123_456_000 + sorted(labels).index(name) if name in labels else 0
        return {"id": label_id, "node_id": _node("LA_kwDOJ", label_id),
                "url": f"{self.api}/repos/{repo.full_name}/labels/{name}", "name": name,
                "color": color, "default": name in ("bug", "enhancement"),
                "description": description}

    def repo(self, repo: Repo) -> dict[str, Any]:
        """The full repository object (~6 KB) that `head` and `base` embed."""
        full, url = repo.full_name, f"{self.api}/repos/{repo.full_name}"
        spec = repo.spec
        open_count = repo.open_issue_count
        doc: dict[str, Any] = {
            "id": repo.id, "node_id": _node("R_kgDO", repo.id), "name": spec.name,
            "full_name": full, "private": True, "owner": self.user(repo.owner),
            "html_url": f"{self.web}/{full}", "description": spec.description or None,
            "fork": False, "url": url,
        }
        for key, suffix in (
                ("forks_url", "/forks"), ("keys_url", "/keys{/key_id}"),
                ("collaborators_url", "/collaborators{/collaborator}"),
                ("teams_url", "/teams"), ("hooks_url", "/hooks"),
                ("issue_events_url", "/issues/events{/number}"), ("events_url", "/events"),
                ("assignees_url", "/assignees{/user}"), ("branches_url", "/branches{/branch}"),
                ("tags_url", "/tags"), ("blobs_url", "/git/blobs{/sha}"),
                ("git_tags_url", "/git/tags{/sha}"), ("git_refs_url", "/git/refs{/sha}"),
                ("trees_url", "/git/trees{/sha}"), ("statuses_url", "/statuses/{sha}"),
                ("languages_url", "/languages"), ("stargazers_url", "/stargazers"),
                ("contributors_url", "/contributors"), ("subscribers_url", "/subscribers"),
                ("subscription_url", "/subscription"), ("commits_url", "/commits{/sha}"),
                ("git_commits_url", "/git/commits{/sha}"),
                ("comments_url", "/comments{/number}"),
                ("issue_comment_url", "/issues/comments{/number}"),
                ("contents_url", "/contents/{+path}"),
                ("compare_url", "/compare/{base}...{head}"), ("merges_url", "/merges"),
                ("archive_url", "/{archive_format}{/ref}"), ("downloads_url", "/downloads"),
                ("issues_url", "/issues{/number}"), ("pulls_url", "/pulls{/number}"),
                ("milestones_url", "/milestones{/number}"),
                ("notifications_url", "/notifications{?since,all,participating}"),
                ("labels_url", "/labels{/name}"), ("releases_url", "/releases{/id}"),
                ("deployments_url", "/deployments")):
            doc[key] = url + suffix
        host = self.web.split("://", 1)[-1]
        doc.update({
            "created_at": iso(repo.created_at), "updated_at": iso(repo.pushed_at),
            "pushed_at": iso(repo.pushed_at), "git_url": f"git://{host}/{full}.git",
            "ssh_url": f"git@{host}:{full}.git", "clone_url": f"{self.web}/{full}.git",
            "svn_url": f"{self.web}/{full}", "homepage": None,
            "size": 1_000 + 97 * len(repo.pulls), "stargazers_count": 12, "watchers_count": 12,
            "language": spec.language, "has_issues": True, "has_projects": False,
            "has_downloads": True, "has_wiki": False, "has_pages": False,
            "has_discussions": False, "forks_count": 0, "mirror_url": None, "archived": False,
            "disabled": False, "open_issues_count": open_count, "license": None,
            "allow_forking": False, "is_template": False, "web_commit_signoff_required": False,
            "topics": sorted({spec.kind, "argocd" if spec.kind in ("gitops", "charts")
                              else spec.team}),
            "visibility": "private", "forks": 0, "open_issues": open_count, "watchers": 12,
            "default_branch": "main",
        })
        return doc

    def _branch(self, repo: Repo, ref: str, sha: str) -> dict[str, Any]:
        return {"label": f"{repo.owner}:{ref}", "ref": ref, "sha": sha,
                "user": self.user(repo.owner), "repo": self.repo(repo)}

    def pull(self, repo: Repo, pull: Pull, *, full: bool = False) -> dict[str, Any]:
        """A pull request as listed (~18 KB), or with `full` as `GET .../pulls/{n}` returns it."""
        api = f"{self.api}/repos/{repo.full_name}"
        n, html = pull.number, f"{self.web}/{repo.full_name}/pull/{pull.number}"
        doc: dict[str, Any] = {
            "url": f"{api}/pulls/{n}", "id": pull.id, "node_id": _node("PR_kwDOJ", pull.id),
            "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
            "issue_url": f"{api}/issues/{n}", "commits_url": f"{api}/pulls/{n}/commits",
            "review_comments_url": f"{api}/pulls/{n}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{n}/comments",
            "statuses_url": f"{api}/statuses/{pull.head_sha}", "number": n,
            "state": pull.state, "locked": False, "title": pull.title,
            "user": self.user(pull.author), "body": pull.body,
            "labels": [self.label(repo, name) for name in pull.labels], "milestone": None,
            "active_lock_reason": None, "created_at": iso(pull.created_at),
            "updated_at": iso(pull.updated_at), "closed_at": iso(pull.closed_at),
            "merged_at": iso(pull.merged_at),
            "merge_commit_sha": None if pull.draft else pull.head_sha[::-1],
            "assignee": None, "assignees": [],
            "requested_reviewers": [self.user(r) for r in pull.requested_reviewers],
            "requested_teams": [],
            "head": self._branch(repo, pull.head_ref, pull.head_sha),
            "base": self._branch(repo, pull.base_ref, pull.base_sha),
            "_links": {
                "self": {"href": f"{api}/pulls/{n}"}, "html": {"href": html},
                "issue": {"href": f"{api}/issues/{n}"},
                "comments": {"href": f"{api}/issues/{n}/comments"},
                "review_comments": {"href": f"{api}/pulls/{n}/comments"},
                "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/pulls/{n}/commits"},
                "statuses": {"href": f"{api}/statuses/{pull.head_sha}"},
            },
            "author_association": "MEMBER" if "[bot]" not in pull.author else "NONE",
            "auto_merge": None, "draft": pull.draft,
        }
        if full:
            blocked = pull.review_decision != "APPROVED" or "do-not-merge" in pull.labels
            doc.update({
                "merged": pull.merged, "mergeable": None if pull.state == "closed" else True,
                "rebaseable": pull.state == "open", "mergeable_state": (
                    "unknown" if pull.state == "closed" else "draft" if pull.draft
                    else "blocked" if blocked else "clean"),
                "merged_by": self.user(pull.requested_reviewers[0] if pull.requested_reviewers
                                       else self.words.humans[0]) if pull.merged else None,
                "comments": pull.comments, "review_comments": pull.review_comments,
                "maintainer_can_modify": False, "commits": pull.commits,
                "additions": pull.additions, "deletions": pull.deletions,
                "changed_files": len(pull.files),
            })
        return doc

    def pull_as_issue(self, repo: Repo, pull: Pull) -> dict[str, Any]:
        """A pull request as `/issues` and search list it: an issue with `pull_request`."""
        doc = self._issue_common(repo, pull.number, pull.issue_id, pull.title, pull.body,
                                 pull.author, pull.state, None, pull.labels, (), pull.comments,
                                 pull.created_at, pull.updated_at, pull.closed_at)
        doc["draft"] = pull.draft
        html = f"{self.web}/{repo.full_name}/pull/{pull.number}"
        doc["html_url"] = html  # GitHub links a pull request's issue form to the pull page
        doc["pull_request"] = {"url": f"{self.api}/repos/{repo.full_name}/pulls/{pull.number}",
                               "html_url": html, "diff_url": f"{html}.diff",
                               "patch_url": f"{html}.patch", "merged_at": iso(pull.merged_at)}
        return doc

    def issue(self, repo: Repo, issue: Issue) -> dict[str, Any]:
        return self._issue_common(repo, issue.number, issue.id, issue.title, issue.body,
                                  issue.author, issue.state, issue.state_reason, issue.labels,
                                  issue.assignees, issue.comments, issue.created_at,
                                  issue.updated_at, issue.closed_at)

    def _issue_common(self, repo: Repo, number: int, issue_id: int, title: str, body: str,
                      author: str, state: str, state_reason: str | None,
                      labels: tuple[str, ...], assignees: tuple[str, ...], comments: int,
                      created: int, updated: int, closed: int | None) -> dict[str, Any]:
        url = f"{self.api}/repos/{repo.full_name}/issues/{number}"
        people = [self.user(a) for a in assignees]
        return {
            "url": url, "repository_url": f"{self.api}/repos/{repo.full_name}",
            "labels_url": f"{url}/labels{{/name}}", "comments_url": f"{url}/comments",
            "events_url": f"{url}/events",
            "html_url": f"{self.web}/{repo.full_name}/issues/{number}", "id": issue_id,
            "node_id": _node("I_kwDOJ", issue_id), "number": number, "title": title,
            "user": self.user(author), "labels": [self.label(repo, n) for n in labels],
            "state": state, "locked": False, "assignee": people[0] if people else None,
            "assignees": people, "milestone": None, "comments": comments,
            "created_at": iso(created), "updated_at": iso(updated), "closed_at": iso(closed),
            "author_association": "MEMBER" if "[bot]" not in author else "NONE",
            "type": None, "active_lock_reason": None, "body": body,
            "closed_by": self.user(author) if closed else None,
            "reactions": {"url": f"{url}/reactions", "total_count": 0, "+1": 0, "-1": 0,
                          "laugh": 0, "hooray": 0, "confused": 0, "heart": 0, "rocket": 0,
                          "eyes": 0},
            "timeline_url": f"{url}/timeline", "performed_via_github_app": None,
            "state_reason": state_reason,
        }

    def review(self, repo: Repo, pull: Pull, review: Review) -> dict[str, Any]:
        html = f"{self.web}/{repo.full_name}/pull/{pull.number}"
        api = f"{self.api}/repos/{repo.full_name}/pulls/{pull.number}"
        return {
            "id": review.id, "node_id": _node("PRR_kwDOJ", review.id),
            "user": self.user(review.reviewer),
            "body": "" if review.state == "APPROVED" else "See inline comments.",
            "state": review.state, "html_url": f"{html}#pullrequestreview-{review.id}",
            "pull_request_url": api, "author_association": "MEMBER",
            "_links": {"html": {"href": f"{html}#pullrequestreview-{review.id}"},
                       "pull_request": {"href": api}},
            "submitted_at": iso(review.submitted_at), "commit_id": pull.head_sha,
        }

    def file(self, repo: Repo, pull: Pull, index: int) -> dict[str, Any]:
        change = pull.files[index]
        ref = pull.head_sha
        patch = "@@ -1,3 +1,3 @@\n" + "-  old: value\n" * min(change.deletions, 5) + \
            "+  new: value\n" * min(change.additions, 5)
        return {
            "sha": ref[index % 20:] + ref[: index % 20], "filename": change.path,
            "status": change.status, "additions": change.additions,
            "deletions": change.deletions, "changes": change.additions + change.deletions,
            "blob_url": f"{self.web}/{repo.full_name}/blob/{ref}/{change.path}",
            "raw_url": f"{self.web}/{repo.full_name}/raw/{ref}/{change.path}",
            "contents_url": f"{self.api}/repos/{repo.full_name}/contents/{change.path}?ref={ref}",
            "patch": patch,
        }

    def run(self, repo: Repo, run: Run) -> dict[str, Any]:
        api = f"{self.api}/repos/{repo.full_name}"
        url = f"{api}/actions/runs/{run.id}"
        commit = {"id": run.head_sha, "tree_id": run.head_sha[::-1],
                  "message": run.display_title, "timestamp": iso(run.created_at),
                  "author": {"name": run.actor,
                             "email": f"{run.actor}@{self.words.company}.example"},
                  "committer": {"name": "GitHub", "email": "noreply@github.com"}}
        pulls = [{"url": f"{api}/pulls/{n}", "id": 2_000_000_000 + n, "number": n,
                  "head": {"ref": run.head_branch, "sha": run.head_sha},
                  "base": {"ref": "main", "sha": run.head_sha[::-1]}} for n in run.pull_numbers]
        return {
            "id": run.id, "name": run.workflow, "node_id": _node("WFR_kwLOJ", run.id),
            "head_branch": run.head_branch, "head_sha": run.head_sha, "path": run.workflow_path,
            "display_title": run.display_title, "run_number": run.run_number,
            "event": run.event, "status": run.status, "conclusion": run.conclusion,
            "workflow_id": run.workflow_id, "check_suite_id": run.id + 7,
            "check_suite_node_id": _node("CS_kwDOJ", run.id + 7), "url": url,
            "html_url": f"{self.web}/{repo.full_name}/actions/runs/{run.id}",
            "pull_requests": pulls, "created_at": iso(run.created_at),
            "updated_at": iso(run.updated_at), "actor": self.user(run.actor), "run_attempt": 1,
            "referenced_workflows": [], "run_started_at": iso(run.created_at),
            "triggering_actor": self.user(run.actor), "jobs_url": f"{url}/jobs",
            "logs_url": f"{url}/logs", "check_suite_url": f"{api}/check-suites/{run.id + 7}",
            "artifacts_url": f"{url}/artifacts", "cancel_url": f"{url}/cancel",
            "rerun_url": f"{url}/rerun", "previous_attempt_url": None,
            "workflow_url": f"{api}/actions/workflows/{run.workflow_id}",
            "head_commit": commit, "repository": self.repo(repo),
            "head_repository": self.repo(repo),
        }
