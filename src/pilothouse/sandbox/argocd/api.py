"""The sandbox's HTTP API: the Argo CD endpoints Pilothouse uses, with the real server's quirks.

No paging, `fields=` projection with the allow-list, 403 for a missing app asked without
`project=`, 415 for a POST without JSON, `{"error","code","message"}` bodies, NDJSON logs. List
bodies are streamed in chunks from the lazily generated fleet, so a 100,000-app response never
exists in memory at once. Every response carries `X-Pilothouse-Sandbox: true`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pilothouse.sandbox.argocd import documents, inventory, live
from pilothouse.sandbox.argocd.fleet import AppRecord, FleetSpec
from pilothouse.sandbox.argocd.selectors import parse_selector
from pilothouse.sandbox.argocd.state import DEFAULT_TOKEN, SandboxState

VERSION = "v3.6.0+sandbox"
_CHUNK = 64 * 1024
_HTTP_FOR_GRPC = {3: 400, 5: 404, 7: 403, 9: 400, 16: 401, 2: 500}


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def grpc_error(code: int, message: str) -> JSONResponse:
    """An error body the way Argo CD's gateway writes it (`details` omitted when empty)."""
    return JSONResponse({"error": message, "code": code, "message": message},
                        status_code=_HTTP_FOR_GRPC[code])


def _list_body(items: Iterable[str], head: str = '{"metadata":{},"items":[') -> Iterator[bytes]:
    """Stream a list response from already-serialized items, ~64 KB per chunk."""
    parts, size, first = [head], len(head), True
    for item in items:
        piece = item if first else "," + item
        first = False
        parts.append(piece)
        size += len(piece)
        if size >= _CHUNK:
            yield "".join(parts).encode()
            parts, size = [], 0
    parts.append("]}")
    yield "".join(parts).encode()


class SandboxHeader:
    """ASGI middleware stamping every response as coming from the sandbox."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def stamped(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).append("X-Pilothouse-Sandbox", "true")
            await send(message)

        await self.app(scope, receive, stamped if scope["type"] == "http" else send)


class SandboxApi:
    """Request handlers bound to one `SandboxState`."""

    def __init__(self, state: SandboxState) -> None:
        self.state = state

    # -- auth -------------------------------------------------------------------------------
    def _token(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer" and value.count(".") == 2:
            return value.strip()
        return request.cookies.get("argocd.token")

    def _deny(self, request: Request) -> Response | None:
        token = self._token(request)
        if token is None:
            return grpc_error(16, "no session information")
        if token != self.state.token:
            return grpc_error(16, "invalid session: token signature is invalid")
        return None

    def _app_or_error(self, request: Request, name: str) -> tuple[int, Response | None]:
        """The index of app `name`, or the error Argo CD gives (403 hides existence)."""
        denied = self._deny(request)
        if denied is not None:
            return -1, denied
        index = self.state.fleet.index_of(name)
        project = request.query_params.get("project") or request.query_params.get("projects")
        if index is not None and (project is None or self.state.fleet.app(index).project ==
                                  project):
            return index, None
        if project is None:
            return -1, grpc_error(7, "permission denied")
        return -1, grpc_error(5, f'applications.argoproj.io "{name}" not found')

    # -- session and version ----------------------------------------------------------------
    async def version(self, request: Request) -> Response:
        return JSONResponse({"Version": VERSION, "Platform": "pilothouse-sandbox",
                             "ExtraBuildInfo": "Pilothouse sandbox: a generated fleet, "
                                               "not a real Argo CD"})

    async def create_session(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return grpc_error(3, "invalid JSON body")
        if body.get("username") == self.state.username and \
                body.get("password") == self.state.password:
            return JSONResponse({"token": self.state.token})
        return grpc_error(16, "Invalid username or password")

    async def userinfo(self, request: Request) -> Response:
        if self._token(request) != self.state.token:
            return JSONResponse({"loggedIn": False})
        return JSONResponse({"loggedIn": True, "username": self.state.username, "iss": "argocd"})

    # -- applications -----------------------------------------------------------------------
    def _app_filter(self, request: Request) -> Callable[[AppRecord], bool]:
        query = request.query_params
        name, repo = query.get("name"), query.get("repo")
        projects = set(query.getlist("projects")) | set(query.getlist("project"))
        namespace = query.get("appNamespace")
        matches = parse_selector(query.get("selector", ""))

        def keep(rec: AppRecord) -> bool:
            return ((not name or rec.name == name) and (not repo or rec.repo == repo)
                    and (not projects or rec.project in projects)
                    and (not namespace or namespace == "argocd") and matches(rec.labels))

        return keep

    async def list_applications(self, request: Request) -> Response:
        denied = self._deny(request)
        if denied is not None:
            return denied
        try:
            keep = self._app_filter(request)
        except ValueError as exc:
            return grpc_error(2, f"error parsing the selector: {exc}")
        exclude, paths = documents.parse_fields(request.query_params.getlist("fields"))
        projected = bool(request.query_params.getlist("fields")) and not exclude
        state = self.state

        def items() -> Iterator[str]:
            for index in state.fleet.sorted_indices():
                rec, op_state, operation = state.view(index)
                if not keep(rec):
                    continue
                if projected:
                    yield _dumps(documents.project_application(rec, paths, op_state))
                else:
                    doc = documents.full_application(rec, op_state, operation)
                    yield _dumps(documents.exclude_paths(doc, paths) if exclude else doc)

        # A projected list keeps only the requested paths, so the list metadata goes too.
        head = '{"items":[' if projected else '{"metadata":{"resourceVersion":"48213377"},"items":['
        return StreamingResponse(_list_body(items(), head), media_type="application/json")

    async def get_application(self, request: Request) -> Response:
        index, error = self._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        return JSONResponse(documents.full_application(*self.state.view(index)))

    async def resource_tree(self, request: Request) -> Response:
        index, error = self._app_or_error(request, request.path_params["applicationName"])
        if error is not None:
            return error
        return JSONResponse(live.resource_tree(self.state.view(index)[0]))

    async def events(self, request: Request) -> Response:
        index, error = self._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        return JSONResponse(live.events(self.state.view(index)[0]))

    async def logs(self, request: Request) -> Response:
        index, error = self._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        query = request.query_params
        raw_tail = query.get("tailLines")
        if raw_tail is not None and not raw_tail.lstrip("-").isdigit():
            return grpc_error(3, f"invalid tailLines {raw_tail!r}")
        entries = live.log_entries(
            self.state.view(index)[0], tail=int(raw_tail) if raw_tail else None,
            pod=query.get("podName") or None, text=query.get("filter") or None,
            match_case=query.get("matchCase") == "true")
        if "text/event-stream" in request.headers.get("accept", ""):
            lines = (f"data: {_dumps({'result': e})}\n\n".encode() for e in entries)
            return StreamingResponse(lines, media_type="text/event-stream")
        lines = (f"{_dumps({'result': e})}\n".encode() for e in entries)
        return StreamingResponse(lines, media_type="application/json")

    async def sync(self, request: Request) -> Response:
        index, error = self._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return grpc_error(3, "invalid JSON body")
        dry_run = bool(body.get("dryRun"))
        accepted, changes = self.state.start_sync(
            index, dry_run=dry_run, revision=body.get("revision"), prune=bool(body.get("prune")))
        if not accepted:
            return grpc_error(9, "another operation is already in progress")
        rec, op_state, operation = self.state.view(index)
        document = documents.full_application(rec, op_state, operation)
        if dry_run:
            document["operation"] = {"sync": {"dryRun": True, "prune": bool(body.get("prune")),
                                              "resources": [
                                                  {k: r.get(k, "") for k in
                                                   ("group", "kind", "name", "namespace")}
                                                  for r in changes]},
                                     "initiatedBy": {"username": self.state.username}}
        return JSONResponse(document)

    # -- inventory lists --------------------------------------------------------------------
    async def list_projects(self, request: Request) -> Response:
        return self._inventory(request, inventory.projects(self.state.fleet))

    async def list_applicationsets(self, request: Request) -> Response:
        query = request.query_params
        projects = set(query.getlist("projects"))
        matches = parse_selector(query.get("selector", ""))
        items = (s for s in inventory.applicationsets(self.state.fleet)
                 if (not projects or s["spec"]["template"]["spec"]["project"] in projects)
                 and matches(s["metadata"].get("labels", {})))
        return self._inventory(request, items)

    async def list_clusters(self, request: Request) -> Response:
        query = request.query_params
        server, name = query.get("server"), query.get("name")
        items = (c for c in inventory.clusters(self.state.fleet)
                 if (not server or c["server"] == server) and (not name or c["name"] == name))
        return self._inventory(request, items)

    def _inventory(self, request: Request, items: Iterable[dict[str, Any]]) -> Response:
        denied = self._deny(request)
        if denied is not None:
            return denied
        body = _list_body(_dumps(item) for item in items)
        return StreamingResponse(body, media_type="application/json")


class _JsonOnlyPosts:
    """ASGI middleware: a non-GET without a JSON content type gets Argo CD's plain-text 415."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            content_type = dict(scope["headers"]).get(b"content-type", b"").decode("latin-1")
            if not content_type.lower().startswith("application/json"):
                await PlainTextResponse("Invalid content type\n", 415)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_sandbox_app(fleet_spec: FleetSpec | None = None, token: str = DEFAULT_TOKEN,
                       **options: Any) -> Starlette:
    """A Starlette app serving a generated fleet; `options` go to `SandboxState`."""
    api = SandboxApi(SandboxState.create(fleet_spec, token=token, **options))
    from pilothouse.sandbox.argocd.changes_api import ChangesApi  # it builds on this module

    changes = ChangesApi(api)
    apps = "/api/v1/applications"
    routes = [
        Route("/api/version", api.version, methods=["GET"]),
        Route("/api/v1/session", api.create_session, methods=["POST"]),
        Route("/api/v1/session/userinfo", api.userinfo, methods=["GET"]),
        Route(apps, api.list_applications, methods=["GET"]),
        Route(apps + "/{name}", api.get_application, methods=["GET"]),
        Route(apps + "/{applicationName}/resource-tree", api.resource_tree, methods=["GET"]),
        Route(apps + "/{name}/events", api.events, methods=["GET"]),
        Route(apps + "/{name}/logs", api.logs, methods=["GET"]),
        Route(apps + "/{name}/sync", api.sync, methods=["POST"]),
        Route(apps + "/{name}", changes.patch, methods=["PATCH"]),
        Route(apps + "/{name}/revisions/{revision}/metadata", changes.revision_metadata,
              methods=["GET"]),
        Route(apps + "/{applicationName}/managed-resources", changes.managed_resources,
              methods=["GET"]),
        Route(apps + "/{appName}/server-side-diff", changes.server_side_diff, methods=["GET"]),
        Route(apps + "/{name}/manifests", changes.manifests, methods=["GET"]),
        Route(apps + "/{name}/rollback", changes.rollback, methods=["POST"]),
        Route(apps + "/{name}/resource/actions", changes.list_actions, methods=["GET"]),
        Route(apps + "/{name}/resource/actions", changes.run_action, methods=["POST"]),
        Route(apps + "/{name}/resource/actions/v2", changes.run_action, methods=["POST"]),
        Route("/_sandbox/applications/{name}/deploy", changes.hook_deploy, methods=["POST"]),
        Route("/_sandbox/applications/{name}/drift", changes.hook_drift, methods=["POST"]),
        Route("/api/v1/projects", api.list_projects, methods=["GET"]),
        Route("/api/v1/applicationsets", api.list_applicationsets, methods=["GET"]),
        Route("/api/v1/clusters", api.list_clusters, methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.add_middleware(_JsonOnlyPosts)
    app.add_middleware(SandboxHeader)
    app.state.sandbox = api.state
    return app
