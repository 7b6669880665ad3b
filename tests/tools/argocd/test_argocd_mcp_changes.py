"""History, diff, what changed, rollback and resource actions through the real MCP client.

The sandbox runs over HTTP; evidence is changed between the dry run and the approved call by
changing the sandbox itself (a new commit deployed, a hand edit), and then nothing runs.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from argocd_harness import SCENARIOS, Connect

from pilothouse.config import Settings
from pilothouse.sandbox.argocd import RunningSandbox, running_sandbox
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.sandbox.github.commits import main_line_of
from pilothouse.tools.argocd.client import ArgoCDClient
from pilothouse.tools.argocd.follow import follow_health

FLEET = Fleet(SCENARIOS)
APPS = [FLEET.app(i) for i in range(len(FLEET))]
SHARED = "https://github.com/acme-corp/platform-deployments.git"
COMMITS = {c.sha: c for c in main_line_of("platform-deployments")}


@pytest.fixture(scope="module")
def fleet() -> Iterator[RunningSandbox]:
    """A fleet of this module's own: these tests change apps the list tests count."""
    with running_sandbox(SCENARIOS, operation_seconds=0.5) as running:
        yield running


def pick(sync: str, health: str, *, auto: bool, skip: int, shared: bool = True) -> str:
    """An app no other test touches (they take the first few of each kind)."""
    found = [a.name for a in APPS if a.sync == sync and a.health == health
             and a.auto_sync == auto and (a.repo == SHARED) == shared]
    return found[-1 - skip]


def hook(fleet: RunningSandbox, name: str, what: str) -> dict:
    response = httpx.post(f"{fleet.url}/_sandbox/applications/{name}/{what}", json={},
                          headers={"Authorization": f"Bearer {fleet.token}"})
    assert response.status_code == 200
    return dict(response.json())


async def test_read_only_serves_the_reading_change_tools_only(connect: Connect) -> None:
    async with connect() as argocd:
        names = await argocd.names()
    assert {"get_application_history", "diff_application", "get_application_changes"} <= \
        set(names)
    assert "rollback_application" not in names and "run_resource_action" not in names


async def test_history_is_paged_newest_first_with_the_commits(connect: Connect) -> None:
    name = pick("Synced", "Healthy", auto=True, skip=0)
    async with connect() as argocd:
        first = await argocd("get_application_history", name=name, page_size=2)
        second = await argocd("get_application_history", name=name, page=2, page_size=2)
    rows = first.payload["items"] + second.payload["items"]
    total = first.payload["pagination"]["total_items"]
    assert 3 <= total <= 5 and first.payload["pagination"]["has_next"] is True
    assert [r["id"] for r in rows] == sorted((r["id"] for r in rows), reverse=True)
    assert rows[0]["current"] is True and not any(r.get("current") for r in rows[1:])
    assert first.payload["github_repo"] == "acme-corp/platform-deployments"
    assert "Revisions are commits of acme-corp/platform-deployments on GitHub." in first.text
    for row in rows:
        commit = COMMITS[row["revision"]]
        assert row["commit"]["message"] == commit.message
        assert row["commit"]["author"] == commit.author
        assert row["initiated_by"] == "auto-sync"


async def test_diff_shows_the_hand_edits_capped_with_counts(connect: Connect) -> None:
    name = pick("OutOfSync", "Healthy", auto=False, skip=0)
    async with connect() as argocd:
        full = await argocd("diff_application", name=name)
        capped = await argocd("diff_application", name=name, max_lines_per_resource=3)
        clean = await argocd("diff_application",
                             name=pick("Synced", "Healthy", auto=False, skip=0))
    assert full.payload["resources"] == 9 and full.payload["differing"] == 2
    config = next(d for d in full.payload["diffs"] if d["resource"].startswith("ConfigMap/"))
    assert "-  LOG_LEVEL: debug" in config["diff"] and "+  LOG_LEVEL: info" in config["diff"]
    assert "omitted" not in full.payload
    assert all(len(d["diff"].splitlines()) == 3 for d in capped.payload["diffs"])
    assert capped.payload["omitted"]["lines"] == sum(d["omitted_lines"]
                                                     for d in capped.payload["diffs"]) > 0
    assert clean.payload["differing"] == 0 and clean.payload["diffs"] == []


async def test_rollback_of_an_auto_synced_app_plans_and_proves_then_runs(
        connect: Connect, writable: Settings) -> None:
    name = pick("Synced", "Degraded", auto=True, skip=0)
    async with connect(writable) as argocd:
        plan = await argocd("rollback_application", name=name)
        refused = await argocd("rollback_application", name=name, dry_run=False)
        done = await argocd("rollback_application", name=name, dry_run=False, approved=True,
                            expected_evidence=plan.payload["evidence"], follow_seconds=20)
        after = await argocd("get_application_history", name=name, page_size=1)
        app = await argocd("get_application", name=name)
    shown = plan.payload
    assert shown["auto_sync"] is True and "Auto-sync is on" in shown["warning"]
    assert shown["plan"][0] == "disable auto-sync"
    assert shown["target"]["revision"] != shown["current"]["revision"]
    assert shown["target"]["commit"]["message"] == COMMITS[shown["target"]["revision"]].message
    config = next(d for d in shown["diffs"] if d["resource"].startswith("ConfigMap/"))
    assert "-  DB_POOL_SIZE: '0'" in config["diff"] and "+  DB_POOL_SIZE: '20'" in config["diff"]
    assert shown["target"]["commit"]["message"] in shown["summary"]
    assert refused.is_error and refused.payload["kind"] == "ApprovalRequired"
    assert not done.is_error and done.payload["auto_sync_disabled"] is True
    assert done.payload["health"]["settled"] is True
    assert done.payload["health"]["health"] == "Healthy"
    assert after.payload["items"][0]["revision"] == shown["target"]["revision"]
    assert app.payload["auto_sync"] is False and app.payload["health"]["status"] == "Healthy"


async def test_a_rollback_whose_world_changed_after_approval_does_not_run(
        connect: Connect, writable: Settings, fleet: RunningSandbox) -> None:
    name = pick("Synced", "Degraded", auto=False, skip=0, shared=False)
    async with connect(writable) as argocd:
        plan = await argocd("rollback_application", name=name)
        hook(fleet, name, "deploy")  # a new commit lands while the person reads the plan
        stale = await argocd("rollback_application", name=name, dry_run=False, approved=True,
                             expected_evidence=plan.payload["evidence"])
        history = await argocd("get_application_history", name=name, page_size=1)
    assert stale.is_error and stale.payload["kind"] == "EvidenceChanged"
    assert "Nothing was rolled back" in stale.payload["error"]
    now = stale.payload["dry_run"]
    assert now["evidence"] != plan.payload["evidence"]
    assert now["current"]["revision"] != plan.payload["current"]["revision"]
    # Nothing ran: the newest deploy is the one that landed, not a rollback.
    assert history.payload["items"][0]["revision"] == now["current"]["revision"]


async def test_resource_actions_are_listed_planned_and_run_with_health_followed(
        connect: Connect, writable: Settings) -> None:
    name = pick("Synced", "Healthy", auto=True, skip=1)
    app = next(a for a in APPS if a.name == name)
    deployment = {"name": name, "kind": "Deployment", "resource_name": f"{app.team}-{app.service}"}
    async with connect(writable) as argocd:
        listed = await argocd("run_resource_action", **deployment)
        nothing = await argocd("run_resource_action", name=name, kind="Service",
                               resource_name=f"{app.team}-{app.service}")
        wrong = await argocd("run_resource_action", **deployment, action="delete")
        plan = await argocd("run_resource_action", **deployment, action="restart")
        unapproved = await argocd("run_resource_action", **deployment, action="restart",
                                  dry_run=False)
        ran = await argocd("run_resource_action", **deployment, action="restart",
                           dry_run=False, approved=True,
                           expected_evidence=plan.payload["evidence"], follow_seconds=20)
    assert [a["name"] for a in listed.payload["offered"]] == ["restart", "scale"]
    assert listed.payload["live"]["replicas"] == app.replicas and "evidence" not in \
        listed.payload
    assert nothing.payload["offered"] == [] and "offers no actions" in nothing.payload["next"]
    assert wrong.is_error and "restart, scale" in wrong.payload["suggestion"]
    assert plan.payload["evidence"] and "restart" in plan.payload["summary"]
    assert unapproved.is_error and unapproved.payload["kind"] == "ApprovalRequired"
    assert ran.payload["health"]["settled"] is True
    assert ran.payload["health"]["observed"][-1] == "Healthy"
    assert "Progressing" in ran.payload["health"]["observed"]


async def test_a_guessed_namespace_finds_the_one_resource_and_the_plan_names_its_own(
        connect: Connect, writable: Settings) -> None:
    name = pick("Synced", "Healthy", auto=True, skip=3)
    app = next(a for a in APPS if a.name == name)
    deployment = {"name": name, "kind": "Deployment", "resource_name": f"{app.team}-{app.service}",
                  "action": "restart"}
    async with connect(writable) as argocd:
        right = await argocd("run_resource_action", **deployment)
        guessed = await argocd("run_resource_action", **deployment, namespace=name)
        missing = await argocd("run_resource_action", **{**deployment, "resource_name": "nope"},
                               namespace=name)
    # The person approves the real resource: same resource, same evidence as the right call.
    assert guessed.payload["resource"] == right.payload["resource"]
    assert f"/{name}/" not in guessed.payload["resource"]
    assert guessed.payload["evidence"] == right.payload["evidence"]
    assert missing.is_error and "is not a live resource" in missing.payload["error"]


async def test_an_action_whose_resource_changed_after_approval_does_not_run(
        connect: Connect, writable: Settings, fleet: RunningSandbox) -> None:
    name = pick("Synced", "Healthy", auto=True, skip=2)
    app = next(a for a in APPS if a.name == name)
    scale = {"name": name, "kind": "Deployment", "resource_name": f"{app.team}-{app.service}",
             "action": "scale", "replicas": 6}
    async with connect(writable) as argocd:
        plan = await argocd("run_resource_action", **scale)
        hook(fleet, name, "deploy")  # the Deployment is rolled to a new image meanwhile
        stale = await argocd("run_resource_action", **scale, dry_run=False, approved=True,
                             expected_evidence=plan.payload["evidence"])
        live = await argocd("run_resource_action", name=name, kind="Deployment",
                            resource_name=scale["resource_name"])
    assert stale.is_error and stale.payload["kind"] == "EvidenceChanged"
    assert stale.payload["dry_run"]["evidence"] != plan.payload["evidence"]
    assert live.payload["live"]["replicas"] == app.replicas  # not scaled


async def test_what_changed_joins_deploys_and_events_in_time_order(connect: Connect) -> None:
    name = pick("Synced", "Degraded", auto=True, skip=1)
    async with connect() as argocd:
        answer = await argocd("get_application_changes", name=name)
    timeline = answer.payload["timeline"]
    assert [t["at"] for t in timeline] == sorted(t["at"] for t in timeline)
    deploys = [t for t in timeline if t["what"] == "deploy"]
    backoff = next(t for t in timeline if t.get("reason") == "BackOff")
    assert deploys[-1]["at"] < backoff["at"]  # the newest deploy came before the trouble
    assert deploys[-1]["commit"]["message"] == COMMITS[deploys[-1]["revision"]].message
    assert answer.payload["github"] == {
        "repo": "acme-corp/platform-deployments", "base": deploys[-2]["revision"],
        "head": deploys[-1]["revision"], "next": answer.payload["github"]["next"]}
    assert any(line.startswith(backoff["at"]) and "BackOff" in line
               for line in answer.payload["lines"])


async def test_following_health_of_an_unreachable_server_says_so() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with ArgoCDClient(url, token="a.b.c", retries=0, timeout=2) as client:
        followed = await follow_health(client, "any-app", project=None, limit_seconds=5)
    assert followed["settled"] is False and "check it with get_application" in followed["note"]
