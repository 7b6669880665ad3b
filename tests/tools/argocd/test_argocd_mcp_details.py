"""One application in depth, and the failures a user must understand, through the MCP client."""

from __future__ import annotations

import socket
from dataclasses import replace

from argocd_harness import SCENARIOS, Connect

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.fleet import Fleet

FLEET = Fleet(SCENARIOS)
DEGRADED = next(FLEET.app(i) for i in range(len(FLEET))
                if FLEET.app(i).health == "Degraded" and FLEET.app(i).sync == "OutOfSync"
                and FLEET.app(i).replicas > 1)


async def test_get_application_is_a_trimmed_summary(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("get_application", name=DEGRADED.name)
    payload = answer.payload
    assert payload["name"] == DEGRADED.name and payload["project"] == DEGRADED.project
    assert payload["health"]["status"] == "Degraded" and payload["sync"]["status"] == "OutOfSync"
    assert payload["resources"]["total"] == 9 and payload["resources"]["needing_attention"] >= 2
    assert payload["conditions"] == 1 and payload["last_operation"]["phase"] == "Failed"
    assert "resource_list" not in payload and "condition_list" not in payload
    # The full object is ~7-9 KB; the summary a fraction of it, with why it is unhealthy.
    assert len(answer.text) < 2_000


async def test_an_unhealthy_application_says_why_and_a_healthy_one_says_nothing_more(
        connect: Connect) -> None:
    healthy = next(FLEET.app(i) for i in range(len(FLEET)) if FLEET.app(i).health == "Healthy")
    async with connect() as argocd:
        broken = await argocd("get_application", name=DEGRADED.name)
        fine = await argocd("get_application", name=healthy.name)
        events = await argocd("get_application_events", name=DEGRADED.name, warnings_only=True)
    why = broken.payload["why_not_healthy"]
    # The resources that are not Healthy, with the message that says how...
    assert why["unhealthy_resources"] and all(
        r["health"] != "Healthy" and r["message"] for r in why["unhealthy_resources"])
    # ...and the same warnings the events tool reports, newest first.
    assert [(e["reason"], e["object"]) for e in why["warning_events"]] == [
        (e["reason"], e["object"]) for e in events.payload["events"]][:5]
    assert "why not healthy" in broken.text and why["warning_events"][0]["message"] in broken.text
    assert "why_not_healthy" not in fine.payload
    # A count of Kubernetes Secrets is shown as a count, not masked as a credential.
    assert "Secret 1" in broken.text and "[REDACTED]" not in broken.text


async def test_get_application_adds_details_on_request(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("get_application", name=DEGRADED.name, include_resources=True,
                              include_conditions=True, include_operation=True)
    payload = answer.payload
    first = payload["resource_list"][0]
    assert first["sync"] == "OutOfSync" or first.get("health") not in (None, "Healthy")
    assert payload["condition_list"][0]["type"] == "SyncError"
    assert payload["last_operation"]["message"].startswith("one or more objects failed")
    assert payload["last_operation"]["results"] == 9


async def test_a_wrong_project_on_a_read_is_a_hint_not_a_wall(connect: Connect) -> None:
    app = DEGRADED
    async with connect() as argocd:
        right = await argocd("get_application", name=app.name, project=app.project)
        wrong = await argocd("get_application", name=app.name, project="made-up-project")
        history = await argocd("get_application_history", name=app.name,
                               project="made-up-project")
        missing = await argocd("get_application", name="nope", project="payments")
    assert not right.is_error and "project_note" not in right.payload
    assert not wrong.is_error and wrong.payload["name"] == app.name
    assert wrong.text.startswith(f"Note: application '{app.name}' is not in project "
                                 f"'made-up-project'. It is in project '{app.project}'.")
    assert not history.is_error and "not in project 'made-up-project'" in history.text
    # An app that does not exist anywhere is still an error that says what to do.
    assert missing.is_error and "was not found" in missing.payload["error"]


async def test_unknown_app_gets_a_message_that_says_what_to_do(connect: Connect) -> None:
    async with connect() as argocd:
        for tool in ("get_application", "get_application_resource_tree",
                     "get_application_events", "get_application_logs"):
            answer = await argocd(tool, name="payments-api-prodution")
            assert answer.is_error
            assert answer.payload == {
                "error": "Application 'payments-api-prodution' was not found, or this account "
                         "is not permitted to see it.",
                "kind": "NotFound",
                "suggestion": "Did you mean 'payments-api-production'? If none is the one, "
                              "check the exact name with search_argocd_resources or "
                              "list_applications."}
        with_project = await argocd("get_application", name="nope", project="payments")
        bad_name = await argocd("get_application", name="../../api/v1/clusters")
    assert with_project.is_error and "was not found" in with_project.payload["error"]
    assert bad_name.is_error and "not a valid application name" in bad_name.payload["error"]


async def test_resource_tree_counts_and_lists_the_unhealthy(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("get_application_resource_tree", name=DEGRADED.name)
    payload = answer.payload
    assert payload["by_kind"]["Pod"] == DEGRADED.replicas
    assert payload["unhealthy_total"] == 2  # the Deployment and its crash-looping pod
    assert {n["kind"] for n in payload["unhealthy"]} == {"Deployment", "Pod"}
    pod = next(n for n in payload["unhealthy"] if n["kind"] == "Pod")
    assert pod["reason"] == "CrashLoopBackOff" and "back-off" in pod["message"]


async def test_events_newest_first_and_warnings_only(connect: Connect) -> None:
    async with connect() as argocd:
        everything = await argocd("get_application_events", name=DEGRADED.name, limit=3)
        warnings = await argocd("get_application_events", name=DEGRADED.name,
                                warnings_only=True)
    assert len(everything.payload["events"]) == 3
    stamps = [e["last_seen"] for e in everything.payload["events"]]
    assert stamps == sorted(stamps, reverse=True)
    assert everything.payload["total"] == 2 + 2 * DEGRADED.replicas + 1
    assert {e["reason"] for e in warnings.payload["events"]} == {"BackOff", "Unhealthy"}


async def test_logs_tail_is_capped_and_errors_are_visible(connect: Connect) -> None:
    async with connect() as argocd:
        tail = await argocd("get_application_logs", name=DEGRADED.name, tail_lines=5)
        huge = await argocd("get_application_logs", name=DEGRADED.name, tail_lines=100_000)
        none = await argocd("get_application_logs", name=DEGRADED.name, tail_lines=0)
    assert tail.payload["returned"] == 5
    assert any("ERROR" in line or "FATAL" in line for line in tail.payload["lines"])
    assert len(tail.payload["pods"]) == DEGRADED.replicas
    assert "reduced to the maximum of 500" in huge.payload["notes"][0]
    assert huge.payload["returned"] <= 500
    assert none.is_error and "tail_lines" in none.payload["error"]


async def test_dead_argocd_is_a_clear_error_not_a_stack_trace(settings: Settings,
                                                              connect: Connect) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, never listening
        async with connect(replace(settings, argocd_url=dead)) as argocd:
            answer = await argocd("list_applications")
    assert answer.is_error
    assert answer.payload["error"] == f"Argo CD is unreachable at {dead} (connection failed)."
    assert "ARGOCD_URL" in answer.payload["suggestion"]
    assert "Traceback" not in answer.text


async def test_a_bad_token_says_it_is_missing_or_expired(settings: Settings,
                                                         connect: Connect) -> None:
    forged = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtYWxsb3J5In0.Zm9yZ2VkLXNpZ25hdHVyZQ"
    async with connect(replace(settings, argocd_token=forged)) as argocd:
        answer = await argocd("list_applications")
    assert answer.is_error and answer.payload["kind"] == "ConfigurationError"
    assert "rejected the credentials" in answer.payload["error"]
    assert "missing or expired" in answer.payload["suggestion"]
    assert forged not in answer.text


async def test_no_url_configured_is_explained(settings: Settings, connect: Connect) -> None:
    async with connect(replace(settings, argocd_url=None)) as argocd:
        answer = await argocd("search_argocd_resources", query="kestrel")
    assert answer.payload["error"] == "ARGOCD_URL is not set."
    assert "pilothouse sandbox argocd" in answer.payload["suggestion"]
