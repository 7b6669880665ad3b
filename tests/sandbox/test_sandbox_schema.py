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
