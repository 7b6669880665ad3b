"""The seed's search scenarios end to end: MCP client -> server -> HTTP -> sandbox fleet."""

from __future__ import annotations

import re
from dataclasses import replace

from argocd_harness import SCENARIOS, Connect

from pilothouse.config import Settings
from pilothouse.sandbox.argocd.fleet import Fleet


async def test_18_matches_fit_one_page(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("search_argocd_resources", query="kestrel")
        assert not answer.is_error
        assert answer.payload["pagination"] == {"page": 1, "page_size": 20, "total_items": 18,
                                                "total_pages": 1, "has_next": False,
                                                "has_prev": False}
        items = answer.payload["items"]
        assert len(items) == 18 and {i["type"] for i in items} == {"application"}
        assert all(i["matched"] == "labels" for i in items)
        summary = answer.payload["summary"]
        assert summary["by_type"] == {"applications": 18, "projects": 0, "applicationsets": 0,
                                      "clusters": 0}
        assert sum(summary["applications"]["health"].values()) == 18
        assert "warning" not in answer.payload


async def test_387_matches_are_paged_across_types(connect: Connect) -> None:
    async with connect() as argocd:
        first = await argocd("search_argocd_resources", query="osprey")
        assert first.payload["pagination"]["total_items"] == 387
        assert first.payload["pagination"]["total_pages"] == 20
        assert first.payload["pagination"]["has_next"] is True
        assert first.payload["summary"]["by_type"] == {"applications": 300, "projects": 40,
                                                       "applicationsets": 30, "clusters": 17}
        last = await argocd("search_argocd_resources", query="osprey", page=20)
        assert len(last.payload["items"]) == 387 - 19 * 20
        assert [i["type"] for i in last.payload["items"]] == ["cluster"] * 7
        assert last.payload["pagination"]["has_prev"] is True
        second = await argocd("search_argocd_resources", query="osprey", page=2)
        first_names = {i["name"] for i in first.payload["items"]}
        assert first_names.isdisjoint(i["name"] for i in second.payload["items"])


async def test_1200_matches_are_rejected_with_a_breakdown(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("search_argocd_resources", query="condor")
        assert answer.is_error
        payload = answer.payload
        assert set(payload) == {"error", "kind", "suggestion", "query", "total_matches",
                                "limit", "breakdown"}
        assert payload["kind"] == "SearchTooBroad"
        assert payload["total_matches"] == 1200 and payload["limit"] == 1000
        assert payload["query"] == "condor"
        assert payload["breakdown"] == {"applications": 400, "projects": 300,
                                        "applicationsets": 350, "clusters": 150}
        assert "1,200" in payload["error"] and "refine" in payload["suggestion"].lower()


async def test_over_the_warning_level_answers_with_a_warning(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("search_argocd_resources", query="heron")
        assert not answer.is_error
        assert answer.payload["pagination"]["total_items"] == 600
        assert "600" in answer.payload["warning"]
        assert len(answer.payload["items"]) == 20


async def test_limits_come_from_settings(settings: Settings, connect: Connect) -> None:
    async with connect(replace(settings, max_search_results=300,
                               warn_search_results=10)) as tools:
        rejected = await tools("search_argocd_resources", query="osprey")
        warned = await tools("search_argocd_resources", query="kestrel")
    assert rejected.is_error and rejected.payload["limit"] == 300
    assert warned.payload["warning"] and warned.payload["pagination"]["total_items"] == 18


async def test_resource_types_narrow_the_search(connect: Connect) -> None:
    async with connect() as argocd:
        answer = await argocd("search_argocd_resources", query="condor",
                              resource_types=["cluster", "projects"])
        assert not answer.is_error
        assert answer.payload["summary"]["by_type"] == {"clusters": 150, "projects": 300}
        assert answer.payload["items"][0]["type"] == "cluster"
        as_text = await argocd("search_argocd_resources", query="condor",
                               resource_types="applicationsets")
        assert as_text.payload["pagination"]["total_items"] == 350


async def test_regex_is_detected_and_case_sensitivity_is_honoured(connect: Connect) -> None:
    async with connect() as argocd:
        fleet = Fleet(SCENARIOS)
        pattern = r"^payments-(api|fraud)-production$"
        expected = {fleet.name_of(i) for i in range(len(fleet))
                    if re.search(pattern, fleet.name_of(i))}
        answer = await argocd("search_argocd_resources", query=pattern,
                              resource_types=["applications"])
        assert answer.payload["mode"] == "regex"
        assert {i["name"] for i in answer.payload["items"]} == expected == {
            "payments-api-production", "payments-fraud-production"}
        loud = await argocd("search_argocd_resources", query="KESTREL")
        assert loud.payload["pagination"]["total_items"] == 18
        strict = await argocd("search_argocd_resources", query="KESTREL", case_sensitive=True)
        assert strict.payload["pagination"]["total_items"] == 0 and strict.payload["hint"]


async def test_search_finds_repos_paths_clusters_and_descriptions(connect: Connect) -> None:
    async with connect() as argocd:
        fleet = Fleet(SCENARIOS)
        on_cluster = sum(1 for i in range(len(fleet))
                         if fleet.app(i).cluster_name == "gke-prod-europe-west4")
        answer = await argocd("search_argocd_resources", query="gke-prod-europe-west4",
                              resource_types=["applications", "clusters"], page_size=100)
        by_type = answer.payload["summary"]["by_type"]
        assert by_type == {"applications": on_cluster, "clusters": 1}
        described = await argocd("search_argocd_resources", query="Billing team services")
        assert [(i["type"], i["name"]) for i in described.payload["items"]] == [
            ("project", "billing")]


async def test_bad_search_arguments_get_clear_errors(connect: Connect) -> None:
    async with connect() as argocd:
        cases = {
            "not a valid regular expression": {"query": "payments-(api"},
            "resource_types": {"query": "x", "resource_types": ["pods"]},
            "query is empty": {"query": "  "},
            "page must be 1 or more": {"query": "kestrel", "page": 0},
            "page_size must be between 1 and 100": {"query": "kestrel", "page_size": 0},
        }
        for expected, arguments in cases.items():
            answer = await argocd("search_argocd_resources", **arguments)
            assert answer.is_error, arguments
            assert expected in answer.payload["error"]
            assert answer.payload["kind"] == "UserInputError" and answer.payload["suggestion"]
