"""Paginated inventories through the MCP client: the seed's "list all 819 apps" and friends."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from argocd_harness import SCENARIOS, Connect

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.fleet import Fleet
from pilothouse.tools.argocd.server import READ_TOOLS, WRITE_TOOLS

FLEET = Fleet(SCENARIOS)
APPS = [FLEET.app(i) for i in range(len(FLEET))]


async def test_list_all_819_apps_is_page_1_of_41_with_a_summary_of_all(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("list_applications")
    assert not answer.is_error
    assert answer.payload["pagination"] == {"page": 1, "page_size": 20, "total_items": 819,
                                            "total_pages": 41, "has_next": True,
                                            "has_prev": False}
    assert answer.payload["summary"]["health"] == dict(Counter(a.health for a in APPS))
    assert answer.payload["summary"]["sync"] == dict(Counter(a.sync for a in APPS))
    names = [row["name"] for row in answer.payload["items"]]
    assert names == sorted(a.name for a in APPS)[:20]
    row = answer.payload["items"][0]
    assert set(row) == {"name", "project", "sync", "health", "repo", "path", "cluster",
                        "namespace"}
    # The seed estimated ~82K tokens for the unpaged list; a page is a few thousand characters.
    assert len(answer.text) < 7_000


async def test_the_last_page_and_a_page_past_the_end(connect: Connect) -> None:
    async with connect() as argocd:
        last = await argocd("list_applications", page=41)
        beyond = await argocd("list_applications", page=42)
    assert len(last.payload["items"]) == 819 - 40 * 20
    assert last.payload["pagination"]["has_next"] is False
    assert last.payload["items"][-1]["name"] == max(a.name for a in APPS)
    assert beyond.payload["items"] == [] and "past the last page" in beyond.payload["notes"][0]


async def test_page_size_500_is_clamped_to_100_and_says_so(settings: Settings,
                                                           connect: Connect) -> None:
    # A generous output cap so the 100 rows are not trimmed for size (tested separately).
    async with connect(replace(settings, max_tool_output_size=60_000)) as argocd:
        answer = await argocd("list_applications", page_size=500)
    assert answer.payload["pagination"]["page_size"] == 100
    assert answer.payload["pagination"]["total_pages"] == 9
    assert len(answer.payload["items"]) == 100
    assert "500" in answer.payload["notes"][0] and "100" in answer.payload["notes"][0]


async def test_answers_never_exceed_the_tool_output_size(settings: Settings,
                                                         connect: Connect) -> None:
    async with connect(replace(settings, max_tool_output_size=4_000)) as argocd:
        answer = await argocd("list_applications", page_size=100)
    assert len(answer.text) <= 4_000
    truncated = answer.payload["truncated"]
    assert truncated["field"] == "items" and truncated["total"] == 100
    assert 0 < truncated["shown"] == len(answer.payload["items"]) < 100
    assert f"page_size={truncated['shown']}" in truncated["note"]
    assert answer.payload["pagination"]["total_items"] == 819


async def test_filters_are_applied_and_counted(connect: Connect) -> None:
    async with connect() as argocd:
        degraded = await argocd("list_applications", health_status="degraded", page=2)
        drifted = await argocd("list_applications", sync_status="OutOfSync", project="payments")
        production = await argocd("list_applications", selector="env=production")
    expected = sorted(a.name for a in APPS if a.health == "Degraded")
    assert degraded.payload["pagination"]["total_items"] == len(expected)
    assert [r["name"] for r in degraded.payload["items"]] == expected[20:40]
    assert degraded.payload["filters"] == {"health_status": "Degraded"}
    assert drifted.payload["pagination"]["total_items"] == sum(
        1 for a in APPS if a.sync == "OutOfSync" and a.project == "payments")
    assert production.payload["pagination"]["total_items"] == 273


async def test_a_project_that_does_not_exist_is_matched_as_text_and_says_so(
        connect: Connect) -> None:
    # "production" is an environment, not a project: the answer is the apps it names.
    async with connect() as argocd:
        listed = await argocd("list_applications", project="production",
                              health_status="Degraded", page_size=5)
        searched = await argocd("search_argocd_resources", query="production",
                                resource_types="applications")
        nothing = await argocd("list_applications", project="no-such-team-anywhere")
    degraded = searched.payload["summary"]["applications"]["health"]["Degraded"]
    assert degraded > 5
    assert listed.payload["pagination"]["total_items"] == degraded
    assert listed.payload["filters"] == {"matching": "production", "health_status": "Degraded"}
    assert {r["health"] for r in listed.payload["items"]} == {"Degraded"}
    assert listed.text.startswith(f"PAGE 1 of {-(-degraded // 5)} ({degraded} applications "
                                  "where matching=production, health_status=Degraded).")
    assert "No project is named 'production'" in listed.text
    assert nothing.payload["pagination"]["total_items"] == 0
    assert "search_argocd_resources(query='no-such-team-anywhere')" in nothing.text


async def test_an_application_name_as_project_lists_that_application_alone(
        connect: Connect) -> None:
    app = APPS[3]
    async with connect() as argocd:
        answer = await argocd("list_applications", project=app.name)
    assert not answer.is_error
    assert [(r["name"], r["sync"], r["health"]) for r in answer.payload["items"]] == [
        (app.name, app.sync, app.health)]
    assert answer.payload["filters"] == {"name": app.name}
    assert f"{app.name!r} is an application, not a project" in answer.text
    assert "get_application_history" in answer.text


async def test_bad_list_arguments_get_clear_errors(connect: Connect) -> None:
    async with connect() as argocd:
        page0 = await argocd("list_applications", page=0)
        status = await argocd("list_applications", health_status="Broken")
        selector = await argocd("list_applications", selector="env in (a")
    assert page0.is_error and page0.payload["error"] == "page must be 1 or more, not 0."
    # The schema's enum refuses it, naming the field and the statuses Argo CD knows.
    assert status.is_error and "health_status" in status.payload["error"]
    assert "'Healthy'" in status.payload["error"] and "'Degraded'" in status.payload["error"]
    assert selector.is_error and selector.payload["error"].startswith("Invalid label selector")
    assert "env=production" in selector.payload["suggestion"]


async def test_projects_applicationsets_and_clusters_are_paged(connect: Connect) -> None:
    async with connect() as argocd:
        projects = await argocd("list_projects", page=2, page_size=50)
        sets = await argocd("list_applicationsets", project="payments")
        clusters = await argocd("list_clusters", page_size=100)
    assert projects.payload["pagination"]["total_items"] == 320
    assert len(projects.payload["items"]) == 50 and projects.payload["pagination"]["has_prev"]
    assert sets.payload["pagination"]["total_items"] == 6
    assert {r["project"] for r in sets.payload["items"]} == {"payments"}
    assert clusters.payload["pagination"] == {"page": 1, "page_size": 100, "total_items": 161,
                                              "total_pages": 2, "has_next": True,
                                              "has_prev": False}
    assert sum(clusters.payload["summary"]["connection"].values()) == 161


async def test_tool_names_are_exact_and_descriptions_short(connect: Connect,
                                                           writable: Settings) -> None:
    async with connect() as read_only:
        assert sorted(await read_only.names()) == sorted(READ_TOOLS)
        listed = (await read_only.client.list_tools()).tools
    async with connect(writable) as write:
        assert sorted(await write.names()) == sorted(READ_TOOLS + WRITE_TOOLS)
    assert all(len(tool.description or "") <= 160 for tool in listed)
    # Generated titles are stripped: they repeat parameter names at the model's expense.
    assert all("title" not in str(tool.input_schema.get("properties")) for tool in listed)


async def test_no_tool_output_or_error_contains_the_token(connect: Connect,
                                                          settings: Settings) -> None:
    token = settings.argocd_token or ""
    async with connect() as argocd:
        answers = [
            await argocd("list_applications"),
            await argocd("search_argocd_resources", query="condor"),
            await argocd("get_application", name="nope"),
            await argocd("get_application_logs", name="payments-api-production"),
        ]
    assert token and all(token not in a.text for a in answers)
