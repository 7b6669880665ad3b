"""The sandbox's change endpoints: revisions, manifests, diffs, rollback, resource actions, patch.

As the real server answers them (swagger `v1alpha1RevisionMetadata`, `ManagedResourcesResponse`
with `liveState`/`targetState` as JSON strings, `ServerSideDiffResponse`, `ManifestResponse`),
with its rules: a real rollback of an auto-synced app is refused (FailedPrecondition
"rollback cannot be initiated when auto-sync is enabled"), one operation at a time, actions
only where the resource offers them. `/_sandbox/...` are test hooks that change the world
behind an approval (a new commit deployed, a hand edit); they need the token too.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pilothouse.sandbox.argocd import deploys, documents, manifests
from pilothouse.sandbox.argocd.api import SandboxApi, grpc_error

_ACTIONS: dict[str, list[dict[str, Any]]] = {
    "Deployment": [{"name": "restart", "disabled": False, "iconClass": "fa fa-fw fa-redo"},
                   {"name": "scale", "params": [{"name": "replicas"}], "disabled": False,
                    "iconClass": "fa fa-fw fa-sliders"}],
}
MAX_REPLICAS = 50


async def _json(request: Request) -> tuple[Any, Response | None]:
    try:
        return json.loads(await request.body() or b"{}"), None
    except ValueError:
        return None, grpc_error(3, "invalid JSON body")


class ChangesApi:
    """Handlers for the change endpoints, over the same state as `SandboxApi`."""

    def __init__(self, api: SandboxApi) -> None:
        self.api = api
        self.state = api.state

    def _document(self, index: int) -> JSONResponse:
        return JSONResponse(documents.full_application(*self.state.view(index)))

    # -- reading ------------------------------------------------------------------------------
    async def revision_metadata(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        rec = self.state.record(index)
        revision = request.path_params["revision"]
        if rec.source_type == "Helm" and rec.repo.startswith("https://charts."):
            return grpc_error(3, "revision metadata is only available for Git sources; "
                                 "this application deploys a Helm chart")
        found = deploys.revision_metadata(rec, revision)
        if found is None:
            return grpc_error(5, f"unable to resolve revision {revision!r} in {rec.repo}")
        return JSONResponse(found)

    async def managed_resources(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["applicationName"])
        if error is not None:
            return error
        query = request.query_params
        items = manifests.managed_resources(self.state.record(index), kind=query.get("kind"),
                                            name=query.get("name"),
                                            namespace=query.get("namespace"))
        return JSONResponse({"items": items})

    async def server_side_diff(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["appName"])
        if error is not None:
            return error
        return JSONResponse(manifests.server_side_diff(self.state.record(index)))

    async def manifests(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        rec = self.state.record(index)
        wanted = request.query_params.get("revision")
        deploy = deploys.find(rec, wanted) if wanted else deploys.head(rec)
        if deploy is None:
            return grpc_error(2, f"rpc error: unable to resolve '{wanted}' to a commit SHA")
        return JSONResponse({
            "manifests": [json.dumps(m, separators=(",", ":"))
                          for m in manifests.target_manifests(rec, deploy)],
            "namespace": rec.namespace, "server": rec.cluster_server,
            "revision": deploy.revision, "sourceType": rec.source_type})

    # -- changing -----------------------------------------------------------------------------
    async def rollback(self, request: Request) -> Response:
        name = request.path_params["name"]
        index, error = self.api._app_or_error(request, name)
        if error is not None:
            return error
        body, bad = await _json(request)
        if bad is not None:
            return bad
        rec = self.state.record(index)
        wanted = body.get("id")
        history = deploys.deploys(rec)[-documents.HISTORY_LIMIT:]
        target = next((d for d in history if str(d.id) == str(wanted)), None)
        if target is None:
            return grpc_error(3, f"application {name} does not have deployment id {wanted} "
                                 "in history")
        dry_run = bool(body.get("dryRun"))
        if not dry_run and rec.auto_sync:
            return grpc_error(9, "rollback cannot be initiated when auto-sync is enabled")
        if self.state.busy(index):
            return grpc_error(9, "another operation is already in progress")
        if not dry_run:
            self.state.start_rollback(index, target, prune=bool(body.get("prune")))
        return self._document(index)

    async def patch(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        body, bad = await _json(request)
        if bad is not None:
            return bad
        if body.get("patchType", "merge") != "merge":
            return grpc_error(3, "the sandbox applies merge patches only")
        try:
            patch = json.loads(body.get("patch") or "{}")
            policy = patch["spec"]["syncPolicy"]
            automated = policy["automated"]
        except (ValueError, KeyError, TypeError):
            return grpc_error(3, "the sandbox can patch spec.syncPolicy.automated only")
        self.state.set_auto_sync(index, automated is not None)
        return self._document(index)

    def _resource(self, index: int,
                  query: dict[str, Any]) -> tuple[dict[str, Any] | None, Response | None]:
        """The managed resource the query names, or Argo CD's error."""
        kind, name = query.get("kind"), query.get("resourceName")
        if not kind or not name:
            return None, grpc_error(3, "kind and resourceName are required")
        items = manifests.managed_resources(self.state.record(index), kind=kind, name=name,
                                            namespace=query.get("namespace") or None)
        if not items or items[0]["liveState"] == "null":
            return None, grpc_error(5, f'{kind} "{name}" not found as part of application')
        return items[0], None

    async def list_actions(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        resource, missing = self._resource(index, dict(request.query_params))
        if missing is not None or resource is None:
            return missing or grpc_error(5, "not found")
        return JSONResponse({"actions": _ACTIONS.get(resource["kind"], [])})

    async def run_action(self, request: Request) -> Response:
        """`POST .../resource/actions` (body: the action name as a JSON string) and `/v2`."""
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        body, bad = await _json(request)
        if bad is not None:
            return bad
        query: dict[str, Any] = dict(request.query_params)
        params: dict[str, str] = {}
        if isinstance(body, dict):  # v2: everything in the body
            query = {**query, **{k: body.get(k) for k in ("kind", "resourceName", "namespace",
                                                          "group", "version") if body.get(k)}}
            action = body.get("action")
            params = {str(p.get("name")): str(p.get("value"))
                      for p in body.get("resourceActionParameters") or []}
        else:
            action = body
        resource, missing = self._resource(index, query)
        if missing is not None or resource is None:
            return missing or grpc_error(5, "not found")
        offered = {a["name"] for a in _ACTIONS.get(resource["kind"], [])}
        if action not in offered:
            return grpc_error(3, f"action {action!r} is not available for {resource['kind']}")
        replicas = None
        if action == "scale":
            raw = params.get("replicas", "")
            if not raw.isdigit() or not 0 <= int(raw) <= MAX_REPLICAS:
                return grpc_error(3, f"scale needs a replicas parameter from 0 to "
                                     f"{MAX_REPLICAS}")
            replicas = int(raw)
        self.state.run_action(index, str(action), replicas)
        return self._document(index)

    # -- test hooks ---------------------------------------------------------------------------
    async def hook_deploy(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        body, bad = await _json(request)
        if bad is not None:
            return bad
        deploy = self.state.deploy_new_commit(index, str(body.get("message") or ""))
        return JSONResponse({"id": deploy.id, "revision": deploy.revision})

    async def hook_drift(self, request: Request) -> Response:
        index, error = self.api._app_or_error(request, request.path_params["name"])
        if error is not None:
            return error
        self.state.add_drift(index)
        return JSONResponse({"drift": self.state.overlay(index).drift})
