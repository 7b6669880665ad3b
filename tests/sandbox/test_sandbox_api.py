"""The sandbox answers like Argo CD: auth, errors, no paging, `fields=`, streams, sync rules."""

from __future__ import annotations

import json
import time

import httpx

from pilothouse.sandbox.argocd import RunningSandbox
from pilothouse.sandbox.argocd.fleet import Fleet

APPS = "/api/v1/applications"


def test_version_and_every_response_say_sandbox(anonymous: httpx.Client) -> None:
    version = anonymous.get("/api/version")
    assert version.status_code == 200
    assert "sandbox" in version.json()["Version"]
    assert "not a real Argo CD" in version.json()["ExtraBuildInfo"]
    for response in (version, anonymous.get(APPS), anonymous.get("/nowhere")):
        assert response.headers["x-pilothouse-sandbox"] == "true"


def test_no_token_is_401_no_session_information(anonymous: httpx.Client) -> None:
    response = anonymous.get(APPS)
    assert response.status_code == 401
    assert response.json() == {"error": "no session information", "code": 16,
                               "message": "no session information"}


def test_a_wrong_or_non_jwt_token_is_refused(anonymous: httpx.Client,
                                            sandbox: RunningSandbox) -> None:
    forged = anonymous.get(APPS, headers={"Authorization": "Bearer a.b.c"})
    assert forged.status_code == 401 and "invalid session" in forged.json()["error"]
    # The server reads a bearer token only when it has three parts; this one is ignored.
    plain = anonymous.get(APPS, headers={"Authorization": "Bearer sandbox-token"})
    assert plain.json()["error"] == "no session information"
    cookie = anonymous.get(f"{APPS}/payments-api-production",
                           headers={"Cookie": f"argocd.token={sandbox.token}"})
    assert cookie.status_code == 200


def test_session_login_and_userinfo(anonymous: httpx.Client, sandbox: RunningSandbox) -> None:
    assert anonymous.get("/api/v1/session/userinfo").json() == {"loggedIn": False}
    bad = anonymous.post("/api/v1/session", json={"username": "admin", "password": "nope"})
    assert bad.status_code == 401
    good = anonymous.post("/api/v1/session",
                          json={"username": sandbox.username, "password": sandbox.password})
    token = good.json()["token"]
    info = anonymous.get("/api/v1/session/userinfo",
                         headers={"Authorization": f"Bearer {token}"}).json()
    assert info == {"loggedIn": True, "username": "admin", "iss": "argocd"}


def test_list_returns_every_app_sorted_and_ignores_paging_parameters(api: httpx.Client) -> None:
    response = api.get(APPS, params={"limit": 5, "offset": 10, "page": 2, "search": "x"})
    items = response.json()["items"]
    assert len(items) == 819
    names = [item["metadata"]["name"] for item in items]
    assert names == sorted(names)
    assert "continue" not in response.json()["metadata"]
    # Streamed, not buffered: no Content-Length, chunked transfer.
    assert "content-length" not in response.headers


def test_list_filters(api: httpx.Client) -> None:
    fleet = Fleet()
    apps = [fleet.app(i) for i in range(len(fleet))]

    def names(**params: str | list[str]) -> set[str]:
        body = api.get(APPS, params={"fields": "items.metadata.name", **params}).json()
        return {item["metadata"]["name"] for item in body["items"]}

    assert names(selector="env=production,tier in (frontend)") == {
        a.name for a in apps if a.env == "production" and a.labels["tier"] == "frontend"}
    assert names(selector="!tier") == set()
    assert names(projects=["payments", "billing"]) == {
        a.name for a in apps if a.project in ("payments", "billing")}
    assert names(name="payments-api-production") == {"payments-api-production"}
    repo = apps[0].repo
    assert names(repo=repo) == {a.name for a in apps if a.repo == repo}


def test_bad_selector_is_a_500_with_grpc_code_2(api: httpx.Client) -> None:
    response = api.get(APPS, params={"selector": "env in (a"})
    assert response.status_code == 500
    assert response.json()["code"] == 2
    assert response.json()["message"].startswith("error parsing the selector")


def test_fields_projection_keeps_allow_listed_paths_in_alphabetical_order(
        api: httpx.Client) -> None:
    fields = ("items.status.sync.status,items.metadata.name,items.spec.project,"
              "items.metadata.uid,items.status.health,items.status.history")
    body = api.get(APPS, params={"fields": fields, "name": "payments-api-production"}).json()
    assert list(body) == ["items"]
    (item,) = body["items"]
    # uid and history are not on the allow-list, so they are dropped silently.
    assert list(item) == ["metadata", "spec", "status"]
    assert list(item["metadata"]) == ["name"]
    assert list(item["status"]) == ["health", "sync"]
    assert list(item["status"]["sync"]) == ["status"]
    assert len(json.dumps(item)) < 400


def test_fields_exclusion_drops_only_those_paths(api: httpx.Client) -> None:
    body = api.get(APPS, params={"fields": "-items.status.resources",
                                 "name": "payments-api-production"}).json()
    (item,) = body["items"]
    assert "resources" not in item["status"] and "history" in item["status"]


def test_get_is_the_full_object_never_trimmed(api: httpx.Client) -> None:
    app = api.get(f"{APPS}/payments-api-production", params={"fields": "items.metadata.name"})
    body = app.json()
    assert {"metadata", "spec", "status"} <= set(body)
    assert body["metadata"]["managedFields"] and body["status"]["history"]
    assert 5_000 < len(app.content) < 20_000


def test_missing_app_is_403_without_project_and_404_with_it(api: httpx.Client) -> None:
    hidden = api.get(f"{APPS}/nope")
    assert hidden.status_code == 403
    assert hidden.json() == {"error": "permission denied", "code": 7,
                             "message": "permission denied"}
    for path in (f"{APPS}/nope/resource-tree", f"{APPS}/nope/events", f"{APPS}/nope/logs"):
        assert api.get(path).status_code == 403
    missing = api.get(f"{APPS}/nope", params={"project": "payments"})
    assert missing.status_code == 404
    assert missing.json()["message"] == 'applications.argoproj.io "nope" not found'


def test_degraded_app_shows_its_trouble_in_tree_events_and_logs(api: httpx.Client) -> None:
    fleet = Fleet()
    degraded = next(fleet.app(i) for i in range(len(fleet))
                    if fleet.app(i).health == "Degraded" and fleet.app(i).replicas > 1)
    tree = api.get(f"{APPS}/{degraded.name}/resource-tree").json()
    pods = [n for n in tree["nodes"] if n["kind"] == "Pod"]
    assert len(pods) == degraded.replicas
    assert [p["health"]["status"] for p in pods].count("Degraded") == 1
    events = api.get(f"{APPS}/{degraded.name}/events").json()["items"]
    assert any(e["type"] == "Warning" and e["reason"] == "BackOff" for e in events)
    lines = api.get(f"{APPS}/{degraded.name}/logs", params={"tailLines": 3}).text.splitlines()
    entries = [json.loads(line)["result"] for line in lines]
    assert entries[-1]["last"] is True and entries[-1]["content"] == ""
    assert len(entries) == 3 * degraded.replicas + 1
    assert any("ERROR" in e["content"] for e in entries)


def test_logs_filter_and_server_sent_events(api: httpx.Client) -> None:
    path = f"{APPS}/payments-api-production/logs"
    filtered = api.get(path, params={"filter": "/v1/api/3 "}).text.splitlines()
    assert all("/v1/api/3 " in json.loads(x)["result"]["content"] for x in filtered[:-1])
    assert len(filtered) > 1
    sse = api.get(path, params={"tailLines": 1}, headers={"Accept": "text/event-stream"})
    assert sse.headers["content-type"].startswith("text/event-stream")
    assert sse.text.startswith("data: {\"result\":")
    assert api.get(path, params={"tailLines": "many"}).status_code == 400


def test_post_without_json_content_type_is_415_plain_text(api: httpx.Client) -> None:
    response = api.post(f"{APPS}/payments-api-production/sync", content=b"{}",
                        headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.text == "Invalid content type\n"


def test_sync_dry_run_then_real_sync_then_in_progress_then_done(api: httpx.Client) -> None:
    fleet = Fleet()
    drifted = next(fleet.app(i) for i in range(len(fleet)) if fleet.app(i).sync == "OutOfSync")
    path = f"{APPS}/{drifted.name}/sync"
    dry = api.post(path, json={"dryRun": True}).json()
    assert dry["operation"]["sync"]["dryRun"] is True
    assert dry["operation"]["sync"]["resources"]
    real = api.post(path, json={"prune": True})
    assert real.status_code == 200
    assert real.json()["status"]["operationState"]["phase"] == "Running"
    busy = api.post(path, json={})
    assert busy.status_code == 400
    assert busy.json() == {"error": "another operation is already in progress", "code": 9,
                           "message": "another operation is already in progress"}
    deadline = time.monotonic() + 5
    while api.get(f"{APPS}/{drifted.name}").json()["status"]["operationState"]["phase"] \
            == "Running":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    after = api.get(f"{APPS}/{drifted.name}").json()
    assert after["status"]["sync"]["status"] == "Synced"
    assert after["status"]["operationState"]["phase"] == "Succeeded"


def test_projects_applicationsets_and_sanitized_clusters(api: httpx.Client) -> None:
    projects = api.get("/api/v1/projects").json()["items"]
    assert [p["metadata"]["name"] for p in projects] == sorted(
        p["metadata"]["name"] for p in projects)
    sets = api.get("/api/v1/applicationsets").json()["items"]
    assert len(sets) == 65
    clusters = api.get("/api/v1/clusters").json()["items"]
    assert clusters[-1]["server"] == "https://kubernetes.default.svc"
    text = json.dumps(clusters)
    assert "bearerToken" not in text and "password" not in text and "certData" not in text
    only = api.get("/api/v1/clusters", params={"name": "eks-prod-eu-west-1"}).json()["items"]
    assert [c["name"] for c in only] == ["eks-prod-eu-west-1"]


def test_unknown_path_and_wrong_method_are_plain_text(api: httpx.Client) -> None:
    missing = api.get("/api/v1/nothing")
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/plain")
    wrong = api.delete("/api/v1/applications/payments-api-production/events",
                       headers={"Content-Type": "application/json"})
    assert wrong.status_code == 405 and wrong.headers["content-type"].startswith("text/plain")
