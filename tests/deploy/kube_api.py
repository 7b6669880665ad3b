"""A small Kubernetes API server: discovery, and create/read/update of namespaced objects.

Enough of the API for Helm's install action (capabilities, the release record in a Secret, the
chart's objects), so the real Helm engine renders and installs the chart and the test reads back
exactly what a cluster would have received. Nothing is scheduled or run.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

#: (group, version, plural, kind) of every resource this server knows.
RESOURCES: tuple[tuple[str, str, str, str], ...] = (
    ("", "v1", "secrets", "Secret"),
    ("", "v1", "configmaps", "ConfigMap"),
    ("", "v1", "services", "Service"),
    ("", "v1", "serviceaccounts", "ServiceAccount"),
    ("apps", "v1", "deployments", "Deployment"),
)
_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def _resource_list(group: str, version: str) -> dict[str, Any]:
    resources = [{"name": plural, "singularName": kind.lower(), "namespaced": True, "kind": kind,
                  "verbs": _VERBS}
                 for g, v, plural, kind in RESOURCES if (g, v) == (group, version)]
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": resources}


def _not_found(name: str) -> JSONResponse:
    return JSONResponse({"kind": "Status", "apiVersion": "v1", "metadata": {},
                         "status": "Failure", "reason": "NotFound", "code": 404,
                         "message": f"{name} not found"}, status_code=404)


class KubeApi:
    """The objects created, by (plural, namespace, name)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.app = Starlette(routes=[
            Route("/version", self.version),
            Route("/api", self.core_versions),
            Route("/apis", self.groups),
            Route("/api/v1", lambda r: JSONResponse(_resource_list("", "v1"))),
            Route("/apis/{group}/{version}",
                  lambda r: JSONResponse(_resource_list(r.path_params["group"],
                                                        r.path_params["version"]))),
            Route("/api/v1/namespaces/{ns}/{plural}", self.collection, methods=["GET", "POST"]),
            Route("/apis/{group}/{version}/namespaces/{ns}/{plural}", self.collection,
                  methods=["GET", "POST"]),
            Route("/api/v1/namespaces/{ns}/{plural}/{name}", self.item,
                  methods=["GET", "PUT", "PATCH", "DELETE"]),
            Route("/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}", self.item,
                  methods=["GET", "PUT", "PATCH", "DELETE"]),
        ])

    def created(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects.values() if o.get("kind") == kind]

    async def version(self, request: Request) -> Response:
        return JSONResponse({"major": "1", "minor": "30", "gitVersion": "v1.30.0",
                             "platform": "linux/amd64"})

    async def core_versions(self, request: Request) -> Response:
        return JSONResponse({"kind": "APIVersions", "versions": ["v1"],
                             "serverAddressByClientCIDRs": []})

    async def groups(self, request: Request) -> Response:
        names = sorted({g for g, *_ in RESOURCES if g})
        return JSONResponse({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            {"name": g, "versions": [{"groupVersion": f"{g}/v1", "version": "v1"}],
             "preferredVersion": {"groupVersion": f"{g}/v1", "version": "v1"}} for g in names]})

    async def collection(self, request: Request) -> Response:
        ns, plural = request.path_params["ns"], request.path_params["plural"]
        if request.method == "GET":
            items = [o for (p, n, _), o in self.objects.items() if (p, n) == (plural, ns)]
            kind = next(k for *_, pl, k in RESOURCES if pl == plural)
            return JSONResponse({"kind": f"{kind}List", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": "1"}, "items": items})
        body = json.loads(await request.body())
        return JSONResponse(self._store(plural, ns, body), status_code=201)

    async def item(self, request: Request) -> Response:
        ns, plural, name = (request.path_params[k] for k in ("ns", "plural", "name"))
        key = (plural, ns, name)
        if request.method == "GET":
            return JSONResponse(self.objects[key]) if key in self.objects else _not_found(name)
        if request.method == "DELETE":
            return JSONResponse(self.objects.pop(key)) if key in self.objects else _not_found(name)
        if key not in self.objects:
            return _not_found(name)
        return JSONResponse(self._store(plural, ns, json.loads(await request.body())))

    def _store(self, plural: str, ns: str, body: dict[str, Any]) -> dict[str, Any]:
        meta = body.setdefault("metadata", {})
        meta.setdefault("namespace", ns)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta["resourceVersion"] = str(len(self.objects) + 2)
        self.objects[(plural, ns, meta["name"])] = body
        return body
