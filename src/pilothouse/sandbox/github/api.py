"""The GitHub sandbox's HTTP API: the REST endpoints Pilothouse uses, with GitHub's habits.

Paging and error bodies follow `protocol`. A token GitHub does not know gets 401
`Bad credentials`; the repositories are private, so they are 404 to anonymous callers. Every
answer carries the `x-ratelimit-*` headers, and a spent quota answers 403 with remaining 0
and the reset time. Run logs redirect (302) to a signed archive URL that refuses a bearer
token, like the storage host GitHub redirects to: a client must not forward its token there.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from pilothouse.sandbox.github import queries
from pilothouse.sandbox.github import vocabulary as v
from pilothouse.sandbox.github.commits import MainLines
from pilothouse.sandbox.github.commits_api import CommitHandlers
from pilothouse.sandbox.github.documents import Site
from pilothouse.sandbox.github.limits import RateLimits
from pilothouse.sandbox.github.logs import serve_archive, signed_location
from pilothouse.sandbox.github.protocol import (
    DOCS,
    RATE_DOCS,
    SandboxHeaders,
    api_root,
    as_int,
    gh_error,
    http_error,
    json_response,
    page_of,
    page_size,
    token_of,
    validation_failed,
)
from pilothouse.sandbox.github.records import Pull, Repo
from pilothouse.sandbox.github.world import World, WorldSpec

#: The sandbox's token: shaped like a classic personal access token, and not a secret.
DEFAULT_TOKEN = "ghp_pilothouseSandboxTokenNotASecret0000"
SEARCH_CAP = 1000
Handler = Callable[[Request, bool], Awaitable[Response]]


@dataclass
class GitHubSandboxState:
    """World, token and rate limits of one sandbox server."""

    world: World
    token: str = DEFAULT_TOKEN
    limits: RateLimits = field(default_factory=RateLimits)
    #: Seconds a signed log-archive URL stays valid (GitHub: about a minute).
    archive_url_seconds: float = 60.0
    #: Statuses the next requests fail with, oldest first (see `fail_next`).
    outages: deque[int] = field(default_factory=deque)

    def fail_next(self, count: int, status: int = 503) -> None:
        """Answer the next `count` API requests with `status`, as a struggling GitHub would."""
        self.outages.extend([status] * count)


class GitHubSandboxApi:
    """Request handlers bound to one `GitHubSandboxState`."""

    def __init__(self, state: GitHubSandboxState) -> None:
        self.state = state
        self.commits = CommitHandlers(MainLines())

    # -- auth, rate limits and paging ---------------------------------------------------------
    def _identity(self, request: Request) -> bool | None:
        """True for the sandbox token, False for anonymous, None for a token GitHub rejects."""
        token = token_of(request)
        if token is None:
            return False
        return True if token == self.state.token else None

    def guarded(self, handler: Handler, resource: str = "core") -> Callable[
            [Request], Awaitable[Response]]:
        """`handler` behind GitHub's authentication and rate limiting."""

        async def endpoint(request: Request) -> Response:
            try:
                outage = self.state.outages.popleft()  # deque: safe across threads
            except IndexError:
                outage = 0
            if outage:
                return gh_error(outage, "Server Error")
            identity = self._identity(request)
            if identity is None:
                return gh_error(401, "Bad credentials")
            why, headers = self.state.limits.take(identity, resource)
            if why == "primary":
                who = "user ID 11235813" if identity else request.client.host \
                    if request.client else "this IP"
                response = gh_error(403, f"API rate limit exceeded for {who}. If you reach out "
                                         "to GitHub Support for help, please include the "
                                         "request ID.", RATE_DOCS)
            elif why == "secondary":
                response = gh_error(403, "You have exceeded a secondary rate limit. Please wait "
                                         "a few minutes before you try again.", RATE_DOCS)
            else:
                response = await handler(request, identity)
            response.headers.update(headers)
            return response

        return endpoint

    def _site(self, request: Request) -> Site:
        return Site(api=api_root(request), words=self.state.world.words)

    def _repo(self, request: Request, authenticated: bool) -> Repo | None:
        params = request.path_params
        if "repo_id" in params:
            repo = self.state.world.repo_by_id(int(params["repo_id"]))
        else:
            repo = self.state.world.repo(params["owner"], params["repo"])
        # The repositories are private: to anyone without the token they do not exist.
        return repo if authenticated else None

    # -- pull requests ------------------------------------------------------------------------
    async def list_pulls(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/pulls/pulls#list-pull-requests")
        try:
            found = queries.list_pulls(repo, request.query_params)
        except queries.QueryError as exc:
            return _validation(exc)
        chunk, headers = page_of(request, found, f"/repositories/{repo.id}/pulls")
        site = self._site(request)
        return json_response([site.pull(repo, p) for p in chunk], headers=headers)

    def _pull(self, request: Request, authenticated: bool) -> tuple[Repo, Pull] | Response:
        repo = self._repo(request, authenticated)
        number = as_int(request.path_params["number"], 0)
        pull = repo.pull(number) if repo is not None else None
        if repo is None or pull is None:
            return gh_error(404, "Not Found", f"{DOCS}/pulls/pulls#get-a-pull-request")
        return repo, pull

    async def get_pull(self, request: Request, authenticated: bool) -> Response:
        found = self._pull(request, authenticated)
        if isinstance(found, Response):
            return found
        return json_response(self._site(request).pull(*found, full=True))

    async def pull_files(self, request: Request, authenticated: bool) -> Response:
        found = self._pull(request, authenticated)
        if isinstance(found, Response):
            return found
        repo, pull = found
        # GitHub lists at most 3,000 files of a pull request.
        indices, headers = page_of(request, range(min(len(pull.files), 3000)),
                                      f"/repositories/{repo.id}/pulls/{pull.number}/files")
        site = self._site(request)
        return json_response([site.file(repo, pull, i) for i in indices], headers=headers)

    async def pull_reviews(self, request: Request, authenticated: bool) -> Response:
        found = self._pull(request, authenticated)
        if isinstance(found, Response):
            return found
        repo, pull = found
        ordered = sorted(pull.reviews, key=lambda r: r.submitted_at)
        chunk, headers = page_of(request, ordered,
                                    f"/repositories/{repo.id}/pulls/{pull.number}/reviews")
        site = self._site(request)
        return json_response([site.review(repo, pull, r) for r in chunk], headers=headers)

    # -- issues and search --------------------------------------------------------------------
    async def list_issues(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/issues/issues#list-repository-issues")
        try:
            found = queries.list_issues(repo, request.query_params)
        except queries.QueryError as exc:
            return _validation(exc)
        chunk, headers = page_of(request, found, f"/repositories/{repo.id}/issues")
        site = self._site(request)
        return json_response([site.pull_as_issue(r, i) if isinstance(i, Pull)
                              else site.issue(r, i) for r, i in chunk], headers=headers)

    async def list_labels(self, request: Request, authenticated: bool) -> Response:
        """`GET /repos/{owner}/{repo}/labels`: the organisation's labels, which every one of
        its repositories carries (as a label-sync bot keeps them)."""
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/issues/labels#list-labels-for-a-repository")
        site = self._site(request)
        names = sorted(site.words.labels)
        chunk, headers = page_of(request, names, f"/repositories/{repo.id}/labels")
        return json_response([site.label(repo, name) for name in chunk], headers=headers)

    async def search_issues(self, request: Request, authenticated: bool) -> Response:
        query = request.query_params
        world = self.state.world
        try:
            # Anonymous callers can search public repositories only, and there are none.
            found = queries.search(world.repos if authenticated else {}, world.owner,
                                   query.get("q", ""), query.get("sort"), query.get("order"))
        except queries.QueryError as exc:
            return _validation(exc, resource="Search")
        if (max(1, as_int(query.get("page"), 1)) - 1) * page_size(request) >= SEARCH_CAP:
            return gh_error(422, "Cannot access beyond the first 1000 results, or the page "
                                 "is too large.", f"{DOCS}/search/search")
        chunk, headers = page_of(request, found, "/search/issues", cap=SEARCH_CAP)
        site = self._site(request)
        items = [{**(site.pull_as_issue(r, i) if isinstance(i, Pull) else site.issue(r, i)),
                  "score": 1.0} for r, i in chunk]
        return json_response({"total_count": len(found), "incomplete_results": False,
                              "items": items}, headers=headers)

    # -- actions ------------------------------------------------------------------------------
    async def list_runs(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/actions/workflow-runs")
        try:
            found = queries.list_runs(repo, request.query_params)
        except queries.QueryError as exc:
            return _validation(exc)
        chunk, headers = page_of(request, found, f"/repositories/{repo.id}/actions/runs")
        site = self._site(request)
        return json_response({"total_count": len(found),
                              "workflow_runs": [site.run(repo, r) for r in chunk]},
                             headers=headers)

    async def get_run(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        run = repo.run(as_int(request.path_params["run_id"], 0)) if repo is not None else None
        if repo is None or run is None:
            return gh_error(404, "Not Found", f"{DOCS}/actions/workflow-runs#get-a-workflow-run")
        return json_response(self._site(request).run(repo, run))

    async def run_logs(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        run = repo.run(as_int(request.path_params["run_id"], 0)) if repo is not None else None
        if repo is None or run is None or run.status != "completed":
            return gh_error(404, "Not Found",
                            f"{DOCS}/actions/workflow-runs#download-workflow-run-logs")
        return RedirectResponse(signed_location(api_root(request), self.state.token, repo.id,
                                                run.id, self.state.archive_url_seconds),
                                status_code=302)

    async def log_archive(self, request: Request) -> Response:
        """The signed archive URL: no token accepted, and none needed."""
        return await serve_archive(request, self.state.world, self.state.token)

    # -- commits (the main line the Argo CD sandbox deploys) ---------------------------------
    async def list_commits(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits#list-commits")
        return self.commits.list_commits(request, self._site(request), repo)

    async def get_commit(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits#get-a-commit")
        return self.commits.get_commit(self._site(request), repo, request.path_params["ref"])

    async def commit_pulls(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits")
        return self.commits.commit_pulls(self._site(request), repo, request.path_params["ref"])

    async def compare(self, request: Request, authenticated: bool) -> Response:
        repo = self._repo(request, authenticated)
        if repo is None:
            return gh_error(404, "Not Found", f"{DOCS}/commits/commits#compare-two-commits")
        return self.commits.compare(self._site(request), repo,
                                    request.path_params["basehead"])

    # -- account ------------------------------------------------------------------------------
    async def rate_limit(self, request: Request) -> Response:
        """`GET /rate_limit`: the caller's quotas; it does not count against them."""
        identity = self._identity(request)
        if identity is None:
            return gh_error(401, "Bad credentials")
        resources = self.state.limits.snapshot(identity)
        return json_response({"resources": resources, "rate": resources["core"]})

    async def user(self, request: Request, authenticated: bool) -> Response:
        if not authenticated:
            return gh_error(401, "Requires authentication",
                            f"{DOCS}/users/users#get-the-authenticated-user")
        doc = {**self._site(request).user(v.VIEWER), "name": "Pilothouse sandbox",
               "company": f"@{self.state.world.owner}", "blog": "", "location": None,
               "email": None, "hireable": None, "bio": "The token the GitHub sandbox accepts",
               "twitter_username": None, "public_repos": 0, "public_gists": 0,
               "followers": 0, "following": 0, "created_at": "2024-01-15T10:00:00Z",
               "updated_at": "2026-08-01T10:00:00Z"}
        return json_response(doc, headers={"x-oauth-scopes": "repo, read:org"})

    async def user_repos(self, request: Request, authenticated: bool) -> Response:
        """`GET /user/repos`: the repositories the token can see, by full name as GitHub sorts
        them by default."""
        if not authenticated:
            return gh_error(401, "Requires authentication", f"{DOCS}/repos/repos"
                            "#list-repositories-for-the-authenticated-user")
        repos = sorted(self.state.world.repos.values(), key=lambda r: r.full_name.lower())
        chunk, headers = page_of(request, repos, "/user/repos")
        site = self._site(request)
        return json_response([site.repo(r) for r in chunk], headers=headers)


def _validation(exc: queries.QueryError, resource: str = "Issue") -> Response:
    return validation_failed(resource, exc.field, str(exc))


def create_github_sandbox_app(spec: WorldSpec | None = None, token: str = DEFAULT_TOKEN, *,
                              core_limit: int = 5000, search_limit: int = 30,
                              archive_url_seconds: float = 60.0) -> Starlette:
    """A Starlette app serving a generated GitHub organisation (`app.state.github` is its
    `GitHubSandboxState`, for tests that flip rate limits)."""
    state = GitHubSandboxState(World(spec), token,
                               RateLimits(core_limit=core_limit, search_limit=search_limit),
                               archive_url_seconds=archive_url_seconds)
    api = GitHubSandboxApi(state)
    g = api.guarded
    routes = []
    for prefix in ("/repos/{owner}/{repo}", "/repositories/{repo_id:int}"):
        routes += [
            Route(prefix + "/pulls", g(api.list_pulls), methods=["GET"]),
            Route(prefix + "/pulls/{number}", g(api.get_pull), methods=["GET"]),
            Route(prefix + "/pulls/{number}/files", g(api.pull_files), methods=["GET"]),
            Route(prefix + "/pulls/{number}/reviews", g(api.pull_reviews), methods=["GET"]),
            Route(prefix + "/issues", g(api.list_issues), methods=["GET"]),
            Route(prefix + "/labels", g(api.list_labels), methods=["GET"]),
            Route(prefix + "/actions/runs", g(api.list_runs), methods=["GET"]),
            Route(prefix + "/actions/runs/{run_id}", g(api.get_run), methods=["GET"]),
            Route(prefix + "/actions/runs/{run_id}/logs", g(api.run_logs), methods=["GET"]),
            Route(prefix + "/commits", g(api.list_commits), methods=["GET"]),
            Route(prefix + "/commits/{ref}", g(api.get_commit), methods=["GET"]),
            Route(prefix + "/commits/{ref}/pulls", g(api.commit_pulls), methods=["GET"]),
            Route(prefix + "/compare/{basehead}", g(api.compare), methods=["GET"]),
        ]
    routes += [
        Route("/search/issues", g(api.search_issues, "search"), methods=["GET"]),
        Route("/rate_limit", api.rate_limit, methods=["GET"]),
        Route("/user", g(api.user), methods=["GET"]),
        Route("/user/repos", g(api.user_repos), methods=["GET"]),
        Route("/_sandbox/run-logs/{repo_id:int}/{run_id:int}.zip", api.log_archive,
              methods=["GET"]),
    ]
    app = Starlette(routes=routes, exception_handlers={404: http_error, 405: http_error})
    app.add_middleware(SandboxHeaders)
    app.state.github = state
    return app
