"""The sandbox's change API: deploy history consistent with the fleet and GitHub, diffs,
rollback with Argo CD's auto-sync rule, resource actions, and the test hooks."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from pilothouse.sandbox import main_line_data
from pilothouse.sandbox.argocd import RunningSandbox, deploys, running_sandbox
from pilothouse.sandbox.argocd.deploys import RECENT
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.sandbox.github.commits import main_line_of, shared_main_line_module
from pilothouse.sandbox.world_description import WorldDescription
from pilothouse.sandbox.worlds import WORLDS

FLEET = Fleet()
APPS = [FLEET.app(i) for i in range(len(FLEET))]
SHARED = "https://github.com/acme-corp/platform-deployments.git"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with running_sandbox(operation_seconds=0.3) as running:
        yield running


@pytest.fixture
def api(sandbox: RunningSandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {sandbox.token}"}
    with httpx.Client(base_url=sandbox.url, headers=headers, timeout=30) as client:
        yield client


def epoch(stamp: str) -> float:
    return datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def pick(sync: str, health: str, *, auto: bool, repo: str | None = None, skip: int = 0) -> str:
    found = [a.name for a in APPS if a.sync == sync and a.health == health
             and a.auto_sync == auto and (repo is None or a.repo == repo)]
    return found[skip]


def settle(api: httpx.Client, path: str) -> dict:
    for _ in range(100):
        doc = api.get(path).json()
        if "operation" not in doc and doc["status"]["health"]["status"] != "Progressing":
            return doc
        time.sleep(0.05)
    raise AssertionError("the operation never finished")


def test_history_is_consistent_with_the_fleet_and_github(api: httpx.Client) -> None:
    commits = {c.sha: c for c in main_line_of("platform-deployments")}
    apps = api.get("/api/v1/applications", params={"projects": "catalog"}).json()["items"]
    for app in apps:
        history, status = app["status"]["history"], app["status"]
        assert [h["id"] for h in history] == sorted(h["id"] for h in history)
        assert status["sync"]["revision"] == history[-1]["revision"]
        newest = epoch(history[-1]["deployedAt"])
        # A Degraded app was deployed recently; the others not since the breakage.
        assert (newest >= RECENT - 2 * 86_400) if status["health"]["status"] == "Degraded" \
            else (newest < RECENT)
        if app["spec"]["source"]["repoURL"] == SHARED:
            for entry in history:
                commit = commits[entry["revision"]]
                meta = api.get(f"/api/v1/applications/{app['metadata']['name']}/revisions/"
                               f"{entry['revision']}/metadata").json()
                assert meta["message"] == commit.message and f"(#{commit.pull})" in meta["message"]
                assert meta["author"].startswith(commit.author)


def test_managed_resources_show_drift_only_on_out_of_sync_apps(api: httpx.Client) -> None:
    drifted = pick("OutOfSync", "Healthy", auto=False)
    synced = pick("Synced", "Healthy", auto=False)
    items = api.get(f"/api/v1/applications/{drifted}/managed-resources").json()["items"]
    assert {i["kind"] for i in items if i["modified"]} == {"ConfigMap", "Deployment"}
    live = json.loads(next(i for i in items if i["kind"] == "ConfigMap")["liveState"])
    target = json.loads(next(i for i in items if i["kind"] == "ConfigMap")["targetState"])
    assert live["data"]["LOG_LEVEL"] == "debug" and target["data"]["LOG_LEVEL"] == "info"
    clean = api.get(f"/api/v1/applications/{synced}/managed-resources").json()["items"]
    assert len(clean) == 9 and not any(i["modified"] for i in clean)
    diff = api.get(f"/api/v1/applications/{drifted}/server-side-diff").json()
    assert diff["modified"] is True


def test_rollback_follows_argocd_rules_and_lands_in_history(api: httpx.Client) -> None:
    name = pick("Synced", "Degraded", auto=True)
    path = f"/api/v1/applications/{name}"
    history = api.get(path).json()["status"]["history"]
    previous = history[-2]
    missing = api.post(f"{path}/rollback", json={"id": 1})
    refused = api.post(f"{path}/rollback", json={"id": previous["id"]})
    assert missing.status_code == 400 and "does not have deployment id 1" in missing.json()["error"]
    assert refused.status_code == 400
    assert refused.json()["error"] == "rollback cannot be initiated when auto-sync is enabled"
    assert api.post(f"{path}/rollback", json={"id": previous["id"], "dryRun": True}) \
        .json()["status"]["history"] == history  # a dry run changes nothing
    api.patch(path, json={"patch": '{"spec":{"syncPolicy":{"automated":null}}}'})
    started = api.post(f"{path}/rollback", json={"id": previous["id"]})
    busy = api.post(f"{path}/rollback", json={"id": previous["id"]})
    assert started.status_code == 200 and started.json()["operation"]["sync"]["revision"] == \
        previous["revision"]
    assert busy.status_code == 400 and "already in progress" in busy.json()["error"]
    done = settle(api, path)
    assert done["status"]["history"][-1]["revision"] == previous["revision"]
    assert done["status"]["health"]["status"] == "Healthy"
    assert done["status"]["sync"]["status"] == "OutOfSync"  # the branch is ahead of it now
    assert "automated" not in done["spec"]["syncPolicy"]


def test_resource_actions_where_offered(api: httpx.Client) -> None:
    name = pick("Synced", "Healthy", auto=True, skip=3)
    app = next(a for a in APPS if a.name == name)
    path = f"/api/v1/applications/{name}"
    deployment = {"kind": "Deployment", "resourceName": f"{app.team}-{app.service}",
                  "namespace": app.namespace}
    service = {**deployment, "kind": "Service"}
    offered = api.get(f"{path}/resource/actions", params=deployment).json()["actions"]
    assert [a["name"] for a in offered] == ["restart", "scale"]
    assert api.get(f"{path}/resource/actions", params=service).json() == {"actions": []}
    assert api.post(f"{path}/resource/actions", params=service, json="restart").status_code \
        == 400
    assert api.post(f"{path}/resource/actions/v2", json={**deployment, "action": "scale"}) \
        .status_code == 400  # no replicas
    restarted = api.post(f"{path}/resource/actions", params=deployment, json="restart")
    assert restarted.json()["status"]["health"]["status"] == "Progressing"
    assert settle(api, path)["status"]["health"]["status"] == "Healthy"
    api.post(f"{path}/resource/actions/v2", json={
        **deployment, "action": "scale",
        "resourceActionParameters": [{"name": "replicas", "value": "7"}]})
    live = api.get(f"{path}/managed-resources", params={"kind": "Deployment"}).json()["items"]
    assert json.loads(live[0]["liveState"])["spec"]["replicas"] == 7 and live[0]["modified"]


def test_hooks_deploy_a_new_commit_and_add_drift(api: httpx.Client) -> None:
    name = pick("Synced", "Healthy", auto=False, skip=5)
    path = f"/api/v1/applications/{name}"
    before = api.get(path).json()["status"]
    deployed = api.post(f"/_sandbox/applications/{name}/deploy", json={}).json()
    after = api.get(path).json()["status"]
    assert after["sync"]["revision"] == deployed["revision"] != before["sync"]["revision"]
    assert after["history"][-1]["id"] == before["history"][-1]["id"] + 1
    api.post(f"/_sandbox/applications/{name}/drift", json={})
    drifted = api.get(path).json()["status"]
    assert drifted["sync"]["status"] == "OutOfSync"
    anonymous = httpx.post(f"{api.base_url}/_sandbox/applications/{name}/drift", json={})
    assert anonymous.status_code == 401


@pytest.mark.parametrize("world", WORLDS.values(), ids=list(WORLDS))
def test_the_argocd_sandbox_deploys_the_github_sandboxs_main_line(
    world: WorldDescription,
) -> None:
    """The two sandboxes share data, not code: each world's generated module must match the
    generator."""
    module = Path(main_line_data.__file__).with_name(f"{world.main_line_module}.py")
    assert module.read_text() == shared_main_line_module(world), (
        "Rewrite them: python -c \"from pilothouse.sandbox.github.commits import "
        "write_shared_main_lines as w; w()\"")
    repo = world.main_line_repo
    assert deploys.main_line_of(repo, world) == tuple(
        deploys.Commit(c.sha, c.author, c.date, c.message)
        for c in main_line_of(repo, world))
