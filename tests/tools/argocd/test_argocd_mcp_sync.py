"""sync_application: absent in read-only mode, dry run by default, real sync only if approved."""

from __future__ import annotations

import asyncio

import httpx
from argocd_harness import SCENARIOS, Connect

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.sandbox.argocd.server import RunningSandbox

FLEET = Fleet(SCENARIOS)
DRIFTED = [FLEET.app(i).name for i in range(len(FLEET))
           if FLEET.app(i).sync == "OutOfSync" and FLEET.app(i).health == "Healthy"]


async def test_read_only_by_default_hides_sync(connect: Connect) -> None:
    async with connect() as argocd:
        assert "sync_application" not in await argocd.names()
        result = await argocd.client.call_tool("sync_application", {"name": DRIFTED[0]})
    assert result.is_error  # unknown tool: nothing reaches Argo CD


async def test_dry_run_by_default_lists_what_would_change(connect: Connect,
                                                          writable: Settings) -> None:
    async with connect(writable) as argocd:
        answer = await argocd("sync_application", name=DRIFTED[0])
        after = await argocd("get_application", name=DRIFTED[0])
    assert not answer.is_error
    assert answer.payload["dry_run"] is True and answer.payload["changes"] == 2
    assert {r["kind"] for r in answer.payload["resources"]} == {"ConfigMap", "Deployment"}
    assert "approved=true" in answer.payload["next"]
    assert after.payload["sync"]["status"] == "OutOfSync"  # a dry run changes nothing


async def test_a_real_sync_needs_approval(connect: Connect, writable: Settings) -> None:
    async with connect(writable) as argocd:
        refused = await argocd("sync_application", name=DRIFTED[1], dry_run=False)
        still = await argocd("get_application", name=DRIFTED[1])
    assert refused.is_error and refused.payload["kind"] == "ApprovalRequired"
    assert "dry_run=true" in refused.payload["suggestion"]
    assert "operation_in_progress" not in still.payload


async def test_approved_sync_runs_and_a_second_one_is_refused_until_done(
        connect: Connect, writable: Settings) -> None:
    name = DRIFTED[2]
    async with connect(writable) as argocd:
        shown = (await argocd("sync_application", name=name)).payload["evidence"]
        started = await argocd("sync_application", name=name, dry_run=False, approved=True,
                               expected_evidence=shown)
        again = await argocd("sync_application", name=name, dry_run=False, approved=True,
                             expected_evidence=shown)
        running = await argocd("get_application", name=name, include_operation=True)
        for _ in range(50):
            done = await argocd("get_application", name=name)
            if "operation_in_progress" not in done.payload:
                break
            await asyncio.sleep(0.1)
    assert started.payload["operation"]["phase"] == "Running"
    assert again.is_error and "another operation is already in progress" in again.payload["error"]
    assert "Wait for the running operation" in again.payload["suggestion"]
    assert running.payload["operation_in_progress"] is True
    assert done.payload["sync"]["status"] == "Synced"
    assert done.payload["last_operation"]["phase"] == "Succeeded"


async def test_approval_without_the_dry_runs_evidence_syncs_nothing(
        connect: Connect, writable: Settings) -> None:
    async with connect(writable) as argocd:
        bare = await argocd("sync_application", name=DRIFTED[3], dry_run=False, approved=True)
        stale = await argocd("sync_application", name=DRIFTED[3], dry_run=False, approved=True,
                             expected_evidence="0123456789abcdef")
        still = await argocd("get_application", name=DRIFTED[3])
    assert bare.is_error and bare.payload["kind"] == "ApprovalRequired"
    assert stale.is_error and stale.payload["kind"] == "EvidenceChanged"
    assert "Nothing was synced" in stale.payload["error"]
    # The answer carries what is true now, for the person to approve again.
    assert stale.payload["dry_run"]["changes"] == 2 and stale.payload["dry_run"]["evidence"]
    assert "operation_in_progress" not in still.payload and still.payload["sync"]["status"] \
        == "OutOfSync"


async def test_evidence_is_the_same_for_the_same_state_and_names_what_changes(
        connect: Connect, writable: Settings) -> None:
    async with connect(writable) as argocd:
        first = await argocd("sync_application", name=DRIFTED[4])
        second = await argocd("sync_application", name=DRIFTED[4])
        other_revision = await argocd("sync_application", name=DRIFTED[4], revision="v9.9.9")
        pruning = await argocd("sync_application", name=DRIFTED[4], prune=True)
    assert first.payload["evidence"] == second.payload["evidence"]
    assert other_revision.payload["revision"] == "v9.9.9"
    assert other_revision.payload["evidence"] != first.payload["evidence"]
    assert pruning.payload["evidence"] != first.payload["evidence"]
    assert all(r["status"] == "OutOfSync" and r["action"] == "apply"
               for r in first.payload["resources"])


async def test_the_dry_run_shows_the_diff_and_its_evidence_covers_every_line(
        connect: Connect, writable: Settings, fleet: RunningSandbox) -> None:
    name = DRIFTED[5]
    async with connect(writable) as argocd:
        before = await argocd("sync_application", name=name)
        # Someone edits the live ConfigMap again: the same resources differ, other lines do.
        async with httpx.AsyncClient() as http:
            drift = await http.post(f"{fleet.url}/_sandbox/applications/{name}/drift", json={},
                                    headers={"Authorization": f"Bearer {fleet.token}"})
            drift.raise_for_status()
        after = await argocd("sync_application", name=name)
    assert before.payload["differing"] >= 1 and before.payload["diffs"]
    assert "```diff" in before.text and "\n-" in before.text and "\n+" in before.text
    assert after.payload["resources"] == before.payload["resources"]
    assert after.payload["diffs"] != before.payload["diffs"]
    assert after.payload["evidence"] != before.payload["evidence"]
