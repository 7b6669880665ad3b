"""Sandbox responses validate against Argo CD's own swagger definitions, strictly.

`argocd_swagger.json` beside this file is Argo CD's `assets/swagger.json` (argoproj/argo-cd at
37ee0097cf85, v3.6.0, Apache-2.0). It is Swagger 2.0 (JSON Schema draft 4) and declares no
required fields and allows extra keys, so plain validation would pass almost anything. Here
every object definition is closed (`additionalProperties: false`) so a misspelt or invented
field fails, except the wrappers whose JSON form is arbitrary (`v1JSON`, `v1FieldsV1`, ...).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

SWAGGER = Path(__file__).with_name("argocd_swagger.json")
# These serialize as arbitrary JSON, not as the {"raw": ...} object the swagger describes.
OPEN_DEFINITIONS = frozenset({"v1JSON", "v1FieldsV1", "runtimeRawExtension"})
APP = "/api/v1/applications/payments-api-production"
# A Degraded app deploying platform-deployments commits (Git revisions, a Deployment to act on).
GIT_APP = "/api/v1/applications/catalog-web-staging"
DEPLOYMENT = {"kind": "Deployment", "resourceName": "catalog-web", "namespace": "catalog-staging"}


@pytest.fixture(scope="module")
def definitions() -> dict[str, Any]:
    found = copy.deepcopy(json.loads(SWAGGER.read_text())["definitions"])
    for name, schema in found.items():
        if name in OPEN_DEFINITIONS:
            continue
        if "allOf" in schema:  # closing a schema needs every property in one place
            properties = dict(schema.get("properties", {}))
            for part in schema.pop("allOf"):
                properties.update(found[part["$ref"].rsplit("/", 1)[1]].get("properties", {}))
            schema["properties"] = properties
        if schema.get("type") == "object" and "properties" in schema:
            schema.setdefault("additionalProperties", False)
    return found


def errors(definitions: dict[str, Any], name: str, document: Any) -> list[str]:
    validator = jsonschema.Draft4Validator({"$ref": f"#/definitions/{name}",
                                            "definitions": definitions})
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(document)]


def test_closing_the_schema_catches_an_invented_field(definitions: dict[str, Any]) -> None:
    assert errors(definitions, "v1alpha1Application", {"spec": {"repoUrl": "x"}})
    assert errors(definitions, "v1alpha1Application", {"metadata": {"generation": "7"}})
    assert not errors(definitions, "v1alpha1Application", {"spec": {"project": "p"}})


@pytest.mark.parametrize(("definition", "method", "path", "params"), [
    ("v1alpha1ApplicationList", "GET", "/api/v1/applications", {"projects": "payments"}),
    ("v1alpha1ApplicationList", "GET", "/api/v1/applications",
     {"fields": "items.metadata.name,items.spec,items.status.health,items.status.sync.status,"
                "items.status.operationState.phase,items.status.summary"}),
    ("v1alpha1Application", "GET", APP, {}),
    ("v1alpha1ApplicationTree", "GET", f"{APP}/resource-tree", {}),
    ("eventsEventList", "GET", f"{APP}/events", {}),
    ("v1alpha1AppProjectList", "GET", "/api/v1/projects", {}),
    ("v1alpha1ApplicationSetList", "GET", "/api/v1/applicationsets", {}),
    ("v1alpha1ClusterList", "GET", "/api/v1/clusters", {}),
    ("versionVersionMessage", "GET", "/api/version", {}),
    ("sessionGetUserInfoResponse", "GET", "/api/v1/session/userinfo", {}),
    ("runtimeError", "GET", "/api/v1/applications/nope", {}),
    ("v1alpha1Application", "GET", GIT_APP, {}),
    ("applicationManagedResourcesResponse", "GET", f"{GIT_APP}/managed-resources", {}),
    ("applicationApplicationServerSideDiffResponse", "GET", f"{GIT_APP}/server-side-diff", {}),
    ("repositoryManifestResponse", "GET", f"{GIT_APP}/manifests", {}),
    ("applicationResourceActionsListResponse", "GET", f"{GIT_APP}/resource/actions",
     DEPLOYMENT),
    ("runtimeError", "GET", f"{APP}/revisions/1.2.3/metadata", {}),
])
def test_responses_match_the_swagger(definitions: dict[str, Any], api: httpx.Client,
                                     definition: str, method: str, path: str,
                                     params: dict[str, str]) -> None:
    response = api.request(method, path, params=params)
    assert errors(definitions, definition, response.json()) == []


def test_sync_session_and_log_stream_match_the_swagger(definitions: dict[str, Any],
                                                       api: httpx.Client,
                                                       anonymous: httpx.Client) -> None:
    synced = api.post(f"{APP}/sync", json={"dryRun": True}).json()
    assert errors(definitions, "v1alpha1Application", synced) == []
    session = anonymous.post("/api/v1/session",
                             json={"username": "admin", "password": "sandbox-password"})
    assert errors(definitions, "sessionSessionResponse", session.json()) == []
    for line in api.get(f"{APP}/logs", params={"tailLines": 5}).text.splitlines():
        message = json.loads(line)
        assert list(message) == ["result"]
        assert errors(definitions, "applicationLogEntry", message["result"]) == []


def test_history_revision_metadata_and_changes_match_the_swagger(
        definitions: dict[str, Any], api: httpx.Client) -> None:
    app = api.get(GIT_APP).json()
    history = app["status"]["history"]
    assert history and all(errors(definitions, "v1alpha1RevisionHistory", h) == []
                           for h in history)
    metadata = api.get(f"{GIT_APP}/revisions/{history[-1]['revision']}/metadata")
    assert errors(definitions, "v1alpha1RevisionMetadata", metadata.json()) == []
    dry = api.post(f"{GIT_APP}/rollback", json={"id": history[-2]["id"], "dryRun": True})
    assert errors(definitions, "v1alpha1Application", dry.json()) == []
    refused = api.post(f"{GIT_APP}/rollback", json={"id": history[-2]["id"]})
    assert refused.status_code == 400  # auto-sync is on
    assert errors(definitions, "runtimeError", refused.json()) == []
    patched = api.patch(GIT_APP, json={"name": "catalog-web-staging", "patchType": "merge",
                                       "patch": '{"spec":{"syncPolicy":{"automated":null}}}'})
    assert errors(definitions, "v1alpha1Application", patched.json()) == []
    restarted = api.post(f"{GIT_APP}/resource/actions", params=DEPLOYMENT, json="restart")
    assert errors(definitions, "v1alpha1Application", restarted.json()) == []
