"""What each GitHub tool does: validate, ask GitHub for one page, answer in minimal shapes.

Every list answer is one GitHub page (never "fetch everything, then slice") with a `pagination`
block read from the `Link` header; search answers add GitHub's `total_count`. Arguments are
checked before any request, so a typo costs no rate limit and gets a hint.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Annotated, Any

from pydantic import Field

from pilothouse.errors import UserInputError
from pilothouse.tools.github import shapes
from pilothouse.tools.github.client import GitHubClient
from pilothouse.tools.github.paging import (
    SEARCH_RESULT_CAP,
    PageRequest,
    page_notes,
    page_request,
    pagination,
)
from pilothouse.tools.github.runlogs import failing_tails

_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_REPO = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
MAX_FILE_ROWS = 30
#: Pages of files (100 each) read to total a pull request's directories.
MAX_FILE_PAGES = 3
MAX_REVIEW_PAGES = 3
MAX_TAIL_LINES = 500

#: A repository's two arguments, described by their shape and never by an example value: the
#: local model copied a schema's example owner into calls on repositories it did not own
#: (measured), and a world's own names are the only right values.
Owner = Annotated[str, Field(description="user or organization: the part before '/' in "
                                         "owner/name")]
Repo = Annotated[str, Field(description="repository name: the part after '/' in owner/name")]


def repo_path(owner: str, repo: str) -> str:
    """`/repos/owner/repo` for valid names, or a `UserInputError` saying how to fix them."""
    owner, repo = (owner or "").strip(), (repo or "").strip()
    if "/" in repo and not owner:
        owner, _, repo = repo.partition("/")
    if not _OWNER.match(owner):
        raise UserInputError(f"{owner!r} is not a valid GitHub owner (user or organization).",
                             hint="Pass the owner alone: the part before '/' in owner/name.")
    if not _REPO.match(repo) or repo in (".", ".."):
        raise UserInputError(f"{repo!r} is not a valid repository name.",
                             hint="Pass the repository alone: the part after '/' in owner/name.")
    return f"/repos/{owner}/{repo}"


def _full(path: str) -> str:
    return path.removeprefix("/repos/")


def _choice(name: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        raise UserInputError(f"{name}={value!r} is not one of {', '.join(allowed)}.",
                             hint=f"Use one of: {', '.join(allowed)}.")


def _answer(request: PageRequest, links: dict[str, int], items: list[Any],
            total_count: int | None = None, **head: Any) -> dict[str, Any]:
    """Context first, items last: a size guard that trims the end trims items, not totals."""
    block = pagination(request, links, len(items), total_count)
    notes = page_notes(request, block, len(items))
    answer: dict[str, Any] = {**head, "pagination": block}
    if notes:
        answer["notes"] = notes
    answer["items"] = items
    return answer


async def list_pull_requests(client: GitHubClient, owner: str, repo: str, *,
                             state: str = "open", base: str | None = None,
                             head: str | None = None, sort: str = "created",
                             direction: str | None = None, page: int = 1,
                             per_page: int = 20) -> dict[str, Any]:
    path = repo_path(owner, repo)
    _choice("state", state, ("open", "closed", "all"))
    _choice("sort", sort, ("created", "updated", "popularity", "long-running"))
    _choice("direction", direction, ("asc", "desc"))
    request = page_request(page, per_page)
    params: dict[str, str | int] = {"state": state, "sort": sort, **request.params()}
    if direction:
        params["direction"] = direction
    if base:
        params["base"] = base
    if head:  # GitHub filters by head only in the `owner:branch` form
        params["head"] = head if ":" in head else f"{path.split('/')[2]}:{head}"
    listing = await client.get_list(f"{path}/pulls", params, shapes.pull_summary,
                                    subject=f"Repository {_full(path)}")
    return _answer(request, listing.links, listing.items, repo=_full(path), state=state)


async def get_pull_request(client: GitHubClient, owner: str, repo: str, number: int, *,
                           include_files: bool = True) -> dict[str, Any]:
    path = repo_path(owner, repo)
    if number < 1:
        raise UserInputError(f"{number} is not a pull request number.",
                             hint="Find it with list_pull_requests or search_issues.")
    subject = f"Pull request {_full(path)}#{number}"
    doc = await client.get_json(f"{path}/pulls/{number}", subject=subject)
    pull = shapes.pull_details(doc)
    del doc  # the 20 KB original is not kept past this point
    reviews: list[dict[str, Any]] = []
    for page in range(1, MAX_REVIEW_PAGES + 1):
        listing = await client.get_list(f"{path}/pulls/{number}/reviews",
                                        {"per_page": 100, "page": page}, shapes.review_row,
                                        subject=subject)
        reviews += listing.items
        if "next" not in listing.links:
            break
    latest: dict[str | None, dict[str, Any]] = {}
    for review in reviews:  # oldest first, so the last one per reviewer wins
        latest[review["reviewer"]] = review
    answer: dict[str, Any] = {
        "pull_request": pull,
        "reviews": {"decision": shapes.review_decision(reviews), "count": len(reviews),
                    "latest_by_reviewer": list(latest.values())[: shapes.MAX_NAMES]},
    }
    if include_files:
        answer["files"] = await _files(client, f"{path}/pulls/{number}/files", subject, pull)
    return answer


async def _files(client: GitHubClient, path: str, subject: str,
                 pull: dict[str, Any]) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    directories: Counter[str] = Counter()
    more = False
    for page in range(1, MAX_FILE_PAGES + 1):
        listing = await client.get_list(path, {"per_page": 100, "page": page},
                                        shapes.file_row, subject=subject)
        for row in listing.items:
            directories["/".join(row["path"].split("/")[:-1][:3]) or "."] += 1
            if len(rows) < MAX_FILE_ROWS:
                rows.append(row)
        more = "next" in listing.links
        if not more:
            break
    count = pull.get("changed_files") or sum(directories.values())
    summary: dict[str, Any] = {
        "count": count, "additions": pull.get("additions"), "deletions": pull.get("deletions"),
        "by_directory": dict(directories.most_common(10)), "paths": rows,
    }
    if count > len(rows):
        counted = sum(directories.values())
        summary["note"] = (f"{len(rows)} of {count} paths listed; by_directory counts "
                           f"{'the first ' + str(counted) if more else 'all'} files.")
    return summary


async def list_issues(client: GitHubClient, owner: str, repo: str, *, state: str = "open",
                      labels: str | None = None, assignee: str | None = None,
                      creator: str | None = None, sort: str = "created",
                      direction: str = "desc", include_pull_requests: bool = False,
                      page: int = 1, per_page: int = 20) -> dict[str, Any]:
    path = repo_path(owner, repo)
    _choice("state", state, ("open", "closed", "all"))
    _choice("sort", sort, ("created", "updated", "comments"))
    _choice("direction", direction, ("asc", "desc"))
    request = page_request(page, per_page)
    params: dict[str, str | int] = {"state": state, "sort": sort, "direction": direction,
                                    **request.params()}
    for name, value in (("labels", labels), ("assignee", assignee), ("creator", creator)):
        if value:
            params[name] = value
    listing = await client.get_list(f"{path}/issues", params, shapes.issue_summary,
                                    subject=f"Repository {_full(path)}")
    items = listing.items
    for item in items:
        item.pop("repo", None)  # said once, at the top
    answer = _answer(request, listing.links, items, repo=_full(path), state=state)
    if not include_pull_requests:
        # GitHub lists pull requests as issues; they would crowd out the issues asked for.
        answer["items"] = [i for i in items if i["type"] == "issue"]
        skipped = len(items) - len(answer["items"])
        if skipped:
            answer.setdefault("notes", []).append(
                f"{skipped} pull requests on this GitHub page were left out; use "
                "list_pull_requests for them.")
    return answer


async def search_issues(client: GitHubClient, query: str, *, sort: str | None = None,
                        order: str = "desc", page: int = 1,
                        per_page: int = 20) -> dict[str, Any]:
    if not (query or "").strip():
        raise UserInputError("The search query is empty.",
                             hint="Use GitHub syntax, e.g. 'repo:OWNER/NAME is:pr is:open "
                                  "label:bug'.")
    _choice("sort", sort, ("created", "updated", "comments"))
    _choice("order", order, ("asc", "desc"))
    request = page_request(page, per_page)
    if (request.page - 1) * request.per_page >= SEARCH_RESULT_CAP:
        raise UserInputError(f"GitHub search serves only the first {SEARCH_RESULT_CAP} results; "
                             f"page {request.page} lies beyond them.",
                             hint="Narrow the query (a label, author, state or date "
                                  "qualifier).")
    params: dict[str, str | int] = {"q": query.strip(), "order": order, **request.params()}
    if sort:
        params["sort"] = sort
    listing = await client.get_list("/search/issues", params, shapes.issue_summary,
                                    prefix="items.item",
                                    totals=("total_count", "incomplete_results"))
    total = int(listing.totals.get("total_count") or 0)
    answer = _answer(request, listing.links, listing.items, total, query=query.strip())
    if total > SEARCH_RESULT_CAP:
        answer.setdefault("notes", []).append(
            f"{total} matches, but GitHub serves only the first {SEARCH_RESULT_CAP}; narrow "
            "the query to reach the rest.")
    if listing.totals.get("incomplete_results"):
        answer.setdefault("notes", []).append("GitHub timed out; the results may be incomplete.")
    return answer


def _number_and_reviewers(doc: dict[str, Any]) -> tuple[int, list[str]]:
    return int(doc.get("number") or 0), shapes.pull_summary(doc)["requested_reviewers"]


async def list_awaiting_review(client: GitHubClient, owner: str, repo: str, *,
                               reviewer: str | None = None, include_drafts: bool = False,
                               page: int = 1, per_page: int = 20) -> dict[str, Any]:
    """Open pull requests with no approval and no change request, with who is asked."""
    path = repo_path(owner, repo)
    query = f"repo:{_full(path)} is:pr is:open review:required"
    if not include_drafts:
        query += " draft:false"
    if reviewer:
        query += f" review-requested:{reviewer.strip().lstrip('@')}"
    answer = await search_issues(client, query, sort="created", order="asc", page=page,
                                 per_page=per_page)
    wanted = {item["number"] for item in answer["items"]}
    reviewers: dict[int, list[str]] = {}
    for list_page in range(1, 4):  # search rows lack reviewers: read them off the open list
        listing = await client.get_list(
            f"{path}/pulls", {"state": "open", "per_page": 100, "page": list_page},
            _number_and_reviewers,
            subject=f"Repository {_full(path)}")
        reviewers.update((n, r) for n, r in listing.items if n in wanted)
        if wanted <= reviewers.keys() or "next" not in listing.links:
            break
    # Every row is an open pull request in this repository waiting for review: say that once
    # and keep in each row only what tells the rows apart.
    answer["items"] = [
        {"number": item["number"], "title": item["title"], "author": item["author"],
         "draft": item.get("draft", False), "labels": item["labels"],
         "requested_reviewers": reviewers.get(item["number"], []),
         "created_at": item["created_at"], "updated_at": item["updated_at"],
         "html_url": item["html_url"]}
        for item in answer["items"]]
    return {"repo": _full(path), "review_decision": "review_required", **answer}


async def list_workflow_runs(client: GitHubClient, owner: str, repo: str, *,
                             status: str | None = None, branch: str | None = None,
                             event: str | None = None, page: int = 1,
                             per_page: int = 20) -> dict[str, Any]:
    path = repo_path(owner, repo)
    request = page_request(page, per_page)
    params: dict[str, str | int] = dict(request.params())
    for name, value in (("status", status), ("branch", branch), ("event", event)):
        if value:
            params[name] = value
    listing = await client.get_list(f"{path}/actions/runs", params, shapes.run_summary,
                                    prefix="workflow_runs.item", totals=("total_count",),
                                    subject=f"Repository {_full(path)}")
    total = int(listing.totals.get("total_count") or 0)
    answer = _answer(request, listing.links, listing.items, total, repo=_full(path))
    conclusions = Counter(str(i["conclusion"] or i["status"]) for i in listing.items)
    answer["page_summary"] = dict(conclusions.most_common())
    answer["items"] = answer.pop("items")  # keep items last
    return answer


async def get_workflow_run_logs(client: GitHubClient, owner: str, repo: str, run_id: int, *,
                                tail_lines: int = 100,
                                max_unzipped_bytes: int = 64 * 1024 * 1024) -> dict[str, Any]:
    path = repo_path(owner, repo)
    notes = []
    if tail_lines < 1:
        raise UserInputError(f"tail_lines must be 1 or more, not {tail_lines}.",
                             hint="Use the default of 100.")
    if tail_lines > MAX_TAIL_LINES:
        notes.append(f"tail_lines {tail_lines} was reduced to the maximum of {MAX_TAIL_LINES}.")
        tail_lines = MAX_TAIL_LINES
    subject = f"Workflow run {run_id} in {_full(path)}"
    run = shapes.run_summary(await client.get_json(f"{path}/actions/runs/{run_id}",
                                                   subject=subject))
    if run["status"] != "completed":
        raise UserInputError(f"{subject} is still {run['status']}; its logs are not ready.",
                             hint="Ask again when the run has completed.")
    archive = await client.download(f"{path}/actions/runs/{run_id}/logs", subject=subject)
    answer = {"run": run, **failing_tails(archive, tail_lines=tail_lines,
                                          max_bytes=max_unzipped_bytes)}
    del archive
    if notes:
        answer["notes"] = notes + answer.get("notes", [])
    return answer
